"""The gate: (registry, invocation, settings) -> GateResult. Nothing runs unless this says ok.

Order of proof: the run config's shape (hostile shapes first: alias bombs, depth,
huge integers, NaN, non-text keys; see `configshape`), the workflow and version, the params
against the contract (defaults filled first), then the data (artifact paths
inside the data roots after resolving `..` and symlinks, cheap format checks,
`x-column-of` against table headers, sample-sheet rows and the files they name
(`snakegate.contract.sheets`)), then the workflow's own preflight (cross-field
rules on params and artifact headers, `snakegate.gate.preflight`) and its external
tools on PATH (`snakegate.gate.tools`), then Snakemake's DAG for the resolved
params. The gate reads input files (headers, hashes) but never writes, except the registry's key
for `x-sensitive` values the first time one is hashed (provenance/secrets.py).

The bytes checked are the bytes hashed (`snakegate.gate.reads`): under `snakegate run` every content check reads
the input's staged copy, made before its first check; otherwise an input whose stamps moved between its first
check and its hashing is refused (input_changed).
"""

from __future__ import annotations

import copy
import datetime as _dt
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from snakegate.contract import artifacts, sheets
from snakegate import metaschemas
from snakegate.gate import preflight, sheet_paths, tools
from snakegate.config.shape import shape_errors
from snakegate.contract.dialect import (
    did_you_mean, fill_defaults, format_path, is_builtin, iter_column_nodes, iter_nodes, schema_errors,
)
from snakegate.gate.dag import DagError, build_dag
from snakegate.gate.reads import InputReads, Refused
from snakegate.gate.upstream import Upstream, compatible
from snakegate.provenance import secrets
from snakegate.provenance.hashing import canonical_json, folder_hash, sha256_file, sha256_text
from snakegate.models import GateError, GateResult, Invocation
from snakegate.registry.workflows import Registry, Workflow
from snakegate.registry.settings import Settings


def _set(obj: Any, parts: tuple, value: Any) -> None:
    for p in parts[:-1]:
        obj = obj[p]
    obj[parts[-1]] = value


def _inside(path: Path, roots) -> bool:
    return any(path == r or r in path.parents for r in roots)


def _shape_errors(invocation: Any) -> list[GateError]:
    if not isinstance(invocation, dict):
        return [GateError(path="", code="invalid_yaml", message="the run config must be a mapping with `workflow` and `params`",
                          hint="start from `snakegate init <workflow>`")]
    errors = []
    allowed = list(metaschemas.load("invocation.schema.json")["properties"])
    for key in invocation:
        if key not in allowed:
            close = did_you_mean(str(key), allowed)
            errors.append(GateError(path=str(key), code="unknown_param", message=f"`{key}` is not a run-config field",
                                    hint=f"did you mean `{close}`?" if close else f"allowed: {', '.join(allowed)}",
                                    choices=allowed))
    if "workflow" not in invocation:
        errors.append(GateError(path="workflow", code="required", message="`workflow` is required: which workflow to run",
                                hint="add `workflow: <id>` (see `snakegate list`)"))
    elif not isinstance(invocation["workflow"], str):
        errors.append(GateError(path="workflow", code="type", message="`workflow` must be a workflow id string",
                                hint="see `snakegate list`"))
    if "params" in invocation and invocation["params"] is not None and not isinstance(invocation["params"], dict):
        errors.append(GateError(path="params", code="type",
                                message=f"`params` must be a mapping of parameter names to values (got {invocation['params']!r})",
                                hint="write `params:` followed by indented `name: value` lines"))
    properties = metaschemas.load("invocation.schema.json")["properties"]
    for key in ("version", "run_id", "invocation_id"):
        if key not in invocation:
            continue
        value = invocation[key]
        if not isinstance(value, str):
            errors.append(GateError(path=key, code="type", message=f"`{key}` must be a string (got {value!r})",
                                    hint=f"quote the value, e.g. {key}: \"{value}\""))
            continue
        # run_id names a folder under runs/: `../x` or `a/b` must never get that far
        pattern = properties[key].get("pattern")
        if (pattern and not re.search(pattern, value)) or (key == "run_id" and set(value) <= {"."}):
            errors.append(GateError(path=key, code="pattern",
                                    message=f"`{key}` must match {pattern}"
                                            + (" and be more than dots" if key == "run_id" else "") + f" (got {value!r})",
                                    hint=(f"remove `{key}`; snakegate writes it" if key != "version"
                                          else "use the version `snakegate show` prints")))
    return errors


