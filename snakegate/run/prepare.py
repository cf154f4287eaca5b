"""The top-level Snakefile's first step: gate the run config Snakemake read, pin it, and hand back
the run context; or refuse before any DAG or job exists.

This is what makes plain `snakemake --configfile run.yaml` as strict as `snakegate run`.
`prepare()` knows three callers:

- `snakegate run`'s Snakemake child: the run folder and its workflow copy exist; the config must
  gate, against the copy, to exactly the invocation id the parent passed in EXPECTED_ENV.
- a cluster (or subprocess) job re-reading the Snakefile: the Snakefile calls snakegate.run.jobgate's light
  gate instead (no DAG, no input hashes, no schema defaults); only when a job cannot tell its run
  otherwise does it come here, to gate against the id in the run folder's invocation.json, written by
  the head. Nothing is created.
- plain `snakemake` on a login node or laptop: gate against the registry, take a run folder that
  has never held a run (a finished run is never overwritten), lock it, make the copy and stage the
  inputs (snakegate.run.stage).

Every caller hands the workflow the staged copies of the inputs, never the data roots' files.
It writes only inside the run folder it prepares (the copy, the staged inputs, the lock, a refusal's record).
"""

from __future__ import annotations

import atexit
import os
from pathlib import Path

from snakegate.run import cluster, pinning, plan_run, stage, staged
from snakegate.plan.config import is_plan
from snakegate.plan.prove import gate_plan
from snakegate.run.entry import GateRefused, RunContext, output_prefix, refusal_text
from snakegate.errors import UserError
from snakegate.gate.prove import gate
from snakegate.run.handshake import JOB_INVOCATION_ENV, JOB_RUN_ENV
from snakegate.models import GateError, GateResult
from snakegate.provenance import runindex, runstore
from snakegate.registry.workflows import Registry, Workflow
from snakegate.registry.settings import Settings, load_settings


def refuse_unsafe_configfiles(configfiles) -> None:
    """Re-read every --configfile with snakegate's strict loader. Snakemake has already loaded them with a lax
    one: it ran any YTE template, kept the last of two duplicate keys and built Python objects from
    `!!python/...` tags, none of which is visible in the `config` it hands over. (Alias bombs and other
    hostile shapes are visible there, and the gate's first step refuses them.)"""
    from snakegate.config.read import read_run_config

    for path in configfiles or ():
        try:
            _, error = read_run_config(path)
        except UserError as exc:
            error = GateError(path="", code="not_found", message=exc.message, hint="check the --configfile path")
        if error is None:
            continue
        if error.code == "yte_config":
            error = error.model_copy(update={"message": error.message + "; Snakemake has already evaluated it, "
                                                                        "and the run stops here"})
        raise GateRefused(refusal_text(GateResult(ok=False, errors=[error])), [error])


def prepare(config: dict, registry_root: str | os.PathLike, configfiles=(), exec_mode=None) -> RunContext:
    """Gate `config` (as Snakemake loaded it from `configfiles`) for the registry at `registry_root`;
    refuse or return the context. `exec_mode` is Snakemake's (workflow.exec_mode): anything but
    DEFAULT is a job."""
    root = Path(registry_root).resolve()
    in_job = exec_mode is not None and getattr(exec_mode, "name", str(exec_mode)).upper() != "DEFAULT"
    expected = None if in_job else os.environ.get(pinning.EXPECTED_ENV)
    try:
        refuse_unsafe_configfiles(configfiles)
        if not config:
            raise GateRefused("no run config: pass one with `snakemake --configfile <run.yaml>` "
                              "(write one with `snakegate init <workflow>`)")
        settings = load_settings(root)
        plan = is_plan(config)
        if in_job:
            return (_prepare_plan_job if plan else _prepare_job)(dict(config), settings, Registry.load(root))
        if expected:
            ctx = (_prepare_plan_under_runner if plan else _prepare_under_runner)(
                dict(config), settings, Registry.load(root), expected)
        else:
            ctx = (_prepare_plan_plain if plan else _prepare_plain)(dict(config), settings, Registry.load(root))
        # the jobs (cluster jobs and spawned ones inherit this process's environment) find their run by
        # it, even when the config has no run_id, and prove its record against the id (snakegate.run.jobgate)
        os.environ[JOB_RUN_ENV] = ctx.run_id
        os.environ[JOB_INVOCATION_ENV] = ctx.result.invocation_id
        cluster.default_partition()
        return ctx
    except GateRefused as refusal:
        if expected:
            _record_refusal(root, refusal)
        raise


