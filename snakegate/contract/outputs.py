"""Declared outputs: path patterns expanded from the params, and what each output declares it will hold.

`outputs.<name>.path` may hold `{param}` placeholders: `{samples}` expands over
a list param's items, a mapping param's keys, or a scalar's value; `{a.b}`
names a nested param; `{sheet.column}` (a sample-sheet param and one of its
columns) expands over that column's values. Several placeholders give their
product, in the params' order. Used by the check (every expanded path is
produced), `snakegate test` (each is compared) and the run (each is a target).
An output whose `when` does not hold for the params is left out of all three.

What a consumer may rely on (`columns` of a table, `keys` of a JSON file,
`when` it exists) is computed here by pure functions of the declaration and
the params: `declared_columns`, `declared_keys`, `produced_when`, plus
`missing_keys` and `column_difference` to hold a real file against them. They
read no file: a table's header comes from the caller's `header_of` (a file's
header for `snakegate test`, an upstream step's declared columns for a plan).
Only `expand` reads a file, a sample sheet; nothing is written.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any, Callable

PLACEHOLDER = re.compile(r"\{([A-Za-z_][\w.]*)\}")


class PatternError(ValueError):
    """A placeholder names no param (or no column); the message says which."""


def placeholders(pattern: str) -> list[str]:
    return PLACEHOLDER.findall(pattern)


def _values(name: str, params: dict, schema: dict | None) -> list[str]:
    parts = name.split(".")
    node: Any = params
    props = (schema or {}).get("properties") or {}
    for i, part in enumerate(parts):
        sub = props.get(part) if isinstance(props, dict) else None
        if isinstance(sub, dict) and "x-sample-sheet" in sub and i == len(parts) - 2 and isinstance(node, dict):
            return _column(node.get(part), parts[-1], sub)
        if not isinstance(node, dict) or part not in node:
            raise PatternError(f"`{{{name}}}` names no param")
        node = node[part]
        props = (sub or {}).get("properties") or {}
    if isinstance(node, dict):
        return [str(k) for k in node]
    if isinstance(node, list):
        return [str(v) for v in node]
    return [str(node)]


def _column(sheet: Any, column: str, schema: dict) -> list[str]:
    from snakegate.contract import artifacts
    from snakegate.contract.sheets import read_rows

    if not isinstance(sheet, str):
        raise PatternError("the sample sheet param has no file")
    text = Path(sheet).read_text(encoding="utf-8")
    header, rows = read_rows(text, artifacts.delimiter(schema["x-artifact"]))
    if column not in header:
        raise PatternError(f"the sample sheet has no column `{column}`")
    return list(dict.fromkeys(cells.get(column, "") for _, cells in rows))


def expand(pattern: str, params: dict, schema: dict | None = None) -> list[str]:
    """Every concrete path of one pattern, in a stable order (a pattern without placeholders is itself)."""
    names = list(dict.fromkeys(placeholders(pattern)))
    if not names:
        return [pattern]
    choices = [_values(n, params, schema) for n in names]
    out = []
    for combo in itertools.product(*choices):
        values = dict(zip(names, combo))
        out.append(PLACEHOLDER.sub(lambda m: values[m.group(1)], pattern))
    return list(dict.fromkeys(out))


def expand_outputs(outputs: dict, params: dict, schema: dict | None = None) -> list[tuple[str, str, str]]:
    """(output name, concrete path, type) for every declared output these params produce (its `when`
    holds); raises PatternError."""
    out = []
    for name, decl in outputs.items():
        if not produced_when(decl, params):
            continue
        path = decl["path"] if isinstance(decl, dict) else decl.path
        type_name = decl["type"] if isinstance(decl, dict) else decl.type
        for concrete in expand(path, params, schema):
            out.append((name, concrete, type_name))
    return out


# -- what an output declares it holds (pure) -----------------------------------------------------

ABSENT = object()  # a param the params do not hold (not the same as a JSON null)


class _Unknown(Exception):
    """A param's value is not what the declaration needs (not a list of strings): nothing can be said."""


def _plain(decl: Any) -> dict:
    """A declaration as plain data, whether workflow.yaml's dict or the DeclaredOutput model."""
    if hasattr(decl, "model_dump"):
        return decl.model_dump(exclude_none=True)
    return decl if isinstance(decl, dict) else {}


def param_value(params: Any, name: str) -> Any:
    """The value of param `name` in `params`: `a.b` is field b of mapping a, or the list of field b of each
    item when a is a list (`samples.name`); ABSENT when the params do not hold it."""
    head, _, rest = name.partition(".")
    if not isinstance(params, dict) or head not in params:
        return ABSENT
    value = params[head]
    if not rest:
        return value
    if isinstance(value, list):
        items = [param_value(item, rest) for item in value]
        return [v for v in items if v is not ABSENT]
    return param_value(value, rest)


def schema_types(sub: Any) -> set[str]:
    """The JSON types a (sub)schema lets a value have (from `type`, else its enum or const); empty when it
    does not say."""
    if not isinstance(sub, dict):
        return set()
    t = sub.get("type")
    if isinstance(t, str):
        return {t}
    if isinstance(t, list):
        return {x for x in t if isinstance(x, str)}
    values = sub["enum"] if isinstance(sub.get("enum"), list) else [sub["const"]] if "const" in sub else []
    names = {bool: "boolean", str: "string", int: "integer", float: "number", list: "array", dict: "object"}
    return {names.get(type(v), "null") for v in values}


