"""Hand a gated invocation to Snakemake: make the run folder, run the top-level Snakefile, follow it.

`execute()` gates, writes runs/<run_id>/config.yaml (fully explicit) and
run.json, starts `python -m snakemake` on the registry's top-level Snakefile
(which gates again and records provenance), streams progress, and finalises
run.json: status, timings, exit code, the failing rule and its log, partial
outputs. SIGINT/SIGTERM are passed to Snakemake so it stops its jobs cleanly;
the run is then marked cancelled.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from snakegate import forkseed, pinning
from snakegate.entry import explicit_config, invocation_record, missing_outputs, reuse_fields, strip_prefix, MODULE_PREFIX
from snakegate.errors import ExitCode, UserError
from snakegate.gate import gate
from snakegate.models import GateError, GateResult
from snakegate.provenance import runstore, snakemakelog
from snakegate.registry import Registry
from snakegate.runconfig import dump_yaml
from snakegate.settings import Settings


@dataclass
class RunOptions:
    """The Snakemake options snakegate passes through; nothing else reaches Snakemake."""

    cores: int = 1
    executor: str | None = None
    jobs: int | None = None
    profile: str | None = None  # a profile file that passed profiles.check (an absolute path)
    forcerun: list[str] = field(default_factory=list)  # rule names of the workflow (no module prefix)
    seed_from: Path | None = None  # a parent run whose outputs are copied in first (fork)

    def snakemake_args(self) -> list[str]:
        # The run folder's own flock excludes a second execution of the same run, and run folders never
        # share outputs. Snakemake's directory lock adds nothing here and hurts concurrent runs: every
        # Snakemake that finishes deletes the whole shared .snakemake/locks folder, other runs' locks too.
        # No workflow profile: profiles/default/ next to the Snakefile would otherwise be read unchecked.
        args = ["--nolock", "--workflow-profile", "none", "--cores", str(self.cores)]
        if self.executor:
            args += ["--executor", self.executor]
        if self.jobs:
            args += ["--jobs", str(self.jobs)]
        if self.profile:
            args += ["--profile", self.profile]
        if self.forcerun:
            args += ["--forcerun", *[MODULE_PREFIX + r for r in self.forcerun]]
            # copied outputs carry no Snakemake metadata; decide by mtime plus the rules forced above
            args += ["--rerun-triggers", "mtime"]
        return args


@dataclass
class RunOutcome:
    run_id: str
    run_dir: Path
    status: str
    exit_code: int
    record: dict
    gate: GateResult


class Progress:
    """Reads Snakemake's stderr line by line and keeps done/total and the current rule."""

    def __init__(self, on_update: Callable[[dict], None] | None = None):
        self.done = 0
        self.total = None
        self.rule = None
        self.executed: list[str] = []
        self.on_update = on_update

    def feed(self, line: str) -> None:
        text = line.strip()
        if m := snakemakelog.PROGRESS.match(text):
            self.done, self.total = int(m.group(1)), int(m.group(2))
        elif m := snakemakelog.RULE_START.match(text):
            self.rule = strip_prefix(m.group(1))
            if m.group(1) != "snakegate_all":
                self.executed.append(self.rule)
        else:
            return
        if self.on_update:
            self.on_update({"done": self.done, "total": self.total, "rule": self.rule})


def _unique_run_dir(settings: Settings, invocation_id: str) -> tuple[str, Path]:
    base = runstore.new_run_id(invocation_id)
    run_id, n = base, 1
    while (settings.runs_dir / run_id).exists():
        n += 1
        run_id = f"{base}.{n}"
    return run_id, settings.runs_dir / run_id


def execute(registry: Registry, settings: Settings, invocation: dict, options: RunOptions,
            on_progress: Callable[[dict], None] | None = None, echo: Callable[[str], None] | None = None,
            extra_record: dict | None = None, cancel: threading.Event | None = None,
            pinned_from: Path | None = None) -> RunOutcome:
    """Gate, then run. Raises GateRejected (a UserError) when the gate refuses; nothing is left then.

    Setting `cancel` (from another thread, e.g. the chat's cancel key) stops the run as SIGINT to the front
    end does: Snakemake is signalled, stops its jobs, and the run is recorded `cancelled`.
    `pinned_from`: a recorded run whose workflow copy the invocation is gated against and run with
    (rerun, fork), whatever the registry holds now."""
    if pinned_from is None and options.seed_from is not None:
        pinned_from = options.seed_from  # a fork runs its parent's code, whoever starts it (CLI, chat)
    if pinned_from is not None:
        try:
            registry = pinning.registry_of_run(registry, pinned_from, str(invocation.get("workflow")))
        except pinning.PinError as exc:
            raise UserError(str(exc), ExitCode.INVALID) from None
    # Building the DAG is Snakemake's own first step, before any job, so the gate's copy of that step
    # would only double its cost (8 s of a 10,000-job run). Everything else is proved here; a DAG
    # Snakemake cannot build is explained by the full gate afterwards (see _dag_refusal).
    result = gate(registry, invocation, settings, check_dag=False)
    if not result.ok:
        raise GateRejected(result)
    settings.runs_dir.mkdir(parents=True, exist_ok=True)
    run_id, run_dir = _unique_run_dir(settings, result.invocation_id)
    lock = runstore.RunLock(run_dir).acquire()
    refusal = None
    try:
        outcome = _run(registry, settings, result, run_id, run_dir, options, on_progress, echo, extra_record or {},
                       cancel)
        refusal = _dag_refusal(registry, settings, invocation, outcome)
    except (GateRejected, forkseed.ReuseRefused) as exc:
        lock.release()
        pinning.remove_tree(run_dir)  # nothing ran: a refusal leaves nothing
        if isinstance(exc, forkseed.ReuseRefused):
            raise UserError(str(exc), ExitCode.INVALID) from None
        raise
    finally:
        lock.release()
    if refusal is not None:
        pinning.remove_tree(run_dir)  # no job ran: a refusal leaves nothing, as before a run
        raise GateRejected(refusal)
    return outcome


