"""Glue for the top-level Snakefile: the run context it includes the workflow from, and the
handlers that keep run.json and the provenance current from Snakemake's onstart/onsuccess/onerror.

`snakegate.run.prepare.prepare()` builds the context at parse time (gate, pin, workflow copy); the
handlers here re-check the gated inputs and the declared outputs before a run is called
`succeeded`, record a failed job's own error (record.py) and a stop signal as a cancel
(signals.py, installed at onstart), and send each job's stderr to the run folder
(jobstderr.py). They never build PROV themselves: they call provenance.capture.
"""

from __future__ import annotations

import atexit
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from snakegate.run.handshake import Refused
from snakegate.models import GateError, GateResult
from snakegate.provenance import runstore
from snakegate.registry.workflows import Workflow
from snakegate.registry.settings import Settings

MODULE_PREFIX = "wf_"  # rules of the included workflow are renamed wf_<rule>
FOLDER_LOST = ("the run folder was deleted or emptied while the run was going: its record was written again at "
               "the end from the gated invocation; files made before that are gone")


class GateRefused(Refused):
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
    _watch: object | None = field(default=None, repr=False)  # signals.CancelWatch once jobs run
    _pulse: object | None = field(default=None, repr=False)  # heartbeat.Heartbeat once jobs run
    staged: dict | None = field(default=None, repr=False)  # inputs.json entries: the run's staged inputs
    _params: dict | None = field(default=None, repr=False)
    workdir: Path | None = field(default=None, repr=False)  # Snakemake's working directory, when not this process's

    @property
    def snakefile(self) -> str:
        return str(self.workflow.snakefile)

    @property
    def params(self) -> dict:
        """What the workflow is handed: the gated params with every input path naming its staged copy."""
        if self._params is None:
            from snakegate.run import staged

            self._params = staged.staged_params(self.result.resolved_params, self.staged, self.run_dir)
        return self._params

    @property
    def targets(self) -> list[str]:
        """Every declared output, patterns ({param}, {sheet.column}) expanded from the gated params."""
        from snakegate.contract.outputs import expand_outputs

        return [f"{self.prefix}/{path}" for _name, path, _type in
                expand_outputs(self.workflow.manifest.outputs, self.params, self.workflow.schema)]

    def workflow_default_target(self, workflow) -> list:
        """What the included workflow's own default target rule asks for, as Snakemake has it after
        `use rule * ... as wf_*` (paths already under the run folder): the inputs of a target-only rule
        (`rule all`), else the rule's outputs. `snakegate run` and plain `snakemake` then build what the
        workflow builds alone and under `snakegate test`; `succeeded` still means the declared outputs exist."""
        name = workflow.default_target
        if not name or not name.startswith(MODULE_PREFIX) or not workflow.is_rule(name):
            return []
        rule = workflow.get_rule(name)
        if rule.output:
            return [] if rule.has_wildcards() else list(rule.output)
        return list(rule.input)  # files, and the input functions of a `rule all` as they are

    def apply_resources(self, workflow) -> None:
        """The contract's per-rule resources (workflow.yaml) onto the included rules, from the gated params."""
        from snakegate.contract import resources

        rules = self.workflow.manifest.model_dump(exclude_none=True)["rules"]
        try:
            resources.apply(workflow, resources.resolve(rules, self.params), MODULE_PREFIX)
        except resources.ResourceError as exc:
            raise GateRefused(f"snakegate cannot give workflow {self.workflow.id}'s rules their resources: {exc}; "
                              f"no job was started (fix workflows/{self.workflow.id}/workflow.yaml, "
                              f"then `snakegate check {self.workflow.id}`)") from None

    def guard_jobs(self, workflow) -> None:
        """Each job's inputs checked against their records before it runs, its outputs hashed after (guard.py)."""
        from snakegate.run import guard

        guard.install(workflow, self.run_dir, self.staged, MODULE_PREFIX)

    def keep_job_stderr(self) -> None:
        """Each job's stderr into runs/<run_id>/stderr/ (see jobstderr.py), in every Snakemake process."""
        from snakegate.provenance.runrecords import log_mode
        from snakegate.run import jobstderr

        jobstderr.install(self.run_dir, MODULE_PREFIX, mode=log_mode(self.workflow.schema))
        jobstderr.redirect_spawned_job(self.run_dir, sys.argv, MODULE_PREFIX)

    # ---- Snakemake handlers -------------------------------------------------------------
    def on_start(self, log=None, touch: bool = False, workflow=None) -> None:
        from snakegate.run.signals import CancelWatch

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
        if self._lock is not None:
            self._lock.note_holder(f"pid {os.getpid()} (snakemake)")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        runstore.make_reserve(self.run_dir)
        config_path = self.run_dir / runstore.CONFIG_YAML
        if not config_path.exists():
            from snakegate.config.write import dump_config
            runstore.write_text_atomic(config_path, dump_config(self.explicit_config()), mode=runstore.CONFIG_MODE)
        inv_path = self.run_dir / runstore.INVOCATION_JSON
        # `snakegate run` recorded its own gate (the decision, before the run started); this parse-time
        # gate re-proved the same invocation, so that record stays. Plain snakemake writes this one.
        if runstore.read_json(inv_path).get("invocation_id") != self.result.invocation_id:
            runstore.write_json_atomic(inv_path, self.invocation_record())
        record = runstore.read_run(self.run_dir)
        runstore.update_run(
            self.run_dir, **self.identity(), status="running", stage="jobs-running",
            started=record.get("started") or runstore.utc_now(), source=record.get("source", self.source),
            outputs=self.declared_outputs(), snakemake_pid=os.getpid(), snakemake_log=self.recorded_path(_first(log)),
            workdir=os.getcwd() if self.settings.record_hostname else None,
            execution=_execution(workflow, self.settings.registry_root),
        )
        # from here on SIGTERM/SIGINT stop the jobs and are recorded as a cancel (signals.py)
        self._watch = CancelWatch(workflow, MODULE_PREFIX).install()
        # a pulse that bounds the moment of death of a run killed whole (heartbeat.py, stale.py)
        from snakegate.run.heartbeat import Heartbeat

        self._pulse = Heartbeat(self.run_dir).start()

    def recorded_path(self, path: str | None) -> str | None:
        """A path as run.json records it: as it is, or, when host paths stay out of records
        (`record_hostname = false`), relative to the working directory (the registry root) it lies in."""
        if not path or self.settings.record_hostname or not os.path.isabs(path):
            return path
        rel = os.path.relpath(path, os.getcwd())
        return rel if not rel.startswith("..") else os.path.basename(path)

    def on_success(self, log=None) -> None:
        # after the last job, before anything is called succeeded: the staged inputs must still be the
        # gated bytes, and every declared output must exist
        from snakegate.run import stage

        changed = stage.recheck(self.run_dir, self.staged, self.settings.registry_root)
        if changed:
            message = stage.changed_text(changed)
            self._close("failed", log, input_changed=changed, error=message, error_code="input_changed")
            raise GateRefused(message)
        from snakegate.run import guard

        changed = guard.final_check(self.run_dir)
        if changed:
            message = guard.changed_text(changed)
            self._close("failed", log, output_changed=changed, error=message, error_code="output_changed")
            raise GateRefused(message)
        missing = missing_outputs(self.declared_outputs())
        if missing:
            self._close("incomplete", log, missing_outputs=missing)
        else:
            self._close("succeeded", log)

    def on_error(self, log=None) -> None:
        self._close("failed", log)

    def _close(self, status: str, log, **extra) -> None:
        """Finish the record; a record that cannot be written is said on stderr, never a traceback."""
        watch = self._watch
        if self._pulse is not None:
            self._pulse.stop()
        if watch is not None:
            watch.disarm()
            if watch.signal and status == "failed":
                status = "cancelled"
        try:
            self._finish(status, log, watch, **extra)
        except OSError as exc:
            print(f"snakegate: the record of run {self.run_id} could not be finished in {self.run_dir}: "
                  f"{exc.strerror or exc}; `snakegate show-run {self.run_id}` will say so", file=sys.stderr)
        finally:
            if self._lock is not None:
                self._lock.release()
                self._lock = None

    def _finish(self, status: str, log, watch=None, **extra) -> None:
        from snakegate.provenance.runrecords import RunSecrets
        from snakegate.run import record as runrecord

        log_path = _first(log)
        lost = self.restore_if_emptied()
        # the run's sensitive values leave every log and record from here; console.log and Snakemake's own
        # log are still being written, so they are scrubbed when this process exits (and by snakegate run)
        hidden = RunSecrets.of(self.settings.registry_root, *self.secret_scope())
        if log_path and Path(log_path).is_file():
            try:
                hidden.copy(Path(log_path), self.run_dir / runstore.SNAKEMAKE_LOG)
            except OSError:
                pass  # the record below says what matters; the copy is a convenience
        runrecord.drop_empty_stderr(self.run_dir)
        hidden.scrub_run(self.run_dir, Path.cwd(), final=False)
        atexit.register(hidden.scrub_run, self.run_dir, Path.cwd())
        ended = runstore.utc_now()
        # the status first, so that it stands even if what follows fails; stage `provenance` until the
        # PROV record is written
        fields = {**self.identity(), **({"record_problem": lost} if lost else {}),
                  "snakemake_log": self.recorded_path(log_path),
                  "status": status, "stage": "provenance", "ended": ended, "outputs": self.declared_outputs(),
                  **runrecord.closing_fields(self.run_dir, Path.cwd(), status, runrecord.read_text(log_path),
                                             MODULE_PREFIX, cancelled_by=watch.signal if watch else None,
                                             running=watch.running_jobs if watch and watch.signal else None,
                                             hidden=hidden),
                  **extra, **reuse_fields(self.run_dir)}
        started = runstore.read_run(self.run_dir).get("started")
        fields["duration_s"] = runstore.duration_s({"started": started, "ended": ended})
        record = runstore.update_run(self.run_dir, **hidden.data(fields))
        if status == "failed" and record.get("failure"):
            _say_failure(self.run_id, self.run_dir, record["failure"])
        from snakegate.run import verdict

        verdict.record(self.run_dir)  # before the PROV record, which carries it, and the seal, which covers it
        if front_end_records():
            return  # stage `provenance`: `snakegate run` writes the record and the seal once Snakemake has exited
        record_provenance(self, log_path, record["status"])
        runstore.update_run(self.run_dir, stage="finished")
        runstore.drop_reserve(self.run_dir)
        from snakegate.provenance import seal

        seal.seal_finished(self.run_dir, self.settings.registry_root)

    # what differs between one workflow and a plan of several (snakegate.run.plan_run) -------------------
    def explicit_config(self) -> dict:
        return explicit_config(self.result, self.run_id)

    def invocation_record(self) -> dict:
        return invocation_record(self.result)

    def secret_scope(self) -> tuple[dict, dict]:
        """(schema, params) whose x-sensitive values the run's records must not hold."""
        return self.workflow.schema, self.params

    def declare_modules(self, workflow) -> None:
        """The workflow as one Snakemake module under the run folder's prefix, its rules as wf_<rule>."""
        from snakegate.plan.compose import declare

        declare(workflow, [{"name": "workflow", "snakefile": self.snakefile, "prefix": self.prefix,
                            "rule_prefix": MODULE_PREFIX, "params": self.params, "upstream": []}])

    def capture(self, snakemake_log: str | None, status: str) -> None:
        """Write the run's PROV record (snakegate.provenance.capture)."""
        from snakegate.provenance import capture

        capture.capture(
            run_dir=self.run_dir, registry_root=self.settings.registry_root, workdir=self.workdir or Path.cwd(),
            manifest=self.workflow.manifest.model_dump(), schema=self.workflow.schema,
            workflow_folder=self.workflow.folder, snakemake_log=snakemake_log, status=status,
            rule_prefix=MODULE_PREFIX, record_hostname=self.settings.record_hostname,
        )

    def identity(self) -> dict:
        """The fields that say which run a record is (written again at the end, in case the folder was lost)."""
        return {"run_id": self.run_id, "workflow": self.result.workflow, "version": self.result.invocation.version,
                "invocation_id": self.result.invocation_id}

    def restore_if_emptied(self) -> str | None:
        """When the run folder lost its invocation.json during the run (deleted, emptied), write it and
        config.yaml again from the gated invocation and return a sentence saying so; else None."""
        if (self.run_dir / runstore.INVOCATION_JSON).exists():
            return None
        from snakegate.config.write import dump_config

        self.run_dir.mkdir(parents=True, exist_ok=True)
        runstore.write_text_atomic(self.run_dir / runstore.CONFIG_YAML, dump_config(self.explicit_config()),
                                   mode=runstore.CONFIG_MODE)
        runstore.write_json_atomic(self.run_dir / runstore.INVOCATION_JSON, self.invocation_record())
        return FOLDER_LOST

    def declared_outputs(self) -> list[dict]:
        from snakegate.contract.outputs import expand_outputs

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
    from snakegate.run import reuse

    seeded = runstore.read_run(run_dir).get(reuse.SEEDED_KEY)
    return {"reused": reuse.still_reused(run_dir, seeded)} if seeded else {}