def _record_refusal(root: Path, refusal: GateRefused) -> None:
    """Under `snakegate run` the parent holds the run folder: its record says why nothing ran."""
    run_id = os.environ.get(runstore.LOCK_HELD_ENV) or ""
    try:
        run_dir = load_settings(root).runs_dir / run_id
    except UserError:
        return
    if not runstore.is_safe_run_id(run_id) or not (run_dir / runstore.RUN_JSON).is_file():
        return
    first = refusal.errors[0] if refusal.errors else None
    runstore.update_run(run_dir, error=f"{first.code}: {first.message}" if first else str(refusal).splitlines()[0],
                        error_code=first.code if first else "refused",
                        refused=[e.model_dump() for e in refusal.errors])


def _refuse(code: str, path: str, message: str, hint: str | None = None) -> GateRefused:
    error = GateError(path=path, code=code, message=message, hint=hint)
    return GateRefused(refusal_text(GateResult(ok=False, errors=[error])), [error])


def _mismatch(expected: str, actual: str, where: str) -> GateRefused:
    return _refuse("invocation_mismatch", "invocation_id",
                   f"{where} pins invocation {expected[:12]}…, but the run config Snakemake read gates as "
                   f"{actual[:12]}…: the config (a param, `invocation_id`, an override) or an input changed "
                   "after the gate", "run the approved config unchanged, or have the new one gated and approved")


def _gate_copy(config: dict, settings: Settings, registry: Registry, run_dir: Path,
               workflow_id: str) -> tuple[Workflow, GateResult, dict]:
    """Gate `config` against the run folder's workflow copy (never the registry, which may have moved on),
    with the digests its staged inputs were verified with (the jobs read those copies, not the sources);
    the staging record must stage exactly the gated inputs."""
    try:
        wf = pinning.load_copy(run_dir, workflow_id)
    except pinning.PinError as exc:
        raise _refuse("invocation_mismatch", "workflow", str(exc)) from None
    entries, known, read_copies = _staging_of(run_dir, settings)
    result = gate(pinning.pinned_registry(registry, wf), config, settings, check_dag=False, staged=known,
                  read_input=read_copies)
    if not result.ok:
        raise GateRefused(refusal_text(result), result.errors)
    problem = staged.manifest_problem(entries, result.invocation.inputs)
    if problem:
        raise _refuse("invocation_mismatch", "inputs", f"run folder {run_dir}: {problem}",
                      "run the approved config again with `snakegate run`; a run's inputs are staged once, by its head")
    return wf, result, entries or {}


def _staging_of(run_dir: Path, settings: Settings):
    """A run folder's staging record (`entries`), as the gate takes it: `known` (input key -> (source path, the
    sha256 it was verified with)), and its read_input: each input's content checks read its copy in the run
    folder (what the jobs read), not the data root, where a writer could change the source after the staging and
    fail the run. A sample sheet's copy is rewritten to name the staged files, so a sheet, and any input whose
    copy is missing, is read at its source (stamped, snakegate.gate.reads)."""
    entries = staged.read_manifest(run_dir)
    known = {key: (str(settings.registry_root / e["source"]) if not Path(e["source"]).is_absolute() else e["source"],
                   e.get("gated_sha256", e.get("sha256")))
             for key, e in (entries or {}).items() if isinstance(e, dict) and isinstance(e.get("source"), str)}
    copies = {}
    for key, entry in (entries or {}).items():
        if key not in known or not isinstance(entry, dict) or "gated_sha256" in entry:
            continue
        copy = Path(run_dir) / str(entry.get("path", ""))
        if copy.resolve().is_relative_to(Path(run_dir).resolve() / staged.INPUTS_DIR) and copy.exists():
            copies[known[key][0]] = copy
    return entries, known, lambda key, source: copies.get(str(source))