def param_schema(schema: dict, name: str) -> tuple[dict | None, bool, str | None]:
    """For param `name` as `param_value` reads it: (its subschema, whether it is reached through a list's
    items, the first part schema.json does not declare; the subschema is None then)."""
    node: Any = schema
    through_list = False
    for part in name.split("."):
        if "array" in schema_types(node) and isinstance(node.get("items"), dict):
            node, through_list = node["items"], True
        props = node.get("properties") if isinstance(node, dict) else None
        sub = props.get(part) if isinstance(props, dict) else None
        if not isinstance(sub, dict):
            return None, through_list, part
        node = sub
    return node, through_list, None


def _names(params: dict, name: str | None) -> list[str] | None:
    """The column names a param holds (a list of strings, or one string); None when it holds nothing."""
    if not name:
        return None
    value = param_value(params, name)
    if value is ABSENT or value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    raise _Unknown(name)


def _plus(params: dict, plus: Any) -> list[str]:
    out: list[str] = []
    for entry in [plus] if isinstance(plus, str) else plus or []:
        if isinstance(entry, str):
            out.extend(_names(params, entry) or [])
        elif isinstance(entry, dict):
            templates = entry.get("each") or []
            out.extend(t.replace("{}", item) for item in _names(params, entry.get("param")) or [] for t in templates)
    return out


def declared_columns(decl: Any, params: dict, header_of: Callable[[str], list[str] | None]) -> list[str] | None:
    """The columns output `decl` declares for these params, in order, each once; None when it declares none
    or they cannot be known (the header of `of` is unknown, a param holds something other than names).

    `header_of(param)` gives the header of the table an x-artifact param names: a file's, or an upstream
    step's declared columns. Result: `fixed`, then the header of `of` (only the `keep` list's columns when
    that list is not empty, in the header's order or, with `order: keep`, the list's; less `minus`), then the
    items of `plus` (`{param, each}`: each template with `{}` replaced by each item), then `last`."""
    spec = _plain(decl).get("columns")
    if spec is None:
        return None
    if isinstance(spec, list):
        return list(dict.fromkeys(spec))
    try:
        out = list(spec.get("fixed") or [])
        if spec.get("of"):
            header = header_of(spec["of"])
            if header is None:
                return None
            keep = _names(params, spec.get("keep"))
            if keep and spec.get("order") == "keep":
                present = set(header)
                middle = [c for c in keep if c in present]
            else:
                middle = [c for c in header if not keep or c in set(keep)]
            minus = set(_names(params, spec.get("minus")) or [])
            out += [c for c in middle if c not in minus]
        out += _plus(params, spec.get("plus"))
        out += list(spec.get("last") or [])
    except _Unknown:
        return None
    return list(dict.fromkeys(out))


def declared_keys(decl: Any) -> list[str] | None:
    """The JSON pointers output `decl` declares (RFC 6901), or None when it declares none."""
    keys = _plain(decl).get("keys")
    return list(keys) if keys is not None else None


def _same(value: Any, wanted: Any) -> bool:
    """JSON equality: true is not 1, 1 is 1.0."""
    if isinstance(value, bool) or isinstance(wanted, bool):
        return isinstance(value, bool) and isinstance(wanted, bool) and value == wanted
    return value == wanted


def produced_when(decl: Any, params: dict) -> bool:
    """Does output `decl` exist for these params? True without `when`; with it, every named param must have
    the value given (or one of a list of values); a param the params do not hold matches nothing."""
    for name, allowed in (_plain(decl).get("when") or {}).items():
        value = param_value(params, name)
        choices = allowed if isinstance(allowed, list) else [allowed]
        if value is ABSENT or not any(_same(value, c) for c in choices):
            return False
    return True


def pointer_problem(pointer: Any) -> str | None:
    """Why `pointer` is not a well-formed JSON pointer naming a key (RFC 6901), or None."""
    if not isinstance(pointer, str):
        return f"{pointer!r} is not a string"
    if pointer == "":
        return "the empty pointer names the whole document, not a key"
    if not pointer.startswith("/"):
        return f"`{pointer}` does not start with `/`"
    if re.search(r"~(?![01])", pointer):
        return f"`{pointer}` has a `~` not followed by 0 or 1 (write `~0` for `~` and `~1` for `/` in a key)"
    return None


def resolves(document: Any, pointer: str) -> bool:
    """Does the well-formed JSON pointer name a value in `document`? (`-` and leading zeros never do.)"""
    node = document
    for token in pointer[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and re.fullmatch(r"0|[1-9]\d*", token) and int(token) < len(node):
            node = node[int(token)]
        else:
            return False
    return True


def missing_keys(decl: Any, document: Any) -> list[str]:
    """The declared keys of `decl` that name nothing in `document` (a parsed JSON value)."""
    return [k for k in declared_keys(decl) or [] if pointer_problem(k) is not None or not resolves(document, k)]


def column_difference(declared: list[str], actual: list[str]) -> str | None:
    """What a real header lacks or adds against the declared columns (or how their order differs); None
    when they are equal."""
    if declared == actual:
        return None
    missing = [c for c in declared if c not in actual]
    extra = [c for c in actual if c not in declared]
    parts = []
    if missing:
        parts.append(f"missing {', '.join(f'`{c}`' for c in missing)}")
    if extra:
        parts.append(f"not declared {', '.join(f'`{c}`' for c in extra)}")
    if not parts:
        twice = sorted({c for c in actual if actual.count(c) > 1})
        parts.append(f"{', '.join(f'`{c}`' for c in twice)} more than once" if twice else "the same columns in another order")
    return (f"{'; '.join(parts)} (the file has {', '.join(actual) or 'no columns'}; "
            f"the declaration says {', '.join(declared) or 'none'})")