def front_end_records() -> bool:
    """Whether `snakegate run` started this Snakemake and is still its parent, to write the PROV record and the
    seal after it exits (handshake.FRONT_END_ENV). A front end that died left Snakemake to another parent: then
    this process writes them; one that dies after this answer leaves the run at stage `provenance`, which
    snakegate.run.stale completes when the run is next read."""
    from snakegate.run.handshake import FRONT_END_ENV

    pid = os.environ.get(FRONT_END_ENV, "")
    return pid.isdigit() and int(pid) == os.getppid()


def record_provenance(ctx: RunContext, snakemake_log: str | None, status: str) -> None:
    """Write the run's PROV record; a failure here is reported, never hides the run's status."""
    try:
        ctx.capture(snakemake_log, status)
    except Exception as exc:  # noqa: BLE001 - provenance must not turn a finished run into a crash
        problem = f"{exc.strerror or exc}" if isinstance(exc, OSError) else f"{type(exc).__name__}: {exc}"
        runstore.update_run(ctx.run_dir, provenance_error=problem)


def _say_failure(run_id: str, run_dir: Path, failure: dict) -> None:
    """A job's stderr goes to its file, not the terminal: say on stderr what failed and where to read more."""
    lines = [f"snakegate: run {run_id} failed in rule {failure['rule']}: {failure['exception']}: "
             f"{failure.get('message', '')}"]
    lines += [f"  | {line}" for line in (failure.get("log_tail") or [])[-5:]]
    if failure.get("log"):
        lines.append(f"  full log: {run_dir / failure['log'] if not Path(failure['log']).is_absolute() else failure['log']}")
    print("\n".join(lines), file=sys.stderr, flush=True)


def _execution(workflow, root: Path) -> dict | None:
    """run.json `execution`: the executor and the profile this Snakemake runs the jobs with (snakegate.run.cluster)."""
    if workflow is None:
        return None
    from snakegate.run import cluster

    return cluster.execution_facts(workflow, root)


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