def _prepare_under_runner(config: dict, settings: Settings, registry: Registry, expected: str) -> RunContext:
    """`snakegate run`'s child: the parent made the run folder and its copy and passed the gated id."""
    run_id = os.environ.get(runstore.LOCK_HELD_ENV)
    if not run_id:
        raise _refuse("invocation_mismatch", "run_id", f"{pinning.EXPECTED_ENV} is set without "
                      f"{runstore.LOCK_HELD_ENV}: only `snakegate run` starts Snakemake with a pinned invocation")
    run_dir = settings.runs_dir / run_id
    if config.get("run_id") != run_id:
        raise _refuse("invocation_mismatch", "run_id",
                      f"snakegate run started run {run_id}, but the run config Snakemake read names run "
                      f"{config.get('run_id')!r}: the config was changed after the gate")
    recorded = runstore.read_json(run_dir / runstore.INVOCATION_JSON)
    wf, result, entries = _gate_copy(config, settings, registry, run_dir,
                                     (recorded.get("invocation") or {}).get("workflow") or str(config.get("workflow")))
    if result.invocation_id != expected:
        raise _mismatch(expected, result.invocation_id, "snakegate run")
    if runindex.pinned(settings.registry_root, run_id) != expected:
        raise _refuse("invocation_mismatch", "run_id", f"the registry's run index does not pin run {run_id} to "
                      f"invocation {expected[:12]}… (only `snakegate run` and the top-level Snakefile start runs)")
    return RunContext(settings=settings, workflow=wf, result=result, run_id=run_id, run_dir=run_dir,
                      prefix=output_prefix(run_dir, Path.cwd()), source="snakegate run", staged=entries)


def _prepare_job(config: dict, settings: Settings, registry: Registry) -> RunContext:
    """A job on a cluster node (or a local subprocess job) re-reading the Snakefile: the head node's
    invocation.json is the pin; nothing is created or locked here."""
    run_id = config.get("run_id")
    if not isinstance(run_id, str) or not runstore.is_safe_run_id(run_id):
        # a config without run_id runs into plain-<id>: find the id as the head did
        result = gate(registry, config, settings, check_dag=False)
        if not result.ok:
            raise GateRefused(refusal_text(result))
        run_id = f"plain-{result.invocation_id[:12]}"
    run_dir = settings.runs_dir / run_id
    recorded = runstore.read_json(run_dir / runstore.INVOCATION_JSON)
    expected = recorded.get("invocation_id")
    if not isinstance(expected, str):
        raise _refuse("invocation_mismatch", "run_id", f"run folder {run_dir} has no invocation.json: a job runs "
                      "only inside a run whose head (snakegate run or snakemake) gated it")
    wf, result, entries = _gate_copy(config, settings, registry, run_dir,
                                     (recorded.get("invocation") or {}).get("workflow") or str(config.get("workflow")))
    if result.invocation_id != expected:
        raise _mismatch(expected, result.invocation_id, f"the run folder {run_dir}")
    pinned = runindex.pinned(settings.registry_root, run_id)
    if pinned != expected:
        raise _refuse("invocation_mismatch", "run_id",
                      f"the registry's run index pins run {run_id} to "
                      f"{(pinned[:12] + '…') if pinned else 'nothing'}, but its run folder holds invocation "
                      f"{expected[:12]}…: the run folder's record was changed after its head gated it")
    return RunContext(settings=settings, workflow=wf, result=result, run_id=run_id, run_dir=run_dir,
                      prefix=output_prefix(run_dir, Path.cwd()), source="job", staged=entries)


