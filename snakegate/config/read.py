"""Reading run configs the way Snakemake reads them, only stricter; YAML mistakes become gate errors.

Snakemake 9 (`snakemake.common.configfile._load_configfile`) reads a
`--configfile` with `json.load` first and, when that fails, with PyYAML's
`FullLoader` (YAML 1.1) inside YTE, which evaluates the file as a Python
template when its top level says `__use_yte__: true`. `load_config_text`
takes the same two steps with the same rules (PyYAML's `SafeLoader` resolves
scalars exactly as `FullLoader` does: `no`/`on`/`yes` are booleans, `1:20` is
80, `012` is 10, `0o12` and `1e3` are text, `2024-01-31` is a date), so
`snakegate validate` and plain `snakemake` never disagree about a value.

Where Snakemake is lax this module refuses, each with its own code:
`yte_config` (any `__use_yte__` key), `python_tag` (`!!python/...`, which
FullLoader turns into Python functions, tuples, complex numbers and bytes),
`duplicate_key` (Snakemake silently keeps the last one), `yaml_bomb`
(aliases that expand past `configshape.MAX_VALUES` values, measured on the
event stream before anything is built), `too_deep` (measured on the event
stream too, so a deep file never reaches the recursive composer) and
`too_large`: a file or text over `MAX_BYTES` (read no further than that), more
than `MAX_VALUES` values written out without aliases, or integers Python cannot
read. Each message says which of these it is, with the size and the cap. The values' shapes (NaN, dates,
64-bit integers, non-text keys) are the gate's first step (`configshape`).

It never evaluates a template, never constructs a Python object from a tag,
never walks an alias-expanded value before its size is known, never writes a
file. Writing is `snakegate.config.write`, which reads what it writes back through this module.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import yaml

from snakegate.config.shape import MAX_DEPTH, MAX_VALUES
from snakegate.contract.dialect import format_path
from snakegate.errors import UserError
from snakegate.models import GateError

MAX_BYTES = 8 * 1024 * 1024  # a run config is a few hundred bytes; anything near this is not one
YTE_KEY = "__use_yte__"
PYTHON_TAG = "tag:yaml.org,2002:python/"
MERGE_TAG = "tag:yaml.org,2002:merge"

_FIX_ALIASES = "write the values out instead of nesting YAML anchors and aliases"


class _Refused(Exception):
    def __init__(self, error: GateError):
        self.error = error


def _yte_error(source: str) -> GateError:
    return GateError(
        path=YTE_KEY, code="yte_config",
        message=f"{source} is a YTE template (`{YTE_KEY}`): Snakemake evaluates its `?` expressions and "
                "`__definitions__` as Python code while it loads the file, before any gate can look at it, "
                "so snakegate never accepts such a file",
        hint=f"write the values out and remove `{YTE_KEY}`; a run config is plain YAML or JSON")


# ---- the event pre-pass: size, depth, tags, before anything is composed ---------------------------------------
class _Frame:
    __slots__ = ("kind", "start", "anchor", "index", "key_next", "key")

    def __init__(self, kind: str, start: int, anchor: str | None):
        self.kind, self.start, self.anchor = kind, start, anchor
        self.index, self.key_next, self.key = 0, True, None


def _path(stack: list[_Frame]) -> str:
    parts: list = []
    for frame in stack:
        if frame.kind == "seq":
            parts.append(frame.index)
        elif not frame.key_next and frame.key is not None:
            parts.append(frame.key)
    return format_path(parts)


def _too_many_values(source: str) -> GateError:
    return GateError(path="", code="too_large",
                     message=f"{source} holds more than {MAX_VALUES:,} values, all written out (no YAML aliases); "
                             "a run config holds a few dozen",
                     hint="put bulk data in a file inside a data root and give its path as a parameter")


def _prepass(text: str, source: str) -> None:
    """One pass over PyYAML's events (its parser keeps an explicit stack: no recursion), counting every
    value as it would be after alias expansion. Raises _Refused; YAML syntax errors propagate."""
    stack: list[_Frame] = []
    sizes: dict[str, int] = {}  # anchor -> expanded size of its node
    total = 0
    expanded = False  # whether an alias has added values (else every value counted is written out)
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if not isinstance(event, (yaml.NodeEvent, yaml.CollectionEndEvent)):
            continue
        if isinstance(event, yaml.CollectionEndEvent):
            frame = stack.pop()
            if frame.anchor is not None:
                sizes[frame.anchor] = total - frame.start
            _advance(stack)
            continue
        top = stack[-1] if stack else None
        is_key = top is not None and top.kind == "map" and top.key_next
        tag = getattr(event, "tag", None)
        if tag and tag.startswith(PYTHON_TAG):
            raise _Refused(GateError(
                path=_path(stack), code="python_tag",
                message=f"{source} uses the tag `!!{tag[len('tag:yaml.org,2002:'):]}`: `!!python/...` tags name Python "
                        "objects, and Snakemake's loader (PyYAML FullLoader) builds functions, tuples, complex "
                        "numbers and bytes from them; a run config carries plain values only",
                hint="write the plain value without a `!!python/...` tag"))
        if isinstance(event, yaml.AliasEvent):
            if any(f.anchor == event.anchor for f in stack):
                raise _Refused(GateError(path=_path(stack), code="yaml_bomb",
                                         message=f"{source} contains a value that contains itself "
                                                 f"(the alias *{event.anchor} inside its own anchor)",
                                         hint=_FIX_ALIASES))
            total += sizes.get(event.anchor, 1)  # an unknown alias is the composer's error to report
            expanded = True
        else:
            total += 1
        if total > MAX_VALUES and not expanded:
            raise _Refused(_too_many_values(source))
        if total > MAX_VALUES:
            raise _Refused(GateError(path="", code="yaml_bomb",
                                     message=f"{source} expands to more than {MAX_VALUES:,} values once its YAML "
                                             "aliases are expanded (aliases repeating aliases: a \"billion laughs\")",
                                     hint=_FIX_ALIASES))
        if is_key:
            top.key = event.value if isinstance(event, yaml.ScalarEvent) else "?"
            if len(stack) == 1 and top.key == YTE_KEY:
                raise _Refused(_yte_error(source))
        if isinstance(event, yaml.CollectionStartEvent):
            stack.append(_Frame("seq" if isinstance(event, yaml.SequenceStartEvent) else "map", total - 1,
                                event.anchor))
            if len(stack) > MAX_DEPTH:
                where = _path(stack[:-1])
                shown = where if len(where) <= 40 else where[:40] + "…"
                raise _Refused(GateError(path=where, code="too_deep",
                                         message=f"{source} nests lists/mappings more than {MAX_DEPTH} levels deep "
                                                 f"(at `{shown}`)",
                                         hint=f"flatten the value; a run config nests at most {MAX_DEPTH} levels"))
            continue
        if isinstance(event, yaml.ScalarEvent) and event.anchor is not None:  # an alias names an anchor too
            sizes[event.anchor] = 1
        if is_key:
            top.key_next = False
        else:
            _advance(stack)


def _advance(stack: list[_Frame]) -> None:
    """A value (or a whole key node) finished inside the top frame."""
    if not stack:
        return
    top = stack[-1]
    if top.kind == "seq":
        top.index += 1
    else:
        top.key_next = not top.key_next


# ---- composing and constructing ------------------------------------------------------------------------------
def _duplicate_keys(loader: yaml.SafeLoader, root: yaml.Node, source: str) -> None:
    """Refuse a mapping that gives the same key twice (after YAML 1.1 resolution: `on` and `true` collide).
    `<<` merges may override keys; that is YAML's merge rule, not a duplicate."""
    todo: list[tuple[yaml.Node, tuple]] = [(root, ())]
    seen: set[int] = set()
    while todo:
        node, parts = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            todo.extend((child, parts + (i,)) for i, child in enumerate(node.value))
        elif isinstance(node, yaml.MappingNode):
            first: dict = {}
            for key_node, value_node in node.value:
                if key_node.tag == MERGE_TAG:
                    todo.append((value_node, parts))
                    continue
                part: Any = "?"
                if isinstance(key_node, yaml.ScalarNode):  # other keys are unhashable: the constructor refuses them
                    key = loader.construct_object(key_node, deep=True)
                    part = key if isinstance(key, str) else key_node.value
                    earlier = first.setdefault(key, key_node)  # a Python dict: 1, 1.0 and true are one key
                    if earlier is not key_node:
                        where = format_path(parts + (part,))
                        raise _Refused(GateError(
                            path=where, code="duplicate_key",
                            message=f"{source} gives `{where}` twice (line {earlier.start_mark.line + 1} and line "
                                    f"{key_node.start_mark.line + 1}); Snakemake would silently use the last one",
                            hint="keep one of the two lines"))
                todo.append((value_node, parts + (part,)))


