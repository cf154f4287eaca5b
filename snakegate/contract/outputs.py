"""Declared outputs as patterns: `outputs.<name>.path` may hold `{param}` placeholders expanded from the params.

`{samples}` expands over a list param's items, a mapping param's keys, or a
scalar's value; `{a.b}` names a nested param; `{sheet.column}` (a sample-sheet
param and one of its columns) expands over that column's values. Several
placeholders give their product, in the params' order. Used by the check
(every expanded path is produced), `snakegate test` (each is compared) and the
run (each is a target). Only the sample sheet is read; nothing is written.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

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
    """(output name, concrete path, type) for every declared output; raises PatternError."""
    out = []
    for name, decl in outputs.items():
        path = decl["path"] if isinstance(decl, dict) else decl.path
        type_name = decl["type"] if isinstance(decl, dict) else decl.type
        for concrete in expand(path, params, schema):
            out.append((name, concrete, type_name))
    return out


# TEMP until the declarations branch lands: the declared columns, keys and condition of an output.
def declared_columns(decl, params: dict, header_of) -> list[str] | None:
    columns = getattr(decl, "columns", None)
    if columns is None:
        return None
    if isinstance(columns, list):
        return list(columns)
    out = list(columns.get("fixed") or [])
    header = header_of(columns["of"]) if columns.get("of") else []
    if header is None:
        return None
    keep = params.get(columns["keep"]) if columns.get("keep") else None
    minus = set(params.get(columns["minus"]) or []) if columns.get("minus") else set()
    for c in header:
        if (not keep or c in keep) and c not in minus:
            out.append(c)
    plus = params.get(columns["plus"]) if columns.get("plus") else None
    out += [plus] if isinstance(plus, str) else list(plus or [])
    return list(dict.fromkeys(out))


def produced_when(decl, params: dict) -> bool:
    when = getattr(decl, "when", None) or {}
    return all(params.get(k) in (v if isinstance(v, list) else [v]) for k, v in when.items())
