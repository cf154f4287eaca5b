"""Glue for the top-level Snakefile: gate the run config, place outputs under runs/<run_id>/,
and keep run.json and the provenance current from Snakemake's onstart/onsuccess/onerror.

This is what makes plain `snakemake --configfile run.yaml` as strict as
`snakegate run`: the Snakefile calls `prepare()` at parse time, before any DAG
or job exists, and a refused config stops Snakemake with the gate's messages.
`prepare()` knows three callers:

- `snakegate run`'s Snakemake child: the run folder and its workflow copy exist; the config must
  gate, against the copy, to exactly the invocation id the parent passed in EXPECTED_ENV.
- a cluster (or subprocess) job re-reading the Snakefile: the same against the id in the run
  folder's invocation.json, written by the head; nothing is created.
- plain `snakemake` on a login node or laptop: gate against the registry, take a run folder that
  has never held a run (a finished run is never overwritten), lock it and make the copy.

The handlers never build PROV themselves: they call provenance.capture.
"""

from __future__ import annotations

import atexit
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from snakegate import pinning
from snakegate.errors import UserError
from snakegate.gate import gate
from snakegate.models import GateError, GateResult
from snakegate.provenance import runstore
from snakegate.registry import Registry, Workflow
from snakegate.settings import Settings, load_settings

MODULE_PREFIX = "wf_"  # rules of the included workflow are renamed wf_<rule>


class GateRefused(Exception):
    """Raised at Snakefile parse time; Snakemake prints it and exits non-zero before any job."""

    def __init__(self, text: str, errors: list[GateError] | None = None):
        super().__init__(text)
        self.errors = errors or []


def refusal_text(result: GateResult) -> str:
    lines = [f"snakegate gate refused this run config ({len(result.errors)} problem(s)); no job was started:"]
    for err in result.errors:
        lines.append(f"  - {err.path or '(config)'} [{err.code}]: {err.message}")
        if err.hint:
            lines.append(f"      fix: {err.hint}")
    return "\n".join(lines)


def explicit_config(result: GateResult, run_id: str) -> dict:
    """runs/<run_id>/config.yaml: every param resolved, absolute input paths, the ids that pin it."""
    return {
        "workflow": result.workflow,
        "version": result.invocation.version,
        "invocation_id": result.invocation_id,
        "run_id": run_id,
        "params": result.resolved_params,
    }


def invocation_record(result: GateResult) -> dict:
    from snakegate import __version__
    return {"invocation_id": result.invocation_id, "invocation": result.invocation.model_dump(),
            "gate": {"ok": True, "errors": [], "checks": result.checks, "at": result.gated_at,
                     "snakegate_version": __version__}}


