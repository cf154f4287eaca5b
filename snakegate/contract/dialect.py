"""The contract dialect: JSON Schema 2020-12 plus x-artifact, x-column-of, x-sensitive, x-builtins.

Pure functions only: fill defaults, turn JSON Schema errors into `GateError`s
with a fix, walk a params object to find the annotated values, and prove a
workflow's schema.json is a well-formed contract. No files are read here.
"""

from __future__ import annotations

import copy
import difflib
from dataclasses import dataclass
from typing import Any, Iterator

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from snakegate.contract import artifacts
from snakegate import metaschemas
from snakegate.models import GateError

RANGE_KEYWORDS = {
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties", "uniqueItems",
}


def format_path(parts) -> str:
    """('params', 'columns', 1) -> 'params.columns[1]'."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def did_you_mean(value: Any, choices) -> str | None:
    if not isinstance(value, str):
        return None
    strings = [str(c) for c in choices]
    close = difflib.get_close_matches(value, strings, n=1, cutoff=0.6)
    return close[0] if close else None


def fill_defaults(schema: dict, params: dict) -> dict:
    """A deep copy of `params` with every missing property that has a default filled in,
    recursively into nested objects; the order of the schema's properties is kept."""
    out = copy.deepcopy(params)
    _fill(schema, out)
    return out


def _fill(schema: dict, value: Any) -> None:
    if not isinstance(value, dict) or not isinstance(schema, dict):
        return
    for name, sub in (schema.get("properties") or {}).items():
        if not isinstance(sub, dict):
            continue
        if name not in value and "default" in sub:
            value[name] = copy.deepcopy(sub["default"])
        if name in value:
            _fill(sub, value[name])


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


SHOWN_CHARS = 80  # a refusal quotes at most this much of a value: a 1,000-sample list is not echoed whole


def shown_value(value: Any, limit: int = SHOWN_CHARS, as_text=repr) -> str:
    """`value` as a refusal quotes it (`as_text`, repr by default): whole when short, else its size and a cut
    beginning."""
    text = as_text(value)
    if len(text) <= limit:
        return text
    if isinstance(value, (list, dict)):
        kind = "list" if isinstance(value, list) else "object"
        what = "item(s)" if isinstance(value, list) else "entries"
        return f"a {kind} of {len(value)} {what}: {text[:limit - 1]}…"
    return f"{text[:limit - 1]}… ({len(text)} characters)"


# what to write for a JSON-Schema type, in YAML (a run config's syntax), with an example
TYPE_HINTS = {"array": "a list, e.g. [a, b]", "number": "a number, e.g. 0.5", "integer": "a whole number, e.g. 3",
              "boolean": "true or false", "object": "a mapping, e.g. {key: value}", "null": "null",
              "string": 'text, quoted when it would read as a number or true/false, e.g. "42"'}


def type_hint(want: str | list, got: Any) -> str:
    """'write a list, e.g. [species, sex]': the type(s) a value must have, in words with an example; a list
    wanted where comma-separated text was given shows that text as a list."""
    wanted = [want] if isinstance(want, str) else list(want)
    words = [TYPE_HINTS.get(t, f"a {t}") for t in wanted]
    if "array" in wanted and isinstance(got, str) and got.strip():
        items = [part.strip() for part in got.split(",") if part.strip()]
        words[wanted.index("array")] = f"a list, e.g. [{', '.join(items)}]"
    return "write " + ", or ".join(words)


def _describe_bound(err: ValidationError) -> str:
    v, s = err.validator, err.validator_value
    return {
        "minimum": f"at least {s}", "maximum": f"at most {s}",
        "exclusiveMinimum": f"greater than {s}", "exclusiveMaximum": f"less than {s}",
        "multipleOf": f"a multiple of {s}", "minItems": f"a list of at least {s} item(s)",
        "maxItems": f"a list of at most {s} item(s)", "minLength": f"at least {s} character(s) long",
        "maxLength": f"at most {s} character(s) long", "minProperties": f"an object with at least {s} entries",
        "maxProperties": f"an object with at most {s} entries", "uniqueItems": "a list without repeated items",
    }.get(v, f"within {v} {s}")


