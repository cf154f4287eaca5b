"""`snakegate draft`'s contract half: a workflow's own config schema (Snakemake's `config.schema.yaml`) or its
`config.yaml`, turned into a snakegate `schema.json` — pure functions over plain data, deterministic.

- Their schema is kept and tightened: `$schema` 2020-12, `additionalProperties: false` on every object that
  lists properties, defaults filled from their config.yaml (nested ones too), a stub description where one
  is missing.
- Without a schema, one is inferred from the config's values (type, default).
- Their config.yaml's comments (snakegate.contribute.config_notes): a key's comment is its description where
  their schema has none; a commented-out key is declared as an optional param (its value an example, not
  a default); a placeholder value (`TODO`, `<path/to/file>`) is no default.
- A value that names an existing file of the workflow becomes an `x-artifact` of the type its extension
  says; a mapping whose values all do becomes a free-keyed mapping of artifacts; a table a sample-sheet
  schema validates gets `x-sample-sheet`, with `x-artifact` on the columns whose cells name files.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Callable

from snakegate.contribute.config_notes import ConfigNotes

from snakegate.metaschemas import artifact_types

SCHEMA_URI = "https://json-schema.org/draft/2020-12/schema"
TODO = "TODO: describe"


def type_of_path(path: str) -> str | None:
    """The artifact type a file name's extension says (longest extension wins), or None."""
    best, best_len = None, 0
    name = path.lower()
    for type_name, spec in artifact_types().items():
        for ext in spec.get("extensions", []):
            if name.endswith(ext) and len(ext) > best_len:
                best, best_len = type_name, len(ext)
    return best


def infer(value: Any, name: str) -> dict:
    """A JSON Schema for one config value, with its value as the default."""
    if isinstance(value, bool):
        sub = {"type": "boolean"}
    elif isinstance(value, int):
        sub = {"type": "integer"}
    elif isinstance(value, float):
        sub = {"type": "number"}
    elif isinstance(value, str):
        sub = {"type": "string"}
    elif isinstance(value, list):
        items = {k: v for k, v in infer(value[0], name).items() if k not in ("default", "description")} if value else {}
        sub = {"type": "array", "items": items} if items else {"type": "array"}
    elif isinstance(value, dict):
        # closed like every object of the contract: a misspelt nested key must be refused, not ignored
        sub = {"type": "object", "properties": {k: infer(v, k) for k, v in value.items()}, "additionalProperties": False}
    else:
        sub = {}
    sub["description"] = f"{TODO} `{name}`"
    if value is not None and not isinstance(value, dict):
        sub["default"] = copy.deepcopy(value)
    return sub


def tighten(schema: dict, config: dict | None, name: str = "") -> dict:
    """Their (sub)schema made a snakegate contract node: closed objects, defaults from config, descriptions."""
    out = {k: copy.deepcopy(v) for k, v in schema.items() if k != "$schema"}
    props = out.get("properties")
    if isinstance(props, dict):
        cfg = config if isinstance(config, dict) else {}
        for key, sub in props.items():
            props[key] = tighten(sub if isinstance(sub, dict) else {}, cfg.get(key), key)
        for key, value in cfg.items():  # keys their config has and their schema forgot
            if key not in props:
                props[key] = infer(value, key)
        out.setdefault("type", "object")
        out["additionalProperties"] = False
    elif config is not None and not isinstance(config, dict) and "default" not in out:
        out["default"] = copy.deepcopy(config)
    if "default" in out and isinstance(out.get("properties"), dict):
        del out["default"]  # nested defaults are filled per property instead
    if name and not out.get("description"):
        out["description"] = f"{TODO} `{name}`"
    return out


def contract(their_schema: dict | None, config: dict, exists: Callable[[str], bool],
             sheets: dict[str, tuple[dict, list[dict]]], notes: ConfigNotes | None = None) -> dict:
    """The drafted schema.json. `exists(value)` says whether a config string names a file of the workflow;
    `sheets` maps a config key to (its sample-sheet row schema, the sheet's rows) for tables read as sheets;
    `notes` is what their config.yaml's comments say (snakegate.contribute.config_notes)."""
    base = tighten(their_schema, config) if their_schema else {"type": "object", "properties": {
        k: infer(v, k) for k, v in config.items()}, "additionalProperties": False}
    props = base.setdefault("properties", {})
    if notes is not None:
        _apply_notes(base, notes)
    required = [r for r in base.get("required", []) if r in props]
    for key, sub in props.items():
        _artifacts(sub, config.get(key), exists)
        if key in sheets and isinstance(config.get(key), str):
            row_schema, rows = sheets[key]
            sub["x-artifact"] = "tsv-table" if str(config[key]).endswith((".tsv", ".tab")) else "csv-table"
            sub["x-sample-sheet"] = sheet_schema(row_schema, rows, exists)
        if "x-artifact" in sub or "x-artifact" in (sub.get("additionalProperties") or {}):
            sub.pop("default", None)  # a path relative to their working folder means nothing here: the run config says
            required.append(key)
        _nested_default(sub)
    return {"$schema": SCHEMA_URI, "type": "object", "additionalProperties": False,
            "required": list(dict.fromkeys(required)), "properties": props}