@dataclass
class RunContext:
    settings: Settings
    workflow: Workflow  # the run folder's copy when one exists: what the jobs execute
    result: GateResult
    run_id: str
    run_dir: Path
    prefix: str
    source: str
    _lock: runstore.RunLock | None = field(default=None, repr=False)
    started: bool = field(default=False, repr=False)

    @property
    def snakefile(self) -> str:
        return str(self.workflow.snakefile)

    @property
    def params(self) -> dict:
        return self.result.resolved_params

    @property
    def targets(self) -> list[str]:
        """Every declared output, patterns ({param}, {sheet.column}) expanded from the gated params."""
        from snakegate.outputs import expand_outputs

        return [f"{self.prefix}/{path}" for _name, path, _type in
                expand_outputs(self.workflow.manifest.outputs, self.params, self.workflow.schema)]

    def apply_resources(self, workflow) -> None:
        """The contract's per-rule resources (workflow.yaml) onto the included rules, from the gated params."""
        from snakegate import resources

        rules = self.workflow.manifest.model_dump(exclude_none=True)["rules"]
        try:
            resources.apply(workflow, resources.resolve(rules, self.params), MODULE_PREFIX)
        except resources.ResourceError as exc:
            raise GateRefused(f"snakegate cannot give workflow {self.workflow.id}'s rules their resources: {exc}; "
                              f"no job was started (fix workflows/{self.workflow.id}/workflow.yaml, "
                              f"then `snakegate check {self.workflow.id}`)") from None

    # ---- Snakemake handlers -------------------------------------------------------------
    def on_start(self, log=None, touch: bool = False) -> None:
        if touch:
            # --touch marks outputs up to date without running a job: that is not a run of the invocation
            raise GateRefused(f"snakegate refused to start run {self.run_id}: --touch (the touch executor) makes "
                              "outputs look current without running any job; run without it")
        self.started = True
        if self._lock is None and os.environ.get(runstore.LOCK_HELD_ENV) != self.run_id:
            try:
                self._lock = runstore.RunLock(self.run_dir).acquire()
            except runstore.RunBusy as exc:
                raise GateRefused(f"{exc}; wait for it to finish or cancel it") from None
        self.run_dir.mkdir(parents=True, exist_ok=True)
        config_path = self.run_dir / runstore.CONFIG_YAML
        if not config_path.exists():
            from snakegate.runconfig import dump_yaml
            runstore.write_text_atomic(config_path, dump_yaml(explicit_config(self.result, self.run_id)),
                                        mode=runstore.CONFIG_MODE)
        inv_path = self.run_dir / runstore.INVOCATION_JSON
        # `snakegate run` recorded its own gate (the decision, before the run started); this parse-time
        # gate re-proved the same invocation, so that record stays. Plain snakemake writes this one.
        if runstore.read_json(inv_path).get("invocation_id") != self.result.invocation_id:
            runstore.write_json_atomic(inv_path, invocation_record(self.result))
        record = runstore.read_run(self.run_dir)
        runstore.update_run(
            self.run_dir, run_id=self.run_id, workflow=self.result.workflow, version=self.result.invocation.version,
            invocation_id=self.result.invocation_id, status="running", stage="jobs-running",
            started=record.get("started") or runstore.utc_now(), source=record.get("source", self.source),
            outputs=self.declared_outputs(),
        )

    def on_success(self, log=None) -> None:
        # after the last job, before anything is called succeeded: the inputs must still be the gated
        # files, and every declared output must exist
        changed = pinning.recheck_inputs(self.workflow.schema, self.params, self.result.invocation.inputs,
                                         self.settings)
        if changed:
            message = pinning.input_changed_text(changed)
            self._finish("failed", log, input_changed=changed, error=message, error_code="input_changed")
            raise GateRefused(message)
        missing = missing_outputs(self.declared_outputs())
        if missing:
            self._finish("incomplete", log, missing_outputs=missing)
        else:
            self._finish("succeeded", log)

    def on_error(self, log=None) -> None:
        self._finish("failed", log)

    def _finish(self, status: str, log, **extra) -> None:
        from snakegate.provenance import snakemakelog

        log_path = _first(log)
        if log_path and Path(log_path).is_file():
            shutil.copyfile(log_path, self.run_dir / runstore.SNAKEMAKE_LOG)
        fields = {"status": status, "stage": "finished", "ended": runstore.utc_now(), "outputs": self.declared_outputs(),
                  **extra}
        if status == "failed" and "error" not in extra:
            failed = snakemakelog.read_failed_jobs(log_path)
            if failed:
                job = failed[0]
                fields["failed_rule"] = strip_prefix(job.rule)
                fields["failed_log"] = job.log
                fields["error"] = job.error or job.message
        fields.update(reuse_fields(self.run_dir))
        record = runstore.update_run(self.run_dir, **fields)
        record_provenance(self, log_path, record["status"])
        if self._lock is not None:
            self._lock.release()

    def declared_outputs(self) -> list[dict]:
        from snakegate.outputs import expand_outputs

        return [{"name": name, "path": f"{self.prefix}/{path}", "type": type_name,
                 "exists": (self.run_dir / path).is_file()}
                for name, path, type_name in expand_outputs(self.workflow.manifest.outputs, self.params,
                                                            self.workflow.schema)]


