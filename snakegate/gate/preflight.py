"""Workflow preflight checks: cross-field rules JSON Schema cannot state, run by the gate before the DAG.

A workflow may ship `preflight.py` with one pure function

    def preflight(params, artifacts): -> list of {"path", "message", "hint"?, "choices"?}

`params` are the resolved params (defaults filled), `artifacts` maps each input
artifact's param path (`dataset_file`, `samples[0].reads`) to a read-only view
of that file: its type, size and, by type, its header (`columns`), its arrays'
shapes and dtypes (`arrays`) or its sequence names (`contigs`, for a VCF or GFF3
whose first 64 KiB prove the whole list), never its data. Both are deep-frozen (mappings are
read-only, lists are tuples), so a preflight cannot change what the gate passes
on. Each returned item becomes a gate error with code `preflight` at
`params.<path>`.

preflight.py is contributed code: it is never executed in this process. This
module reads its source and the artifacts' headers and hands them, as plain
data, to the sandbox (`snakegate.gate.sandbox`: no secrets in its environment,
no network where the OS allows it, bounded time and memory), whose child
compiles it from the source (no `__pycache__` is written into the workflow
folder, whose content hash pins the run) and calls the function. Fail closed:
a preflight.py that does not load, lacks the function, raises, runs out of time
or memory, or returns anything but a list of such items is a gate failure,
never a pass. This module writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from snakegate.contract import artifacts
from snakegate import metaschemas
from snakegate.contract.dialect import format_path, iter_nodes
from snakegate.gate import sandbox
from snakegate.models import GateError

PREFLIGHT_FILE = "preflight.py"
FUNCTION = "preflight"


def artifact_view(path: Path, type_name: str) -> dict:
    """What a preflight may know about one input file: type, size and header-level facts by type."""
    view: dict[str, Any] = {"type": type_name, "size_bytes": path.stat().st_size}
    if artifacts.is_table(type_name):
        view["columns"] = artifacts.header(path, type_name) or []
    arrays = artifacts.array_headers(path, type_name)
    if arrays is not None:
        view["arrays"] = arrays
    contigs = artifacts.sequence_names(path, type_name)
    if contigs is not None:
        view["contigs"] = contigs
    return view


def artifact_views(schema: dict, params: dict, good: Mapping[tuple, Path]) -> dict:
    """{param path below params: view} for every resolved input artifact, in params order (plain data; the
    sandbox hands the preflight a deep-frozen copy). A plan's input from an earlier step is seen through
    its declaration (snakegate.gate.upstream): type and declared columns, `size_bytes` None."""
    from snakegate.gate.upstream import Upstream

    views = {}
    for node in iter_nodes(schema, params):
        type_name = node.schema.get("x-artifact")
        if type_name and not node.is_key and node.parts in good:
            found = good[node.parts]
            views[format_path(node.parts)] = found.view() if isinstance(found, Upstream) else \
                artifact_view(found, type_name)
    return views


def run(folder: Path, workflow_id: str, schema: dict, params: dict, good: Mapping[tuple, Path]) -> list[GateError]:
    """The workflow's preflight findings as gate errors; any failure of the preflight itself is one too.

    `good` maps each input artifact's param parts to its resolved path (the gate's data step).
    """
    where = f"workflows/{workflow_id}/{PREFLIGHT_FILE}"
    path = folder / PREFLIGHT_FILE
    try:
        source = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        return [_broken(where, f"{path} cannot be read ({exc.strerror or exc})")]
    try:
        views = artifact_views(schema, params, good)
    except (OSError, ValueError) as exc:  # changed since the data step checked it: refuse, never crash
        return [GateError(path="params", code="preflight",
                          message=f"an input file could not be read for the preflight check ({exc})",
                          hint="check that the input files exist, are readable and were not changed meanwhile")]
    limits = sandbox.PREFLIGHT_LIMITS
    try:
        answer = sandbox.call("preflight", {"file": str(path), "source": source.decode("utf-8", "surrogateescape"),
                                            "params": params, "views": views}, limits)
    except sandbox.SandboxError as exc:
        return [_broken(where, f"{where} was stopped in the sandbox: {sandbox.describe(exc, limits)}")]
    status = answer.get("status") if isinstance(answer, dict) else None
    if status == "load":
        return [_broken(where, f"{path} does not load ({answer.get('detail')})")]
    if status == "missing":
        return [_broken(where, f"{path} defines no function `{FUNCTION}(params, artifacts)`")]
    if status == "crash":
        return [_broken(where, f"{where} crashed on these params ({answer.get('detail')})")]
    if status == "returned":
        return [_broken(where, f"{where} returned {answer.get('detail')}")]
    if status != "ok":
        return [_broken(where, f"the sandbox gave no verdict for {where}")]
    try:
        return findings_to_errors(answer.get("found"))
    except ValueError as exc:
        return [_broken(where, f"{where} returned {exc}")]


def findings_to_errors(found: Any) -> list[GateError]:
    """Turn a preflight's return value (plain data from the sandbox) into gate errors; ValueError when it is
    not a list of findings as snakegate/schemas/preflight.schema.json defines them."""
    if not isinstance(found, list):
        raise ValueError(f"a {type(found).__name__}, not a list of findings")
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