def _resolve_artifacts(wf: Workflow, params: dict, settings: Settings, errors: list[GateError], reads: InputReads,
                       upstream: dict[str, Upstream] | None = None):
    """Check every x-artifact value; return {path-parts: resolved Path, or the Upstream output a plan's
    earlier step will produce} for the good ones. Each file's format check reads `reads.path()` of it."""
    failed = {e.path for e in errors}
    roots = [r.resolve() for r in settings.data_roots]
    good: dict[tuple, Path | Upstream] = {}
    for node in iter_nodes(wf.schema, params):
        type_name = node.schema.get("x-artifact")
        if not type_name or node.is_key or not isinstance(node.value, str) or is_builtin(node):
            continue
        if node.path in failed:
            continue
        if upstream and node.value in upstream:
            made = upstream[node.value]
            if not compatible(type_name, made.type):
                errors.append(GateError(
                    path=node.path, code="plan_type_mismatch",
                    message=f"`{node.path}` takes a {type_name} file, but {made.shown} is a {made.type}",
                    hint=f"take an output of type {type_name} from an earlier step, or a file from the data roots"))
            elif sheets.row_schema(node.schema) is not None:
                errors.append(GateError(
                    path=node.path, code="plan_not_a_file",
                    message=f"`{node.path}` is a sample sheet, and the gate checks every row of one before any "
                            f"job: it cannot come from {made.shown}, which does not exist yet",
                    hint="give a sample sheet from the data roots"))
            else:
                good[node.parts] = made
            continue
        builtins = node.schema.get("x-builtins") or []
        if builtins and node.value.startswith("builtin:"):
            close = did_you_mean(node.value, builtins)
            errors.append(GateError(path=node.path, code="enum",
                                    message=f"`{node.path}` names an unknown built-in dataset `{node.value}` "
                                            f"(built-ins: {', '.join(builtins)})",
                                    hint=f"did you mean `{close}`?" if close else "use a built-in or a file path",
                                    choices=builtins))
            continue
        roots_text = ", ".join(str(r) for r in roots) or "(none configured)"
        try:
            raw = Path(node.value).expanduser()
            resolved = (raw if raw.is_absolute() else settings.registry_root / raw).resolve()
            is_file, is_dir = resolved.is_file(), resolved.is_dir()
        except (OSError, RuntimeError, ValueError) as exc:  # symlink loop, name too long, NUL byte, no $HOME
            reason = "a symlink loop" if isinstance(exc, RuntimeError) else (getattr(exc, "strerror", None) or str(exc))
            errors.append(GateError(path=node.path, code="not_found",
                                    message=f"`{node.path}` = `{node.value}` cannot be resolved to a file ({reason})",
                                    hint="give the path of an existing file inside a data root"))
            continue
        if not _inside(resolved, roots):
            errors.append(GateError(
                path=node.path, code="path_outside_roots",
                message=f"`{node.path}` = `{node.value}` resolves to {resolved}, outside the allowed data roots ({roots_text})",
                hint="copy the file into a data root, or add its folder to data_roots in snakegate.toml"))
            continue
        if not is_file and not (is_dir and artifacts.is_directory(type_name)):
            what = ("is a folder, not a file" if is_dir else
                    "is not a regular file" if os.path.lexists(resolved) else "does not exist")
            errors.append(GateError(path=node.path, code="not_found",
                                    message=f"`{node.path}` = `{node.value}`: {resolved} {what}",
                                    hint="check the spelling; paths are relative to the registry root " f"({settings.registry_root})"))
            continue
        try:  # staged now, or stamped now: every content check below reads what will be hashed
            readable = reads.path(node.path, resolved)
            problem = artifacts.check(readable, type_name)
        except Refused as exc:  # the stager's own check (a folder holding a link), or a swap since resolving
            if exc.code != "format":
                errors.append(_unreadable(node.path, resolved, exc, node.value))
                continue
            problem = exc.says
        except OSError as exc:
            errors.append(_unreadable(node.path, resolved, exc))
            continue
        if problem:
            errors.append(GateError(path=node.path, code="format", message=f"`{node.path}` = `{node.value}` {problem}",
                                    hint=f"point `{node.path}` at a {type_name} file"))
            continue
        good[node.parts] = resolved
    return good


