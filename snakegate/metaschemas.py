"""Access to the meta-schemas shipped in `schemas/` (package `snakegate.schemas`), and the artifact types
in force: the built-in ones and those the loaded registry adds.

A process serves one registry at a time: loading a registry (snakegate.registry.workflows.Registry.load)
hands its own types, already validated, to `use_registry_types`, which replaces the previous registry's.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from jsonschema import Draft202012Validator


@cache
def load(name: str) -> dict:
    """Load `schemas/<name>` (e.g. 'workflow.schema.json')."""
    return json.loads(resources.files("snakegate.schemas").joinpath(name).read_text(encoding="utf-8"))


@cache
def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(load(name), format_checker=Draft202012Validator.FORMAT_CHECKER)


def builtin_artifact_types() -> dict[str, dict]:
    return load("artifact-types.json")["types"]


_in_force: dict[str, dict] | None = None  # None: the built-in types only


def artifact_types() -> dict[str, dict]:
    """Every artifact type in force: the built-in ones, then the loaded registry's own."""
    return _in_force if _in_force is not None else builtin_artifact_types()


def use_registry_types(types: dict[str, dict]) -> None:
    """Add `types` (a registry's own, validated: snakegate.registry.types) to the built-in ones, replacing
    whatever registry's types were in force. A built-in name is never replaced."""
    global _in_force
    builtin = builtin_artifact_types()
    _in_force = {**builtin, **{k: v for k, v in types.items() if k not in builtin}} if types else None