class GateRejected(UserError):
    def __init__(self, result: GateResult):
        super().__init__("the gate refused the run config", ExitCode.INVALID)
        self.result = result


def _copy_workflow(registry: Registry, result: GateResult, run_dir: Path):
    """runs/<run_id>/workflow/: the gated workflow folder, verified, read-only; the Workflow read from it."""
    try:
        pinning.make_copy(registry.get(result.workflow).folder, run_dir, result.invocation.workflow_hash)
        return pinning.load_copy(run_dir, result.workflow)
    except pinning.PinError as exc:
        raise GateRejected(GateResult(ok=False, workflow=result.workflow, errors=[GateError(
            path="workflow", code="invocation_mismatch", message=str(exc),
            hint="run again once the workflow folder is no longer being edited")])) from None


def _dag_refusal(registry, settings, invocation, outcome: "RunOutcome") -> GateResult | None:
    """When Snakemake failed before starting any job, the full gate (with its DAG step) says whether
    the params were the reason; its refusal then replaces the failed run. None otherwise."""
    if outcome.status != "failed" or outcome.record.get("jobs_executed"):
        return None
    full = gate(registry, invocation, settings)
    return None if full.ok else full


def _run(registry, settings, result, run_id, run_dir, options, on_progress, echo, extra_record,
         cancel=None) -> RunOutcome:
    runstore.write_text_atomic(run_dir / runstore.CONFIG_YAML, dump_yaml(explicit_config(result, run_id)),
                              mode=runstore.CONFIG_MODE)
    runstore.write_json_atomic(run_dir / runstore.INVOCATION_JSON, invocation_record(result))
    runstore.update_run(run_dir, run_id=run_id, workflow=result.workflow, version=result.invocation.version,
                        invocation_id=result.invocation_id, status="running", stage="gated",
                        started=runstore.utc_now(), source="snakegate run",
                        options={"cores": options.cores, "executor": options.executor, "jobs": options.jobs,
                                 "profile": options.profile},
                        **extra_record)
    wf = _copy_workflow(registry, result, run_dir)
    if options.seed_from is not None:
        runstore.update_run(run_dir, **{forkseed.SEEDED_KEY: forkseed.seed(options.seed_from, run_dir,
                                                                             settings.registry_root)})

    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(settings.registry_root / "Snakefile"),
           "--configfile", str(run_dir / runstore.CONFIG_YAML), "--directory", str(settings.registry_root),
           *options.snakemake_args()]
    # The gated id travels outside the config file, for Snakemake only: the top-level Snakefile refuses
    # a config that gates to anything else. A profile reaches Snakemake only as checked (--profile).
    env = {k: v for k, v in os.environ.items() if k != "SNAKEMAKE_PROFILE"}
    env.update({runstore.LOCK_HELD_ENV: run_id, pinning.EXPECTED_ENV: result.invocation_id})
    progress = Progress(on_progress)
    log_lines: list[str] = []
    cancelled = {"signal": None}

    proc = subprocess.Popen(cmd, cwd=settings.registry_root, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, bufsize=1, preexec_fn=_child_setup)
    runstore.update_run(run_dir, stage="snakemake-started", snakemake_pid=proc.pid)

    def forward(signum, _frame):
        # Snakemake stops its jobs cleanly on SIGINT; if it has not stopped in time, escalate.
        first = cancelled["signal"] is None
        cancelled["signal"] = cancelled["signal"] or signal.Signals(signum).name
        _signal_group(proc, signal.SIGINT if first else signal.SIGTERM)
        if first:
            _escalate_later(proc)

    if cancel is not None:
        _cancel_when_set(cancel, proc, lambda: forward(signal.SIGINT, None))
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    in_main_thread = _in_main_thread()
    if in_main_thread:
        for s in previous:
            signal.signal(s, forward)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            log_lines.append(line)
            progress.feed(line)
            if echo:
                echo(line)
        exit_code = proc.wait()
    finally:
        if in_main_thread:
            for s, handler in previous.items():
                signal.signal(s, handler)
    (run_dir / runstore.SNAKEMAKE_LOG).exists() or (run_dir / runstore.SNAKEMAKE_LOG).write_text(
        "".join(log_lines), encoding="utf-8")
    return _finalise(wf, settings, run_id, run_dir, result, exit_code, cancelled["signal"], progress,
                     "".join(log_lines))