def _column_errors(wf: Workflow, params: dict, good: dict[tuple, Path | Upstream], errors: list[GateError]) -> None:
    """`x-column-of` values against their tables' headers; `good` maps each table to what its checks read."""
    headers: dict[str, list[str] | None] = {}
    top = wf.schema.get("properties") or {}
    for node, ref in iter_column_nodes(wf.schema, params):
        table = good.get((ref,))
        if table is None:
            continue  # the table param itself failed, is a builtin, or is absent: nothing to compare against
        if isinstance(table, Upstream):
            if table.columns is None:
                errors.append(GateError(
                    path=node.path, code="plan_columns_unknown",
                    message=f"`{node.path}` must be a column of {table.shown}, which declares no columns, so it "
                            "cannot be checked before the plan runs",
                    hint=f"declare the columns of `{table.output}` in its workflow.yaml (outputs.{table.output}"
                         ".columns), or take the table from the data roots"))
                continue
            header, where = list(table.columns), f"{table.shown} (its declared columns)"
        else:
            if ref not in headers:
                headers[ref] = artifacts.header(table, top[ref]["x-artifact"])
            header, where = headers[ref] or [], params[ref]
        if node.value not in header:
            close = did_you_mean(node.value, header)
            what = "key" if node.is_key else "value"
            errors.append(GateError(
                path=node.path, code="column_missing",
                message=f"`{node.path}` {what} `{node.value}` is not a column of {where} "
                        f"(columns: {', '.join(header)})",
                hint=f"did you mean `{close}`?" if close else "use one of the table's columns", choices=header))


def _unreadable(key: str, path: Path, exc: OSError, value: Any = None) -> GateError:
    if isinstance(exc, Refused):  # the stager says what it found there
        shown = f"`{key}` = `{value}`" if value is not None else f"`{key}` = {path}"
        return GateError(path=key, code=exc.code, message=f"{shown}: {exc.says}",
                         hint=exc.hint or "check that the file exists and is readable")
    return GateError(path=key, code="not_found", message=f"`{key}`: {path} cannot be read ({exc.strerror or exc})",
                     hint="check that the file exists and is readable")