def _prepare_plain(config: dict, settings: Settings, registry: Registry) -> RunContext:
    """Plain `snakemake`: gate, take a fresh run folder under its lock, copy the workflow into it."""
    # The DAG is Snakemake's own job right after this; everything else is the same gate as `snakegate run`.
    result = gate(registry, config, settings, check_dag=False)
    if not result.ok:
        raise GateRefused(refusal_text(result))
    run_id = config.get("run_id") or f"plain-{result.invocation_id[:12]}"
    run_dir = settings.runs_dir / run_id
    try:
        lock = runstore.RunLock(run_dir).acquire()
    except runstore.RunBusy as exc:
        raise GateRefused(f"{exc}; wait for it to finish or cancel it") from None
    try:
        _refuse_used_folder(run_dir, result)
        runindex.pin(settings.registry_root, run_id, result.invocation_id)
        pinning.make_copy(registry.get(result.workflow).folder, run_dir, result.invocation.workflow_hash)
        wf = pinning.load_copy(run_dir, result.workflow)
        entries = _stage_once(run_dir, wf, result, settings)
    except (GateRefused, pinning.PinError, stage.StageError, runindex.RunIndexError) as exc:
        lock.release()
        _remove_if_unused(run_dir)
        if isinstance(exc, GateRefused):
            raise
        if isinstance(exc, stage.StageError):
            changed = exc.changed[0] if exc.changed else {}
            raise _refuse("input_changed", changed.get("param", "params"), str(exc),
                          "run again: the gate hashes the inputs as they are now") from None
        if isinstance(exc, runindex.RunIndexError):
            raise _refuse("run_exists", "run_id", str(exc), "give the config a new run_id") from None
        raise _refuse("invocation_mismatch", "workflow", str(exc)) from None
    ctx = RunContext(settings=settings, workflow=wf, result=result, run_id=run_id, run_dir=run_dir,
                     prefix=output_prefix(run_dir, Path.cwd()), source="snakemake", _lock=lock, staged=entries)
    atexit.register(_never_started, ctx)
    return ctx


def _stage_once(run_dir: Path, wf: Workflow, result: GateResult, settings: Settings) -> dict:
    """Stage the inputs into a folder that has none yet; a folder whose inputs are staged (a plain
    `snakemake` run resumed before its first job) must stage exactly these."""
    entries = staged.read_manifest(run_dir)
    if entries is None:
        pinning.remove_tree(run_dir / staged.INPUTS_DIR)  # a staging that never finished: start it again
        stage.stage(run_dir, result.input_files, result.invocation.inputs, wf.schema, result.resolved_params,
                    settings.registry_root, settings.stage_inputs)
        entries = staged.read_manifest(run_dir) or {}
    problem = staged.manifest_problem(entries, result.invocation.inputs)
    if problem:
        raise _refuse("invocation_mismatch", "inputs", f"run folder {run_dir}: {problem}")
    return entries


# ---- a plan of several workflows (snakegate.run.plan_run) ----------------------------------------------
def _gate_plan_copies(config: dict, settings: Settings, registry: Registry, run_dir: Path):
    """Gate a plan config against the run folder's step copies, with the digests its staged inputs were
    verified with; the staging record must stage exactly the gated inputs."""
    try:
        copies = plan_run.load_copies(run_dir, config)
    except pinning.PinError as exc:
        raise _refuse("invocation_mismatch", "steps", str(exc)) from None
    entries, known, read_copies = _staging_of(run_dir, settings)
    plan = gate_plan(plan_run.pinned_registry(registry, copies), config, settings, check_dag=False, staged=known,
                     read_input=read_copies)
    if not plan.ok:
        raise GateRefused(refusal_text(plan), plan.errors)
    problem = staged.manifest_problem(entries, plan_run.gated_inputs(plan))
    if problem:
        raise _refuse("invocation_mismatch", "inputs", f"run folder {run_dir}: {problem}",
                      "run the approved plan again with `snakegate run`; a run's inputs are staged once, by its head")
    return plan, copies, entries or {}