def missing_outputs(outputs: list[dict]) -> list[str]:
    """The declared outputs (as listed by declared_outputs) that do not exist: a run without them
    is `incomplete`, never `succeeded`."""
    return [o["path"] for o in outputs if not o.get("exists")]


def reuse_fields(run_dir: Path) -> dict:
    """For a fork: which of the files copied from the parent no job rewrote (run.json `reused`)."""
    from snakegate import forkseed

    seeded = runstore.read_run(run_dir).get(forkseed.SEEDED_KEY)
    return {"reused": forkseed.still_reused(run_dir, seeded)} if seeded else {}


def record_provenance(ctx: RunContext, snakemake_log: str | None, status: str) -> None:
    """Write the run's PROV record; a failure here is reported, never hides the run's status."""
    try:
        from snakegate.provenance import capture
    except ImportError:
        return
    try:
        capture.capture(
            run_dir=ctx.run_dir, registry_root=ctx.settings.registry_root, workdir=Path.cwd(),
            manifest=ctx.workflow.manifest.model_dump(), schema=ctx.workflow.schema,
            workflow_folder=ctx.workflow.folder, snakemake_log=snakemake_log, status=status,
            rule_prefix=MODULE_PREFIX, record_hostname=ctx.settings.record_hostname,
        )
    except Exception as exc:  # noqa: BLE001 - provenance must not turn a finished run into a crash
        runstore.update_run(ctx.run_dir, provenance_error=f"{type(exc).__name__}: {exc}")


def _first(log):
    if isinstance(log, (list, tuple)):
        return str(log[0]) if log else None
    return str(log) if log else None


def strip_prefix(rule: str) -> str:
    return rule[len(MODULE_PREFIX):] if rule.startswith(MODULE_PREFIX) else rule


def output_prefix(run_dir: Path, workdir: Path) -> str:
    """Where Snakemake, working in `workdir`, puts the run's outputs: relative when inside it."""
    rel = os.path.relpath(run_dir, workdir)
    return run_dir.as_posix() if rel.startswith("..") else Path(rel).as_posix()


def refuse_unsafe_configfiles(configfiles) -> None:
    """Re-read every --configfile with snakegate's strict loader. Snakemake has already loaded them with a lax
    one: it ran any YTE template, kept the last of two duplicate keys and built Python objects from
    `!!python/...` tags, none of which is visible in the `config` it hands over. (Alias bombs and other
    hostile shapes are visible there, and the gate's first step refuses them.)"""
    from snakegate.runconfig import read_run_config

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
        raise GateRefused(refusal_text(GateResult(ok=False, errors=[error])))


# ---- prepare: called by the top-level Snakefile at parse time -------------------------------------
def prepare(config: dict, registry_root: str | os.PathLike, configfiles=(), exec_mode=None) -> RunContext:
    """Gate `config` (as Snakemake loaded it from `configfiles`) for the registry at `registry_root`;
    refuse or return the context. `exec_mode` is Snakemake's (workflow.exec_mode): anything but
    DEFAULT is a job."""
    root = Path(registry_root).resolve()
    refuse_unsafe_configfiles(configfiles)
    if not config:
        raise GateRefused("no run config: pass one with `snakemake --configfile <run.yaml>` "
                          "(write one with `snakegate init <workflow>`)")
    settings = load_settings(root)
    registry = Registry.load(root)
    if exec_mode is not None and getattr(exec_mode, "name", str(exec_mode)).upper() != "DEFAULT":
        return _prepare_job(dict(config), settings, registry)
    expected = os.environ.get(pinning.EXPECTED_ENV)
    if expected:
        return _prepare_under_runner(dict(config), settings, registry, expected)
    return _prepare_plain(dict(config), settings, registry)


def _refuse(code: str, path: str, message: str, hint: str | None = None) -> GateRefused:
    error = GateError(path=path, code=code, message=message, hint=hint)
    return GateRefused(refusal_text(GateResult(ok=False, errors=[error])), [error])