def _error_from(err: ValidationError, root: tuple) -> list[GateError]:
    path = format_path(root + tuple(err.absolute_path))
    field = path
    v = err.validator
    if v == "required":
        missing = [r for r in err.validator_value if isinstance(err.instance, dict) and r not in err.instance]
        out = []
        for name in missing:
            sub = (err.schema.get("properties") or {}).get(name, {})
            desc = sub.get("description", "")
            p = format_path(root + tuple(err.absolute_path) + (name,))
            out.append(GateError(path=p, code="required", message=f"`{p}` is required but missing" + (f" ({desc})" if desc else ""),
                                 hint=f"add `{name}: <value>` under params"))
        return out
    if v == "additionalProperties" and isinstance(err.instance, dict):
        allowed = list((err.schema.get("properties") or {}).keys())
        out = []
        for extra in sorted(set(err.instance) - set(allowed)):
            p = format_path(root + tuple(err.absolute_path) + (extra,))
            close = did_you_mean(extra, allowed)
            hint = f"did you mean `{close}`?" if close else f"allowed parameters: {', '.join(allowed)}"
            out.append(GateError(path=p, code="unknown_param", message=f"`{p}` is not a parameter of this workflow",
                                 hint=hint, choices=allowed))
        return out
    if v in ("enum", "const"):
        choices = list(err.validator_value) if v == "enum" else [err.validator_value]
        close = did_you_mean(err.instance, choices)
        hint = (f"did you mean `{close}`?" if close else f"use one of: {', '.join(map(str, choices))}")
        return [GateError(path=field, code="enum",
                          message=f"`{field}` must be one of {', '.join(map(str, choices))} (got `{shown_value(err.instance, as_text=str)}`)",
                          hint=hint, choices=choices)]
    if v == "type":
        want = err.validator_value if isinstance(err.validator_value, str) else " or ".join(err.validator_value)
        return [GateError(path=field, code="type",
                          message=f"`{field}` must be of type {want} (got {_type_name(err.instance)} `{shown_value(err.instance)}`)",
                          hint=type_hint(err.validator_value, err.instance))]
    if v in RANGE_KEYWORDS:
        bound = _describe_bound(err)
        return [GateError(path=field, code="range", message=f"`{field}` must be {bound} (got `{shown_value(err.instance)}`)",
                          hint=f"choose a value that is {bound}")]
    if v in ("pattern", "format"):
        what = f"match the pattern {err.validator_value}" if v == "pattern" else f"be a valid {err.validator_value}"
        return [GateError(path=field, code="pattern", message=f"`{field}` must {what} (got `{shown_value(err.instance)}`)",
                          hint="correct the value's form")]
    if v == "propertyNames":
        return [GateError(path=field, code="pattern", message=f"`{field}` has a key that is not allowed: {err.message}",
                          hint="rename the key")]
    # anyOf / oneOf / not / if-then: report as a type problem with jsonschema's own sentence
    # (jsonschema's sentence quotes the whole value first: a long one is cut as everywhere else)
    sentence = err.message
    whole = repr(err.instance)
    if len(whole) > SHOWN_CHARS and sentence.startswith(whole):
        sentence = shown_value(err.instance) + sentence[len(whole):]
    return [GateError(path=field, code="type", message=f"`{field}`: {sentence}", hint=None)]


def schema_errors(schema: dict, params: Any, root: tuple = ("params",)) -> list[GateError]:
    """Every way `params` fails `schema`, as GateErrors sorted by path."""
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    out: list[GateError] = []
    for err in validator.iter_errors(params):
        out.extend(_error_from(err, root))
    out.sort(key=lambda e: (e.path, e.code))
    return out


@dataclass(frozen=True)
class Node:
    """A value inside params that carries a snakegate annotation."""

    parts: tuple  # path parts below params, e.g. ('columns', 1)
    schema: dict
    value: Any
    is_key: bool = False  # the value is an object key (propertyNames)

    @property
    def path(self) -> str:
        return format_path(("params",) + self.parts)

    @property
    def top(self) -> str:
        return self.parts[0]


def iter_nodes(schema: dict, value: Any, parts: tuple = ()) -> Iterator[Node]:
    """Every (sub)value of `value` with its subschema, depth first, in value order."""
    if not isinstance(schema, dict):
        return
    if parts:
        yield Node(parts, schema, value)
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        names = schema.get("propertyNames")
        for key, sub_value in value.items():
            if isinstance(names, dict):
                yield Node(parts + (key,), names, key, is_key=True)
            sub = props.get(key, extra if isinstance(extra, dict) else None)
            if isinstance(sub, dict):
                yield from iter_nodes(sub, sub_value, parts + (key,))
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                yield from iter_nodes(items, item, parts + (i,))


def is_builtin(node: Node) -> bool:
    return isinstance(node.value, str) and node.value in (node.schema.get("x-builtins") or [])