def _plan_context(settings, plan, copies, entries, run_id, run_dir, source, lock=None):
    return plan_run.PlanRunContext(settings=settings, workflow=copies[plan.order[0]], result=plan, run_id=run_id,
                                   run_dir=run_dir, prefix=output_prefix(run_dir, Path.cwd()), source=source,
                                   _lock=lock, staged=entries, copies=copies)


def _prepare_plan_under_runner(config: dict, settings: Settings, registry: Registry, expected: str):
    run_id = os.environ.get(runstore.LOCK_HELD_ENV)
    if not run_id or config.get("run_id") != run_id:
        raise _refuse("invocation_mismatch", "run_id", f"snakegate run started run {run_id}, but the plan config "
                      f"Snakemake read names run {config.get('run_id')!r}: the config was changed after the gate")
    run_dir = settings.runs_dir / run_id
    plan, copies, entries = _gate_plan_copies(config, settings, registry, run_dir)
    if plan.invocation_id != expected:
        raise _mismatch(expected, plan.invocation_id, "snakegate run")
    if runindex.pinned(settings.registry_root, run_id) != expected:
        raise _refuse("invocation_mismatch", "run_id", f"the registry's run index does not pin run {run_id} to "
                      f"invocation {expected[:12]}…")
    return _plan_context(settings, plan, copies, entries, run_id, run_dir, "snakegate run")


def _prepare_plan_job(config: dict, settings: Settings, registry: Registry):
    run_id = config.get("run_id")
    if not isinstance(run_id, str) or not runstore.is_safe_run_id(run_id):
        found = gate_plan(registry, config, settings, check_dag=False)
        if not found.ok:
            raise GateRefused(refusal_text(found))
        run_id = f"plain-{found.invocation_id[:12]}"
    run_dir = settings.runs_dir / run_id
    expected = runstore.read_json(run_dir / runstore.INVOCATION_JSON).get("invocation_id")
    pinned = runindex.pinned(settings.registry_root, run_id)
    if not isinstance(expected, str) or pinned != expected:
        raise _refuse("invocation_mismatch", "run_id", f"run folder {run_dir} has no invocation the registry's run "
                      "index pins: a job runs only inside a run whose head gated it")
    plan, copies, entries = _gate_plan_copies(config, settings, registry, run_dir)
    if plan.invocation_id != expected:
        raise _mismatch(expected, plan.invocation_id, f"the run folder {run_dir}")
    return _plan_context(settings, plan, copies, entries, run_id, run_dir, "job")


