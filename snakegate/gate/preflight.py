"""Workflow preflight checks: cross-field rules JSON Schema cannot state, run by the gate before the DAG.

A workflow may ship `preflight.py` with one pure function

    def preflight(params, artifacts): -> list of {"path", "message", "hint"?, "choices"?}

`params` are the resolved params (defaults filled), `artifacts` maps each input
artifact's param path (`dataset_file`, `samples[0].reads`) to a read-only view
of that file: its type, size and, by type,
- a table: its header (`columns`), and the cheap facts of one bounded streaming pass
  (`snakegate.contract.table_profile`): `rows`, a per-column `profile` (kind numeric/boolean/text/empty
  as pandas reads it, missing and distinct counts, value counts when few, min/max), and for a small
  table its `cells` (typed, read-only rows) so a preflight can replicate a script's row logic exactly;
  `profile_absent` / `cells_absent` say why either is None (too large; a plan step's output that does
  not exist yet), and the preflight must then let the run-time check speak;
- an array archive: its arrays' shapes and dtypes (`arrays`), with the `values` of small 1-D numeric
  arrays (`snakegate.contract.array_values`: an axis such as the delays, never the data);
- a VCF or GFF3: its sequence names (`contigs`, when the first 64 KiB prove the whole list);
- a FASTA: its sequences' names and lengths (`contigs`, `lengths`) and the first line samtools faidx
  would refuse (`format_problem`), from one bounded pass (`snakegate.contract.sequence_facts`;
  `facts_absent` says why they are None for a large genome).
Both are deep-frozen (mappings are read-only, lists are tuples), so a preflight cannot change what the
gate passes on. Each returned item becomes a gate error with code `preflight` at `params.<path>`.

A table pandas could not read at all (a row with more fields than the header, text that is not UTF-8:
the profile's `malformed`) is refused here for every workflow, preflight or not, with code `format`:
every job that reads it would fail.

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

from snakegate.contract import array_values, artifacts, sequence_facts, table_profile
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
        view.update(table_profile.table_facts(path, artifacts.delimiter(type_name), artifacts.encoding(type_name)))
    arrays = artifacts.array_headers(path, type_name)
    if arrays is not None:
        view["arrays"] = array_values.with_small_values(path, arrays)
    contigs = artifacts.sequence_names(path, type_name)
    if contigs is not None:
        view["contigs"] = contigs
    if type_name == "fasta":
        view.update(sequence_facts.fasta_facts(path))
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
    """The workflow's preflight findings as gate errors; any failure of the preflight itself is one too; a
    table no job could read is refused whether or not the workflow ships a preflight.

    `good` maps each input artifact's param parts to its resolved path (the gate's data step).
    """
    where = f"workflows/{workflow_id}/{PREFLIGHT_FILE}"
    path = folder / PREFLIGHT_FILE
    try:
        views = artifact_views(schema, params, good)
    except (OSError, ValueError) as exc:  # changed since the data step checked it: refuse, never crash
        return [GateError(path="params", code="preflight",
                          message=f"an input file could not be read for the preflight check ({exc})",
                          hint="check that the input files exist, are readable and were not changed meanwhile")]
    errors = malformed_tables(views)
    if errors:
        return errors
    try:
        source = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        return [_broken(where, f"{path} cannot be read ({exc.strerror or exc})")]
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


def malformed_tables(views: Mapping[str, dict]) -> list[GateError]:
    """A `format` error for each table pandas could not read at all (its profile's `malformed` sentence)."""
    return [GateError(path=f"params.{key}", code="format", message=f"`{key}`: {view['malformed']}",
                      hint=f"fix the table `{key}` points at, or point it at another one")
            for key, view in views.items() if view.get("malformed")]


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