def _syntax_error(exc: yaml.YAMLError, source: str) -> GateError:
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return GateError(path="", code="invalid_yaml", message=f"{source} is not valid YAML{where}: {problem}",
                     hint="fix the indentation or quoting on that line")


def parse_yaml(text: str, source: str) -> tuple[Any, GateError | None]:
    """YAML 1.1 text -> (plain data, None) or (None, the refusal). The YAML half of Snakemake's loader."""
    try:
        _prepass(text, source)
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None, GateError(path="", code="invalid_yaml", message=f"{source} is empty",
                                       hint="start from `snakegate init <workflow>`")
            _duplicate_keys(loader, node, source)
            data = loader.construct_document(node)
        finally:
            loader.dispose()
    except _Refused as refused:
        return None, refused.error
    except yaml.YAMLError as exc:
        return None, _syntax_error(exc, source)
    except ValueError as exc:  # int("9" * 5000): Python's limit on integer text; Snakemake crashes here
        digits = str(exc).split("value has ")[-1].split(";")[0] if "value has" in str(exc) else "too many digits"
        return None, GateError(path="", code="too_large",
                               message=f"{source} holds an integer Python cannot read ({digits}; the limit is "
                                       f"{sys.get_int_max_str_digits():,}); Snakemake stops with a traceback on it",
                               hint="write a smaller number, or quote it if it is an identifier")
    return _checked(data, source)