def _prepare_plan_plain(config: dict, settings: Settings, registry: Registry):
    """Plain `snakemake` with a plan: gate it whole, take a fresh run folder, copy every step, stage its inputs."""
    plan = gate_plan(registry, config, settings, check_dag=False)
    if not plan.ok:
        raise GateRefused(refusal_text(plan), plan.errors)
    run_id = config.get("run_id") or f"plain-{plan.invocation_id[:12]}"
    run_dir = settings.runs_dir / run_id
    try:
        lock = runstore.RunLock(run_dir).acquire()
    except runstore.RunBusy as exc:
        raise GateRefused(f"{exc}; wait for it to finish or cancel it") from None
    try:
        _refuse_used_folder(run_dir, plan)
        runindex.pin(settings.registry_root, run_id, plan.invocation_id)
        copies = plan_run.make_copies(registry, plan, run_dir)
        entries = staged.read_manifest(run_dir)
        if entries is None:
            pinning.remove_tree(run_dir / staged.INPUTS_DIR)
            entries = plan_run.stage_plan(run_dir, plan, copies, settings)
        problem = staged.manifest_problem(entries, plan_run.gated_inputs(plan))
        if problem:
            raise _refuse("invocation_mismatch", "inputs", f"run folder {run_dir}: {problem}")
    except (GateRefused, pinning.PinError, stage.StageError, runindex.RunIndexError) as exc:
        lock.release()
        _remove_if_unused(run_dir)
        if isinstance(exc, GateRefused):
            raise
        if isinstance(exc, stage.StageError):
            changed = exc.changed[0] if exc.changed else {}
            raise _refuse("input_changed", changed.get("param", "params"), str(exc),
                          "run again: the gate hashes the inputs as they are now") from None
        if isinstance(exc, runindex.RunIndexError):
            raise _refuse("run_exists", "run_id", str(exc), "give the config a new run_id") from None
        raise _refuse("invocation_mismatch", "steps", str(exc)) from None
    ctx = _plan_context(settings, plan, copies, entries, run_id, run_dir, "snakemake", lock)
    atexit.register(_never_started, ctx)
    return ctx


# what a run folder holds before its first job: the lock, the copy and the staged inputs (and a copy being made)
_PREPARED = {runstore.LOCK_FILE, pinning.COPY_DIR, runstore.SOURCE_JSON, staged.INPUTS_DIR, staged.MANIFEST,
             plan_run.STEPS_DIR}


def _unused(run_dir: Path) -> bool:
    return all(p.name in _PREPARED or p.name.startswith(f".{pinning.COPY_DIR}.tmp-") for p in run_dir.iterdir())


def _refuse_used_folder(run_dir: Path, result: GateResult) -> None:
    """A run folder that has held a run (any record or output) is never run into again: its outputs
    would be overwritten while its record and config still describe the earlier run."""
    if _unused(run_dir):
        return
    record = runstore.read_run(run_dir)
    recorded = record.get("invocation_id") or runstore.read_json(run_dir / runstore.INVOCATION_JSON).get("invocation_id")
    if record:
        what = (f"holds run {run_dir.name} of another invocation ({str(recorded)[:12]}…)"
                if recorded and recorded != result.invocation_id
                else f"holds run {run_dir.name}, already {record.get('status', 'started')}")
    else:
        names = sorted(p.name for p in run_dir.iterdir())
        what = f"already holds files ({', '.join(names[:5])}{', …' if len(names) > 5 else ''})"
    raise _refuse("run_exists", "run_id", f"run folder {run_dir} {what}; a run folder is never run into twice, so "
                  "its outputs and record stay as they are",
                  f"give the config a new run_id (e.g. `--config run_id=<new-name>`), or repeat the run with "
                  f"`snakegate rerun {run_dir.name}`")


def _remove_if_unused(run_dir: Path) -> None:
    if run_dir.is_dir() and _unused(run_dir):
        pinning.remove_tree(run_dir)


def _never_started(ctx: RunContext) -> None:
    """At exit of a plain Snakemake that never reached its first job (a dry run, --list, a DAG error),
    leave no run folder. Jobs that ran without snakegate's handlers (--no-hooks) are recorded as such."""
    if ctx.started:
        return
    if ctx._lock is not None:
        ctx._lock.release()
        ctx._lock = None
    if not ctx.run_dir.is_dir():
        return
    if _unused(ctx.run_dir):
        pinning.remove_tree(ctx.run_dir)
        return
    if not (ctx.run_dir / runstore.RUN_JSON).exists():
        runstore.update_run(ctx.run_dir, run_id=ctx.run_id, workflow=ctx.result.workflow,
                            invocation_id=ctx.result.invocation_id, status="failed", stage="finished",
                            source=ctx.source, error_code="no_hooks",
                            error="Snakemake wrote into this run folder without snakegate's handlers (--no-hooks?): "
                                  "nothing was recorded or checked, so its outputs are not a run of the invocation")
