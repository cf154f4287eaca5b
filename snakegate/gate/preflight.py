"""Workflow preflight checks: cross-field rules JSON Schema cannot state, run by the gate before the DAG.

A workflow may ship `preflight.py` with one pure function

    def preflight(params, artifacts): -> list of {"path", "message", "hint"?, "choices"?}

`params` are the resolved params (defaults filled), `artifacts` maps each input
artifact's param path (`dataset_file`, `samples[0].reads`) to a read-only view
of that file: its type, size and, by type, its header (`columns`) or its arrays'
shapes and dtypes (`arrays`), never its data. Both are deep-frozen (mappings are
read-only, lists are tuples), so a preflight cannot change what the gate passes
on. Each returned item becomes a gate error with code `preflight` at
`params.<path>`.

Fail closed: a preflight.py that does not load, lacks the function, raises, or
returns anything but a list of such items is a gate failure, never a pass. The
module is compiled from its source (no `__pycache__` is written into the
workflow folder, whose content hash pins the run). This module reads only the
artifacts' headers and the preflight source; it writes nothing.
"""

from __future__ import annotations

import hashlib
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable

from snakegate.contract import artifacts
from snakegate import metaschemas
from snakegate.contract.dialect import format_path, iter_nodes
from snakegate.models import GateError

PREFLIGHT_FILE = "preflight.py"
FUNCTION = "preflight"
MAX_CACHED = 64  # compiled preflights kept per process (a long chat session may see many edits)
_compiled: dict[tuple[str, str], Callable] = {}


class PreflightBroken(Exception):
    """preflight.py cannot be loaded or does not define the function; the message says why."""


def freeze(value: Any) -> Any:
    """A deep read-only copy: dicts become read-only mappings, lists and tuples become tuples."""
    if isinstance(value, Mapping):
        return types.MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def load_function(folder: Path) -> Callable | None:
    """The workflow's preflight function, or None when the workflow ships no preflight.py."""
    path = folder / PREFLIGHT_FILE
    try:
        source = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise PreflightBroken(f"{path} cannot be read ({exc.strerror or exc})") from None
    key = (str(path.resolve()), hashlib.sha256(source).hexdigest())
    if key not in _compiled:
        module = types.ModuleType(f"snakegate_preflight_{key[1][:12]}")
        module.__file__ = str(path)
        try:
            exec(compile(source, str(path), "exec"), module.__dict__)  # noqa: S102 - the workflow's own curated code
        except Exception as exc:  # noqa: BLE001 - any failure to load is reported, never a pass
            raise PreflightBroken(f"{path} does not load ({type(exc).__name__}: {exc})") from None
        function = getattr(module, FUNCTION, None)
        if not callable(function):
            raise PreflightBroken(f"{path} defines no function `{FUNCTION}(params, artifacts)`")
        if len(_compiled) >= MAX_CACHED:
            _compiled.clear()
        _compiled[key] = function
    return _compiled[key]


def artifact_view(path: Path, type_name: str) -> dict:
    """What a preflight may know about one input file: type, size and header-level facts by type."""
    view: dict[str, Any] = {"type": type_name, "size_bytes": path.stat().st_size}
    if artifacts.is_table(type_name):
        view["columns"] = artifacts.table_header(path, artifacts.delimiter(type_name)) or []
    arrays = artifacts.array_headers(path, type_name)
    if arrays is not None:
        view["arrays"] = arrays
    return view


def artifact_views(schema: dict, params: dict, good: Mapping[tuple, Path]) -> Mapping:
    """{param path below params: read-only view} for every resolved input artifact, in params order."""
    views = {}
    for node in iter_nodes(schema, params):
        type_name = node.schema.get("x-artifact")
        if type_name and not node.is_key and node.parts in good:
            views[format_path(node.parts)] = artifact_view(good[node.parts], type_name)
    return freeze(views)


def run(folder: Path, workflow_id: str, schema: dict, params: dict, good: Mapping[tuple, Path]) -> list[GateError]:
    """The workflow's preflight findings as gate errors; any failure of the preflight itself is one too.

    `good` maps each input artifact's param parts to its resolved path (the gate's data step).
    """
    where = f"workflows/{workflow_id}/{PREFLIGHT_FILE}"
    try:
        function = load_function(folder)
    except PreflightBroken as exc:
        return [_broken(where, str(exc))]
    if function is None:
        return []
    try:
        views = artifact_views(schema, params, good)
    except (OSError, ValueError) as exc:  # changed since the data step checked it: refuse, never crash
        return [GateError(path="params", code="preflight",
                          message=f"an input file could not be read for the preflight check ({exc})",
                          hint="check that the input files exist, are readable and were not changed meanwhile")]
    try:
        found = function(freeze(params), views)
    except Exception as exc:  # noqa: BLE001 - fail closed: a crashed preflight proved nothing
        return [_broken(where, f"{where} crashed on these params ({type(exc).__name__}: {exc})")]
    try:
        return findings_to_errors(found)
    except ValueError as exc:
        return [_broken(where, f"{where} returned {exc}")]


def thaw(value: Any) -> Any:
    """Plain JSON-like data again: read-only mappings become dicts, tuples become lists."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(v) for v in value]
    return value


def findings_to_errors(found: Any) -> list[GateError]:
    """Turn a preflight's return value into gate errors; ValueError when it is not a list of findings
    as snakegate/schemas/preflight.schema.json defines them."""
    if not isinstance(found, (list, tuple)):
        raise ValueError(f"a {type(found).__name__}, not a list of findings")
    found = thaw(found)
    problems = sorted(metaschemas.validator("preflight.schema.json").iter_errors(found), key=lambda e: list(e.path))
    if problems:
        first = problems[0]
        where = f"item {first.path[0]}" if first.path else "its value"
        raise ValueError(f"{where} that is not a finding {{path, message, hint?, choices?}}: {first.message}")
    return [GateError(path=f"params.{item['path']}" if item["path"] else "params", code="preflight",
                      message=item["message"], hint=item.get("hint"), choices=item.get("choices"))
            for item in found]


def _broken(where: str, why: str) -> GateError:
    return GateError(path="params", code="preflight",
                     message=f"the workflow's preflight check failed, so these params are not proven: {why}",
                     hint=f"this is a fault in {where}, not in your params; report it to the workflow's maintainers")
