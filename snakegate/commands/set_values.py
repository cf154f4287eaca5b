"""`--set NAME=VALUE` read as the contract types NAME: `--set feature_columns=species,sex` for a param the
contract declares a list gives the list [species, sex], as a person typing at a shell means it.

Pure: a JSON Schema, a dotted name and the value YAML made of the text in, the value to use out. Only text
given for a list becomes a list; anything else is left as it is, for the gate to judge.
"""

from __future__ import annotations

from typing import Any

import yaml


def param_schema(schema: dict | None, parts: list[str]) -> dict | None:
    """The contract's node for a dotted param name (`a.b`, or a plan's `step.param`), None when not declared."""
    node = schema
    for part in parts:
        if not isinstance(node, dict):
            return None
        node = (node.get("properties") or {}).get(part)
    return node if isinstance(node, dict) else None


def wants_list(node: dict | None) -> bool:
    kinds = node.get("type") if isinstance(node, dict) else None
    return kinds == "array" or (isinstance(kinds, list) and "array" in kinds and "string" not in kinds)


def as_contract_says(schema: dict | None, parts: list[str], value: Any) -> Any:
    """`value`, or — when it is text and the contract wants a list there — the list of its comma-separated
    items (each item read as YAML unless the list holds text, so `1,2` is [1, 2] for a list of numbers)."""
    node = param_schema(schema, parts)
    if not isinstance(value, str) or not wants_list(node):
        return value
    items = [item.strip() for item in value.split(",")]
    if not all(items):
        return value  # `a,,b` or a trailing comma: not a list the person meant; the gate says what is wrong
    each = node.get("items") if isinstance(node.get("items"), dict) else {}
    if each.get("type") == "string":
        return items  # a list of text: `no` or `1` is the text itself, as the contract says
    try:
        return [yaml.safe_load(item) for item in items]
    except yaml.YAMLError:
        return value