def _checked(data: Any, source: str) -> tuple[Any, GateError | None]:
    """Value shapes (NaN, dates, huge integers, non-text keys) are the gate's first step, with full paths."""
    if isinstance(data, dict) and YTE_KEY in data:  # also when a `<<` merge brought it to the top level
        return None, _yte_error(source)
    return data, None


def _parse_json(text: str, source: str) -> tuple[bool, Any, GateError | None]:
    """(is JSON, data, error): Snakemake's first step, json.load, decides whether a file is JSON."""
    duplicates: list[str] = []

    def pairs(items):
        out: dict = {}
        for key, value in items:
            if key in out:
                duplicates.append(key)
            out[key] = value
        return out

    try:
        data = json.loads(text, object_pairs_hook=pairs)
    except RecursionError:  # Snakemake's json.load crashes here; the YAML step would too
        return True, None, GateError(path="", code="too_deep", message=f"{source} nests JSON too deep to read",
                                     hint=f"flatten the value; a run config nests at most {MAX_DEPTH} levels")
    except ValueError:
        return False, None, None
    if duplicates:
        return True, None, GateError(path="", code="duplicate_key",
                                     message=f"{source} gives the key `{duplicates[0]}` twice in one JSON object; "
                                             "Snakemake would silently use the last one",
                                     hint="keep one of the two entries")
    return (True, *_checked(data, source))


def _too_large(source: str, size: int | None) -> GateError:
    how_big = f"{size:,} bytes" if size is not None else f"more than {MAX_BYTES:,} bytes"
    return GateError(path="", code="too_large",
                     message=f"{source} is {how_big}, over the {MAX_BYTES:,}-byte ({MAX_BYTES // 2**20} MiB) cap "
                             "on a run config (a run config is a few hundred bytes)",
                     hint="give the path of a run config, not a data file; put bulk data in a file inside a data "
                          "root and give its path as a parameter")


def load_config_text(text: str, source: str) -> tuple[Any, GateError | None]:
    """A config file's text -> (data, None) or (None, the refusal): JSON first, then YAML, as Snakemake does."""
    if len(text) > MAX_BYTES // 4:  # only then can its UTF-8 exceed the cap
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > MAX_BYTES:
            return None, _too_large(source, size)
    is_json, data, error = _parse_json(text, source)
    if is_json:
        return data, error
    return parse_yaml(text, source)


def read_run_config(path: str | os.PathLike) -> tuple[Any, GateError | None]:
    path = Path(path)
    try:
        size = path.stat().st_size
        if path.is_dir():
            raise IsADirectoryError
        if size > MAX_BYTES:
            return None, _too_large(str(path), size)
        with open(path, "rb") as fh:  # never more than the cap, whatever the size said (/dev/zero says 0)
            raw = fh.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            return None, _too_large(str(path), None)
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise UserError(f"run config {path} does not exist; create one with `snakegate init <workflow> -o {path}`")
    except IsADirectoryError:
        raise UserError(f"{path} is a folder; give the path of a run config YAML file")
    except UnicodeDecodeError:
        return None, GateError(path="", code="invalid_yaml", message=f"{path} is not UTF-8 text", hint="save it as UTF-8")
    except OSError as exc:
        raise UserError(f"cannot read the run config {path}: {exc.strerror or exc}")
    return load_config_text(text, str(path))