def _mismatch(expected: str, actual: str, where: str) -> GateRefused:
    return _refuse("invocation_mismatch", "invocation_id",
                   f"{where} pins invocation {expected[:12]}…, but the run config Snakemake read gates as "
                   f"{actual[:12]}…: the config (a param, `invocation_id`, an override) or an input changed "
                   "after the gate", "run the approved config unchanged, or have the new one gated and approved")


def _gate_copy(config: dict, settings: Settings, registry: Registry, run_dir: Path,
               workflow_id: str) -> tuple[Workflow, GateResult]:
    """Gate `config` against the run folder's workflow copy (never the registry, which may have moved on)."""
    try:
        wf = pinning.load_copy(run_dir, workflow_id)
    except pinning.PinError as exc:
        raise _refuse("invocation_mismatch", "workflow", str(exc)) from None
    result = gate(pinning.pinned_registry(registry, wf), config, settings, check_dag=False)
    if not result.ok:
        raise GateRefused(refusal_text(result), result.errors)
    return wf, result


def _prepare_under_runner(config: dict, settings: Settings, registry: Registry, expected: str) -> RunContext:
    """`snakegate run`'s child: the parent made the run folder and its copy and passed the gated id."""
    run_id = os.environ.get(runstore.LOCK_HELD_ENV)
    if not run_id:
        raise _refuse("invocation_mismatch", "run_id", f"{pinning.EXPECTED_ENV} is set without "
                      f"{runstore.LOCK_HELD_ENV}: only `snakegate run` starts Snakemake with a pinned invocation")
    run_dir = settings.runs_dir / run_id
    try:
        if config.get("run_id") != run_id:
            raise _refuse("invocation_mismatch", "run_id",
                          f"snakegate run started run {run_id}, but the run config Snakemake read names run "
                          f"{config.get('run_id')!r}: the config was changed after the gate")
        recorded = runstore.read_json(run_dir / runstore.INVOCATION_JSON)
        wf, result = _gate_copy(config, settings, registry, run_dir,
                                (recorded.get("invocation") or {}).get("workflow") or str(config.get("workflow")))
        if result.invocation_id != expected:
            raise _mismatch(expected, result.invocation_id, "snakegate run")
    except GateRefused as refusal:
        # the parent holds the folder: say in its record why nothing ran
        first = refusal.errors[0] if refusal.errors else None
        if run_dir.is_dir() and first is not None:
            runstore.update_run(run_dir, error=f"{first.code}: {first.message}", error_code=first.code,
                                refused=[e.model_dump() for e in refusal.errors])
        raise
    return RunContext(settings=settings, workflow=wf, result=result, run_id=run_id, run_dir=run_dir,
                      prefix=output_prefix(run_dir, Path.cwd()), source="snakegate run")


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
    wf, result = _gate_copy(config, settings, registry, run_dir,
                            (recorded.get("invocation") or {}).get("workflow") or str(config.get("workflow")))
    if result.invocation_id != expected:
        raise _mismatch(expected, result.invocation_id, f"the run folder {run_dir}")
    return RunContext(settings=settings, workflow=wf, result=result, run_id=run_id, run_dir=run_dir,
                      prefix=output_prefix(run_dir, Path.cwd()), source="job")


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
        pinning.make_copy(registry.get(result.workflow).folder, run_dir, result.invocation.workflow_hash)
        wf = pinning.load_copy(run_dir, result.workflow)
    except (GateRefused, pinning.PinError) as exc:
        lock.release()
        _remove_if_unused(run_dir)
        if isinstance(exc, GateRefused):
            raise
        raise _refuse("invocation_mismatch", "workflow", str(exc)) from None
    ctx = RunContext(settings=settings, workflow=wf, result=result, run_id=run_id, run_dir=run_dir,
                     prefix=output_prefix(run_dir, Path.cwd()), source="snakemake", _lock=lock)
    atexit.register(_never_started, ctx)
    return ctx


# what a run folder holds before its first job: the lock, the copy (and a copy being made)
_PREPARED = {runstore.LOCK_FILE, pinning.COPY_DIR}


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