def node_at(schema: dict, path: tuple) -> dict | None:
    """The subschema at a key path through `properties` (None where the path leaves the declared objects)."""
    node = schema
    for key in path:
        props = node.get("properties") if isinstance(node, dict) else None
        if not isinstance(props, dict) or key not in props:
            return None
        node = props[key]
    return node


def _apply_notes(schema: dict, notes: ConfigNotes) -> None:
    """Comments become descriptions (never over theirs), commented-out keys optional params, placeholders no
    default (a default of `TODO` would be a silent wrong value)."""
    for path, said in notes.descriptions.items():
        node = node_at(schema, path)
        if node is not None and str(node.get("description", TODO)).startswith(TODO):
            node["description"] = said
    for path, example in notes.commented.items():
        parent = node_at(schema, path[:-1])
        if parent is None or not isinstance(parent.get("properties"), dict) or path[-1] in parent["properties"]:
            continue
        sub = {k: v for k, v in infer(example, path[-1]).items() if k != "default"}
        sub.pop("properties", None)
        sub["description"] = notes.descriptions.get(path) or \
            f"{TODO} `{path[-1]}` (commented out in their config, e.g. {json.dumps(example)})"
        if example is not None:
            sub["examples"] = [copy.deepcopy(example)]
        parent["properties"][path[-1]] = sub
    for path in notes.placeholders:
        node = node_at(schema, path)
        if node is not None:
            node.pop("default", None)


def _nested_default(sub: dict) -> None:
    """An object whose properties all have defaults gets them as its own default, so leaving it out works."""
    props = sub.get("properties")
    if sub.get("type") != "object" or not isinstance(props, dict) or "default" in sub:
        return
    for inner in props.values():
        if isinstance(inner, dict):
            _nested_default(inner)
    if props and all(isinstance(v, dict) and "default" in v for v in props.values()):
        sub["default"] = {k: copy.deepcopy(v["default"]) for k, v in props.items()}


def _artifacts(sub: dict, value: Any, exists: Callable[[str], bool]) -> None:
    if isinstance(value, str) and exists(value):
        sub["x-artifact"] = type_of_path(value) or "text"
    elif isinstance(value, dict) and value and all(isinstance(v, str) and exists(v) for v in value.values()):
        types = {type_of_path(v) or "text" for v in value.values()}
        sub.pop("properties", None)
        sub.pop("default", None)
        sub["type"] = "object"
        sub["additionalProperties"] = {"type": "string", "x-artifact": types.pop() if len(types) == 1 else "text"}
    elif isinstance(value, dict) and isinstance(sub.get("properties"), dict):
        for key, inner in sub["properties"].items():
            _artifacts(inner, value.get(key), exists)


def sheet_schema(row_schema: dict, rows: list[dict], exists: Callable[[str], bool]) -> dict:
    """Their samples.schema.yaml as an x-sample-sheet: path columns get x-artifact: every cell names a file of
    the workflow, or every cell's extension names one artifact type (A.1.fq.gz: their data, not shipped)."""
    out = {k: copy.deepcopy(v) for k, v in row_schema.items() if k not in ("$schema", "description")}
    props = out.setdefault("properties", {})
    columns = {c for row in rows for c in row}
    for column in sorted(columns):
        cells = [row[column] for row in rows if row.get(column)]
        named = {type_of_path(c) for c in cells}  # A.1.fq.gz: a file, shipped or not (the data lives elsewhere)
        if cells and (all(exists(c) for c in cells) or (len(named) == 1 and None not in named)):
            types = {type_of_path(c) or "text" for c in cells}
            props.setdefault(column, {"type": "string", "description": f"{TODO} `{column}`"})
            props[column]["x-artifact"] = types.pop() if len(types) == 1 else "text"
    return out