def _portable(path: Path, root: Path) -> str:
    """Registry-relative when inside the registry, so the id survives moving the checkout."""
    try:
        return path.relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def gate(registry: Registry, invocation: Any, settings: Settings, *, check_dag: bool = True,
         check_tools: bool = True, staged: dict[str, tuple[str, str]] | None = None,
         upstream: dict[str, Upstream] | None = None,
         digest_input: Callable[[str, Path], str] | None = None,
         read_input: Callable[[str, Path], Path | None] | None = None) -> GateResult:
    """Prove an invocation complete and runnable, or say precisely why not.

    `check_tools=False` proves the invocation without asking whether this machine has the
    workflow's external tools (`snakegate check` reports those as warnings instead).
    `staged` (input key -> (source path, sha256)): a run's staging record (snakegate.run.stage); an input
    whose source resolves to the recorded path takes the digest its staged copy was verified with instead
    of reading the source again (the jobs read the copy, whose bytes are checked before each job).
    `upstream` (placeholder -> Upstream): a plan step's inputs that an earlier step will produce
    (snakegate.plan.prove); they are checked against that output's declaration, never read or hashed.
    `digest_input(key, path)`: what gives each input's sha256 once everything else is proved, instead of reading
    the file here (`snakegate run` copies it into its run's staging as it hashes it: snakegate.run.stage.Prestage);
    an OSError from it refuses, as an unreadable input does.
    `read_input(key, path)`: the staged copy of an input, staged when first asked (Prestage.copy) or already in a
    run folder (None for an input it has no copy of), which every content check of that input then reads instead
    of the source (snakegate.gate.reads); without a copy the checks read the source, and an input whose stamps
    moved between its first check and its hashing is refused."""
    # Hostile shapes first: an alias bomb or a 5,000-digit integer must be refused before anything walks or prints it.
    errors = shape_errors(invocation) or _shape_errors(invocation)
    if errors:
        return GateResult(ok=False, workflow=invocation.get("workflow") if isinstance(invocation, dict) and
                          isinstance(invocation.get("workflow"), str) else None, errors=errors)
    wf_id = invocation["workflow"]
    wf = registry.get(wf_id)
    if wf is None:
        if wf_id in registry.broken:
            return GateResult(ok=False, workflow=wf_id, errors=[GateError(
                path="workflow", code="unknown_workflow",
                message=f"workflow `{wf_id}` cannot be loaded: {registry.broken[wf_id]}", hint="fix its workflow.yaml")])
        close = did_you_mean(wf_id, registry.ids())
        return GateResult(ok=False, workflow=wf_id, errors=[GateError(
            path="workflow", code="unknown_workflow", message=f"no workflow `{wf_id}` in the registry at {registry.root}",
            hint=f"did you mean `{close}`?" if close else f"available: {', '.join(registry.ids())}",
            choices=registry.ids())])
    version = invocation.get("version")
    if version is not None and version != wf.manifest.version:
        return GateResult(ok=False, workflow=wf_id, errors=[GateError(
            path="version", code="version_mismatch",
            message=f"`version` is {version} but the registry has {wf_id} {wf.manifest.version}",
            hint=f"set `version: {wf.manifest.version}` or remove `version` to use the registry's")])

    params = fill_defaults(wf.schema, invocation.get("params") or {})
    errors = schema_errors(wf.schema, params)
    flagged = {e.path for e in errors}
    # JSON Schema lets NaN through every bound; a schema's own default may hold one too
    errors.extend(e for e in shape_errors(params, ("params",)) if e.path not in flagged)
    reads = InputReads(read_input)
    good = _resolve_artifacts(wf, params, settings, errors, reads, upstream)
    _column_errors(wf, params, reads.readable(good), errors)
    files_good = {parts: path for parts, path in good.items() if not isinstance(path, Upstream)}
    sheet_inputs = sheets.gate_tables(wf.schema, params, files_good, settings.registry_root,
                                      [r.resolve() for r in settings.data_roots], errors, read=reads.path)
    if not errors:  # a preflight reasons about params that passed the contract and data that exist
        errors.extend(preflight.run(wf.folder, wf_id, wf.schema, params, reads.readable(good)))
    if check_tools:
        errors.extend(tools.tool_errors(wf_id, wf.manifest))
        errors.extend(tools.package_errors(wf_id, wf.manifest))
    if errors:
        return GateResult(ok=False, workflow=wf_id, errors=errors)

    absolute = copy.deepcopy(params)
    portable = copy.deepcopy(params)
    files: dict[str, Path] = {}
    for parts, path in files_good.items():
        _set(absolute, parts, str(path))
        _set(portable, parts, _portable(path, settings.registry_root))
        files[format_path(("params",) + parts)] = path
    files.update(sheet_inputs)  # files named inside sample sheets are inputs like params' files
    inputs = {}
    for key, path in files.items():
        try:
            inputs[key] = (digest_input(key, path) if digest_input is not None
                           else _digest(path, (staged or {}).get(key)))
        except OSError as exc:  # removed or made unreadable since it was checked: refuse, never crash
            return GateResult(ok=False, workflow=wf_id, errors=[_unreadable(key, path, exc)])
    changed = reads.changed(files)  # the bytes hashed are the bytes checked, or the gate says no
    if changed:
        return GateResult(ok=False, workflow=wf_id, errors=changed)

    if check_dag:
        try:
            # the DAG is built in a temporary folder: sheet paths resolved as above, against the registry root
            build_dag(wf.snakefile, sheet_paths.with_absolute_paths(wf.schema, absolute, settings.registry_root))
        except DagError as exc:
            return GateResult(ok=False, workflow=wf_id, errors=[GateError(
                path="params", code="dag", message=f"Snakemake cannot build the jobs for these params: {exc.message}",
                hint="the params pass the contract but the workflow rejects them; see the workflow's SKILL.md")])

    if secrets.sensitive_values(wf.schema, portable):
        # the canonical invocation (and invocation.json, and the id) carries a keyed hash of each
        # x-sensitive value, never the value: the same value and registry key give the same id
        try:
            portable, _ = secrets.redact(wf.schema, portable, secrets.registry_key(settings.registry_root))
        except secrets.SecretKeyError as exc:
            return GateResult(ok=False, workflow=wf_id, errors=[GateError(
                path="params", code="secret_key", message=str(exc).split("; ")[0],
                hint=str(exc).split("; ", 1)[-1])])

    canonical = Invocation(workflow=wf_id, version=wf.manifest.version, workflow_hash=wf.content_hash(),
                           params=portable, inputs=dict(sorted(inputs.items())))
    invocation_id = invocation_id_of(canonical)
    claimed = invocation.get("invocation_id")
    if claimed is not None and claimed != invocation_id:
        return GateResult(ok=False, workflow=wf_id, errors=[GateError(
            path="invocation_id", code="invocation_mismatch",
            message=(f"this config was approved as invocation {claimed[:12]}… but now gates as {invocation_id[:12]}…: "
                     f"the workflow folder (content hash {canonical.workflow_hash[:12]}…), an input file or a "
                     "parameter changed since it was written"),
            hint="restore the original files, or remove `invocation_id` and have the new invocation approved")])
    checks = ["shape", "workflow", "version", "contract", "data_roots", "formats", "columns", "sample_sheets",
              "preflight", *(["tools"] if check_tools else []), *(["dag"] if check_dag else []),
              *(["invocation_id"] if claimed is not None else [])]
    return GateResult(ok=True, workflow=wf_id, invocation_id=invocation_id, invocation=canonical,
                      resolved_params=absolute, input_files={k: str(v) for k, v in sorted(files.items())}, checks=checks,
                      gated_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds"))


def _digest(path: Path, staged: tuple[str, str] | None) -> str:
    if staged is not None and staged[0] == str(path):
        return staged[1]
    return folder_hash(path) if path.is_dir() else sha256_file(path)


def invocation_id_of(invocation: Invocation) -> str:
    return sha256_text(canonical_json(invocation.model_dump()))