def iter_column_nodes(schema: dict, params: dict) -> Iterator[tuple[Node, str]]:
    """(node, referenced param) for every value that must be a column; arrays expand to items."""
    for node in iter_nodes(schema, params):
        ref = node.schema.get("x-column-of")
        if not ref:
            continue
        if isinstance(node.value, list):
            for i, item in enumerate(node.value):
                if isinstance(item, str):
                    yield Node(node.parts + (i,), node.schema, item), ref
        elif isinstance(node.value, str):
            yield node, ref


def _walk_schema(schema: Any, pointer: str = "") -> Iterator[tuple[str, dict]]:
    if not isinstance(schema, dict):
        return
    yield pointer, schema
    for key in ("properties", "$defs"):
        for name, sub in (schema.get(key) or {}).items():
            yield from _walk_schema(sub, f"{pointer}/{key}/{name}")
    for key in ("items", "additionalProperties", "propertyNames"):
        if isinstance(schema.get(key), dict):
            yield from _walk_schema(schema[key], f"{pointer}/{key}")
    for key in ("anyOf", "oneOf", "allOf"):
        for i, sub in enumerate(schema.get(key) or []):
            yield from _walk_schema(sub, f"{pointer}/{key}/{i}")


def _sheet_problems(pointer: str, sub: dict, known: set) -> list[tuple[str, str]]:
    """x-sample-sheet sits on a table artifact and is itself a JSON Schema whose path columns have known types."""
    out = []
    sheet = sub["x-sample-sheet"]
    if not artifacts.is_table(sub.get("x-artifact", "")):
        out.append(("schema_invalid", f"{pointer}: x-sample-sheet needs x-artifact csv-table or tsv-table on the same param"))
    if not isinstance(sheet, dict):
        return out + [("schema_invalid", f"{pointer}: x-sample-sheet must be a JSON Schema object for one row")]
    try:
        Draft202012Validator.check_schema({k: v for k, v in sheet.items() if k != "$schema"})
    except Exception as exc:  # SchemaError
        out.append(("schema_invalid", f"{pointer}/x-sample-sheet: not a valid JSON Schema: {getattr(exc, 'message', exc)}"))
    for column, col in (sheet.get("properties") or {}).items():
        art = col.get("x-artifact") if isinstance(col, dict) else None
        if art is not None and art not in known:
            out.append(("schema_invalid", f"{pointer}/x-sample-sheet/properties/{column}: x-artifact {art!r} is not a "
                                          f"known artifact type (known: {', '.join(sorted(known))})"))
    return out


def contract_problems(schema: dict) -> list[tuple[str, str]]:
    """(code, sentence) for each way a schema.json fails to be a well-formed contract (pure).
    Codes: schema_invalid, default_invalid."""
    problems: list[tuple[str, str]] = []
    try:
        Draft202012Validator.check_schema(schema)
    except Exception as exc:  # SchemaError: the schema itself is not JSON Schema 2020-12
        problems.append(("schema_invalid", f"not a valid JSON Schema 2020-12: {getattr(exc, 'message', exc)}"))
        return problems
    for err in metaschemas.validator("contract.schema.json").iter_errors(schema):
        where = "/" + "/".join(str(p) for p in err.absolute_path)
        problems.append(("schema_invalid", f"{where}: {err.message}"))
    known = set(metaschemas.artifact_types())
    top = schema.get("properties") or {}
    for pointer, sub in _walk_schema(schema):
        art = sub.get("x-artifact")
        if art is not None and art not in known:
            problems.append(("schema_invalid", f"{pointer or '/'}: x-artifact {art!r} is not a known artifact type "
                                               f"(known: {', '.join(sorted(known))})"))
        ref = sub.get("x-column-of")
        if ref is not None:
            target = top.get(ref)
            if not isinstance(target, dict) or "x-artifact" not in target:
                problems.append(("schema_invalid", f"{pointer}: x-column-of {ref!r} must name a top-level param "
                                                   "that is an x-artifact table"))
            elif not artifacts.is_table(target["x-artifact"]):
                problems.append(("schema_invalid", f"{pointer}: x-column-of {ref!r} points to a "
                                                   f"{target['x-artifact']}, which has no columns"))
        if "x-sample-sheet" in sub:
            problems.extend(_sheet_problems(pointer, sub, known))
        if "x-sensitive" in sub and not isinstance(sub["x-sensitive"], bool):
            problems.append(("schema_invalid", f"{pointer}: x-sensitive must be true or false"))
        if "default" in sub:
            sub_schema = {k: v for k, v in sub.items() if k != "default"}
            for err in Draft202012Validator(sub_schema).iter_errors(sub["default"]):
                problems.append(("default_invalid", f"{pointer}: default {sub['default']!r} does not satisfy its own "
                                                    f"schema: {err.message}"))
    return problems