def _child_setup() -> None:
    """Own process group (so a cancel reaches Snakemake's jobs too) and default SIGINT: a shell that
    starts `snakegate run &` ignores SIGINT, and an ignored signal would be inherited by Snakemake."""
    os.setsid()
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _signal_group(proc: subprocess.Popen, sig: signal.Signals) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


CANCEL_GRACE_S = (20.0, 10.0)  # SIGINT -> wait -> SIGTERM -> wait -> SIGKILL


def _escalate_later(proc: subprocess.Popen) -> None:
    def escalate():
        for sig, wait in ((signal.SIGTERM, CANCEL_GRACE_S[0]), (signal.SIGKILL, CANCEL_GRACE_S[1])):
            try:
                proc.wait(timeout=wait)
                return
            except subprocess.TimeoutExpired:
                _signal_group(proc, sig)

    threading.Thread(target=escalate, daemon=True).start()


def _cancel_when_set(cancel: threading.Event, proc: subprocess.Popen, stop: Callable[[], None]) -> None:
    """Watch `cancel` while Snakemake runs; once set, stop the run exactly as a SIGINT to the front end would."""
    def watch():
        while proc.poll() is None:
            if cancel.wait(0.2):
                stop()
                return

    threading.Thread(target=watch, name="snakegate-cancel-watch", daemon=True).start()


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _finalise(wf, settings, run_id, run_dir, result, exit_code, signal_name, progress, log_text) -> RunOutcome:
    record = runstore.read_run(run_dir)
    outputs = _context(wf, settings, run_dir, result).declared_outputs()
    if signal_name:
        status = "cancelled"
    elif exit_code == 0:
        # a dry run, a profile or an executor that built less: what is missing is not a success
        status = "incomplete" if missing_outputs(outputs) else "succeeded"
    else:
        status = "failed"
    # the handler's end time when it ran, so run.json and the PROV record agree
    fields = {"status": status, "stage": "finished", "exit_code": exit_code,
              "ended": record.get("ended") if status != "cancelled" and record.get("ended") else runstore.utc_now(),
              "outputs": outputs, "progress": {"done": progress.done, "total": progress.total},
              "jobs_executed": progress.executed}
    fields["duration_s"] = runstore.duration_s({"started": record.get("started"), "ended": fields["ended"]})
    if status == "incomplete":
        fields["missing_outputs"] = missing_outputs(outputs)
    fields.update(reuse_fields(run_dir))
    if status != "succeeded":
        fields["partial_outputs"] = sorted(
            p.relative_to(run_dir).as_posix() for p in (run_dir / "results").rglob("*") if p.is_file())
    if status == "failed":
        failed = snakemakelog.failed_jobs(log_text)
        if failed:
            fields["failed_rule"] = strip_prefix(failed[0].rule)
            fields["failed_log"] = failed[0].log
            fields["error"] = record.get("error") or failed[0].error or failed[0].message
        elif record.get("error"):
            fields["error"] = record["error"]  # the handler's or the gate's own words (input_changed, a refusal)
        elif "failed_rule" not in record:
            tail = [l for l in log_text.splitlines() if l.strip()][-8:]
            fields["error"] = " | ".join(tail)
    if status == "cancelled":
        fields["cancelled_by"] = signal_name
    record = runstore.update_run(run_dir, **fields)
    if status == "cancelled" or not (run_dir / "prov.json").exists():
        # Snakemake's handlers did not run or ran before the cancel: record what exists now
        _record_provenance_after(wf, settings, run_dir, result, status)
    return RunOutcome(run_id=run_id, run_dir=run_dir, status=status, exit_code=exit_code, record=record, gate=result)


def _context(wf, settings, run_dir, result):
    """The same context the top-level Snakefile builds (Snakemake runs from the registry root)."""
    from snakegate.entry import RunContext, output_prefix

    return RunContext(settings=settings, workflow=wf, result=result, run_id=run_dir.name, run_dir=run_dir,
                      prefix=output_prefix(run_dir, settings.registry_root), source="snakegate run")


def _record_provenance_after(wf, settings, run_dir, result, status) -> None:
    from snakegate.entry import record_provenance

    log = run_dir / runstore.SNAKEMAKE_LOG
    record_provenance(_context(wf, settings, run_dir, result), str(log) if log.exists() else None, status)
