"""Hand a gated invocation to Snakemake: make the run folder, run the top-level Snakefile, follow it.

`execute()` gates, writes runs/<run_id>/config.yaml (fully explicit) and
run.json, and starts `python -m snakemake` on the registry's top-level
Snakefile (which gates again and records the run and its provenance itself)
detached from this process: in its own session, with its output going to
runs/<run_id>/console.log, which this process follows for progress, and
holding the run folder's lock, which it inherits. So a front end that dies
(SIGKILL, SIGHUP from a closed terminal or a dropped ssh session) leaves a run
that goes on and records itself. SIGINT/SIGTERM to the front end are passed to
Snakemake, whose handlers stop the jobs and record the run `cancelled` with the
signal (a `cancel` event set from another thread, the chat's cancel key, does
the same as SIGINT); if it does not stop in time the front end escalates to
SIGKILL (snakegate.run.process). After Snakemake exits the front end adds the
exit code, or records the end itself when the handlers never ran (a failure
before the first job, a kill: snakegate.run.finish).
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

from snakegate.entry import SNAKEFILE as ENTRY_SNAKEFILE
from snakegate.run import finish, pinning, process, reuse, stage
from snakegate.run.entry import explicit_config, invocation_record, strip_prefix, MODULE_PREFIX
from snakegate.run.finish import RunOutcome, is_plan_result  # RunOutcome: other modules import it from here
from snakegate.run.handshake import FRONT_END_ENV
from snakegate.errors import ExitCode, UserError
from snakegate.gate.prove import gate
from snakegate.models import GateError, GateResult
from snakegate.provenance import known, runindex, runrecords, runstore, snakemakelog
from snakegate.registry.workflows import Registry
from snakegate.config.write import dump_config
from snakegate.registry.settings import Settings


@dataclass
class RunOptions:
    """The Snakemake options snakegate passes through; nothing else reaches Snakemake."""

    cores: int | str = 1  # a number, or "all" as Snakemake takes it
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
    """A new run folder, made here: two runs of one config started in the same second get two folders."""
    base = runstore.new_run_id(invocation_id)
    run_id, n = base, 1
    while True:
        try:
            (settings.runs_dir / run_id).mkdir()
            return run_id, settings.runs_dir / run_id
        except FileExistsError:
            n += 1
            run_id = f"{base}.{n}"


def execute(registry: Registry, settings: Settings, invocation: dict, options: RunOptions,
            on_progress: Callable[[dict], None] | None = None, echo: Callable[[str], None] | None = None,
            extra_record: dict | None = None, cancel: threading.Event | None = None,
            pinned_from: Path | None = None, approved_invocation_id: str | None = None) -> RunOutcome:
    """Gate, then run. Raises GateRejected (a UserError) when the gate refuses; nothing is left then.

    Setting `cancel` (from another thread, e.g. the chat's cancel key) stops the run as SIGINT to the front
    end does: Snakemake is signalled, stops its jobs, and the run is recorded `cancelled`.
    `pinned_from`: a recorded run whose workflow copy the invocation is gated against and run with
    (rerun, fork), whatever the registry holds now. `approved_invocation_id`: the invocation a person approved
    ahead (a refinement's point); any other is refused here, before a run folder exists (NotApproved)."""
    if pinned_from is None and options.seed_from is not None:
        pinned_from = options.seed_from  # a fork runs its parent's code, whoever starts it (CLI, chat)
    if pinned_from is not None:
        from snakegate.run import integrity

        # a rerun or fork trusts its parent's record (its code, its outputs): only if the record proves itself
        check = integrity.check_record(pinned_from, settings.registry_root)
        if not check.ok:
            raise UserError(integrity.refusal_text(pinned_from, check, "run again"), ExitCode.INVALID)
        try:
            from snakegate.plan.config import is_plan

            if is_plan(invocation):
                from snakegate.run import plan_run

                registry = plan_run.fork_registry(registry, pinned_from, invocation)
            else:
                registry = pinning.registry_of_run(registry, pinned_from, str(invocation.get("workflow")))
        except pinning.PinError as exc:
            raise UserError(str(exc), ExitCode.INVALID) from None
    # Building the DAG is Snakemake's own first step, before any job, so the gate's copy of that step
    # would only double its cost (8 s of a 10,000-job run). Everything else is proved here; a DAG
    # Snakemake cannot build is explained by the full gate afterwards (see _dag_refusal).
    # Stage, then gate: the gate's digests are those of the copies made as it asks for them (one read of each
    # input); a refusal removes them
    prestage = _prestage(settings, invocation)
    run_dir = None
    try:
        result = _gate(registry, invocation, settings, check_dag=False, prestage=prestage)
        if not result.ok and prestage is not None and prestage.unwritable is not None:
            raise prestage.unwritable  # a full or read-only runs folder, said as such (below)
        if not result.ok:
            raise GateRejected(result)
        if approved_invocation_id is not None and result.invocation_id != approved_invocation_id:
            raise NotApproved(f"the gate proves invocation {result.invocation_id[:12]}, not the approved "
                              f"{approved_invocation_id[:12]}; nothing was run")
        settings.runs_dir.mkdir(parents=True, exist_ok=True)
        run_id, run_dir = _unique_run_dir(settings, result.invocation_id)
        lock = runstore.RunLock(run_dir).acquire()
    except OSError as exc:
        if prestage is not None:
            prestage.discard()
        if run_dir is not None:
            pinning.remove_tree(run_dir)
        raise RecordUnwritable(f"cannot make a run folder in {settings.runs_dir}: {exc.strerror or exc}; nothing "
                               "was run. Free space there or make it writable, then run again") from None
    except BaseException:
        if prestage is not None:
            prestage.discard()
        raise
    refusal = None
    try:
        outcome = _run(registry, settings, result, run_id, run_dir, options, on_progress, echo, extra_record or {},
                       lock, cancel, prestage)
        refusal = _dag_refusal(registry, settings, invocation, outcome)
    except (GateRejected, reuse.ReuseRefused) as exc:
        lock.close_shared()  # Snakemake never started: nobody else holds it
        pinning.remove_tree(run_dir)  # nothing ran: a refusal leaves nothing
        if isinstance(exc, reuse.ReuseRefused):
            raise UserError(str(exc), ExitCode.INVALID) from None
        raise
    except _NotStarted as exc:
        lock.close_shared()
        pinning.remove_tree(run_dir)
        raise RecordUnwritable(f"cannot write the run folder {run_dir}: {exc.reason}; nothing was run. Free space "
                               "there or make it writable, then run again") from None
    except OSError as exc:
        raise RecordUnwritable(f"run {run_id} ended but its record in {run_dir} could not be completed: "
                               f"{exc.strerror or exc}; `snakegate show-run {run_id}` says what is there") from None
    finally:
        # never LOCK_UN: it would unlock Snakemake's inherited descriptor too, were it still running
        lock.close_shared()
        if prestage is not None:
            prestage.discard()  # moved into the run folder by now, unless the run never got that far
    if refusal is not None:
        pinning.remove_tree(run_dir)  # no job ran: a refusal leaves nothing, as before a run
        raise GateRejected(refusal)
    return outcome


class NotApproved(UserError):
    """The gated invocation is not the one approved ahead: nothing runs."""

    def __init__(self, message: str):
        super().__init__(message, ExitCode.INVALID)


class RecordUnwritable(UserError):
    """The run folder cannot be written (full disk, read-only): a message naming it, exit 2."""

    def __init__(self, message: str):
        super().__init__(message, ExitCode.USAGE)


class _NotStarted(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class GateRejected(UserError):
    def __init__(self, result: GateResult):
        super().__init__("the gate refused the run config", ExitCode.INVALID)
        self.result = result


def _gate(registry: Registry, invocation: dict, settings: Settings, check_dag: bool = True,
          prestage: stage.Prestage | None = None):
    """The gate for a run config: a plan's (snakegate.plan.prove) or one workflow's, whose inputs `prestage`
    copies and hashes for it."""
    from snakegate.plan.config import is_plan

    if is_plan(invocation):
        from snakegate.plan.prove import gate_plan

        return gate_plan(registry, invocation, settings, check_dag=check_dag)
    return gate(registry, invocation, settings, check_dag=check_dag,
                digest_input=prestage.digest if prestage is not None else None,
                read_input=prestage.copy if prestage is not None else None)


def _prestage(settings: Settings, invocation: dict) -> stage.Prestage | None:
    """Where one workflow's inputs are staged while it is gated (snakegate.run.stage.Prestage); None for a plan
    (staged after its gate) or an unknown staging mode (refused when the inputs are staged)."""
    from snakegate.plan.config import is_plan

    if is_plan(invocation) or settings.stage_inputs not in stage.MODES:
        return None
    return stage.Prestage(settings.runs_dir, settings.registry_root, settings.stage_inputs)


def _copy_workflow(registry: Registry, result: GateResult, run_dir: Path):
    """runs/<run_id>/workflow/: the gated workflow folder, verified, read-only; the Workflow read from it.
    A plan: each step's, in runs/<run_id>/steps/<step>/workflow/; {step: Workflow}."""
    try:
        if is_plan_result(result):
            from snakegate.run import plan_run

            return plan_run.make_copies(registry, result, run_dir)
        pinning.make_copy(registry.get(result.workflow).folder, run_dir, result.invocation.workflow_hash)
        return pinning.load_copy(run_dir, result.workflow)
    except pinning.PinError as exc:
        raise GateRejected(GateResult(ok=False, workflow=result.workflow, errors=[GateError(
            path="workflow", code="invocation_mismatch", message=str(exc),
            hint="run again once the workflow folder is no longer being edited")])) from None


def _stage_inputs(wf, settings: Settings, result: GateResult, run_dir: Path,
                  prestage: stage.Prestage | None = None) -> dict:
    """runs/<run_id>/inputs/: the gated inputs, copied and verified before Snakemake starts (snakegate.run.stage);
    the entries of inputs.json."""
    try:
        if is_plan_result(result):
            from snakegate.run import plan_run

            return plan_run.stage_plan(run_dir, result, wf, settings)
        done = stage.stage(run_dir, result.input_files, result.invocation.inputs, wf.schema, result.resolved_params,
                           settings.registry_root, settings.stage_inputs,
                           prestage.into(run_dir) if prestage is not None else None)
        return {key: entry.record() for key, entry in done.items()}  # as written, never read back
    except stage.StageError as exc:
        raise GateRejected(stage_refusal(result.workflow, exc)) from None


def stage_refusal(workflow: str | None, exc: "stage.StageError") -> GateResult:
    """A staging refusal in the gate's shape: one input_changed error per changed input."""
    hint = "run again: the gate hashes the inputs as they are now (and stop whatever is changing them)"
    errors = [GateError(path=c["param"], code="input_changed", message=stage.changed_text([c]).split(": ", 1)[1],
                        hint=hint) for c in exc.changed] or \
             [GateError(path="params", code="input_changed", message=str(exc), hint=hint)]
    return GateResult(ok=False, workflow=workflow, errors=errors)


def _dag_refusal(registry, settings, invocation, outcome: "RunOutcome") -> GateResult | None:
    """When Snakemake failed before starting any job, the full gate (with its DAG step) says whether
    the params were the reason; its refusal then replaces the failed run. None otherwise."""
    if outcome.status != "failed" or outcome.record.get("jobs_executed"):
        return None
    full = _gate(registry, invocation, settings)
    return None if full.ok else full


def fill_run_folder(registry, settings: Settings, result, run_id: str, run_dir: Path, options: RunOptions,
                    extra_record: dict, started: str, prestage: stage.Prestage | None = None):
    """Everything the run folder holds before Snakemake starts (config.yaml, invocation.json, run.json, the
    run index's pin, the workflow copy, the staged inputs, a fork's seeded outputs); the Workflow that runs and
    what Snakemake's environment carries of them: the pinned run and invocation and the staged copies' digests
    (snakegate.provenance.known)."""
    if is_plan_result(result):
        from snakegate.run import plan_run

        config, record = plan_run.plan_explicit_config(result, run_id), plan_run.plan_invocation_record(result)
        identity = {"workflow": f"plan {result.label}" if result.label else "plan", "version": None,
                    "kind": "plan", "plan": {"label": result.label, "steps": {
                        n: result.steps[n].workflow for n in result.order}}}
    else:
        config, record = explicit_config(result, run_id), invocation_record(result)
        identity = {"workflow": result.workflow, "version": result.invocation.version}
    runstore.write_text_atomic(run_dir / runstore.CONFIG_YAML, dump_config(config), mode=runstore.CONFIG_MODE)
    runstore.write_json_atomic(run_dir / runstore.INVOCATION_JSON, record)
    runstore.update_run(run_dir, run_id=run_id, **identity,
                        invocation_id=result.invocation_id, status="running", stage="gated",
                        started=started, source="snakegate run", console_log=runstore.CONSOLE_LOG,
                        options={"cores": options.cores, "executor": options.executor, "jobs": options.jobs,
                                 "profile": options.profile},
                        **extra_record)
    runindex.pin(settings.registry_root, run_id, result.invocation_id)
    wf = _copy_workflow(registry, result, run_dir)
    entries = _stage_inputs(wf, settings, result, run_dir, prestage)
    if options.seed_from is not None:
        runstore.update_run(run_dir, **{reuse.SEEDED_KEY: reuse.seed(options.seed_from, run_dir,
                                                                             settings.registry_root)})
    # The gated id travels outside the config file, for Snakemake only: the top-level Snakefile refuses
    # a config that gates to anything else.
    env = {runstore.LOCK_HELD_ENV: run_id, pinning.EXPECTED_ENV: result.invocation_id,
           # the staged copies' digests, hashed here as they were written, and their sources': the job guard,
           # the PROV capture and the seal need not read them again
           known.ENV: known.export(known.staged_paths(run_dir, entries, settings.registry_root))}
    return wf, env


def _run(registry, settings, result, run_id, run_dir, options, on_progress, echo, extra_record,
         lock: runstore.RunLock, cancel: threading.Event | None = None,
         prestage: stage.Prestage | None = None) -> RunOutcome:
    started = runstore.utc_now()
    try:
        runstore.make_reserve(run_dir)
        wf, run_env = fill_run_folder(registry, settings, result, run_id, run_dir, options, extra_record, started,
                                         prestage)
        # owner-only when the contract has sensitive params: a failing job may print one
        out_fd = os.open(run_dir / runstore.CONSOLE_LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                         runrecords.log_mode(finish.context(wf, settings, run_dir, result).secret_scope()[0]))
    except (OSError, runindex.RunIndexError) as exc:
        raise _NotStarted(getattr(exc, "strerror", None) or str(exc)) from None

    # the installed entry itself, never a file of the registry: the registry's own Snakefile is for plain
    # `snakemake`; nothing a registry holds stands between this run and its gate
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", ENTRY_SNAKEFILE,
           "--configfile", str(run_dir / runstore.CONFIG_YAML), "--directory", str(settings.registry_root),
           *options.snakemake_args()]
    # What reaches Snakemake of this gate travels in its environment, never in a file of the run folder. A
    # profile reaches Snakemake only as checked (--profile).
    env = {k: v for k, v in os.environ.items()
           if k not in ("SNAKEMAKE_PROFILE", known.ENV, FRONT_END_ENV)}
    env.update(run_env)
    env[FRONT_END_ENV] = str(os.getpid())  # this process writes the PROV record after Snakemake exits
    progress = Progress(on_progress)
    cancelled = {"signal": None}
    followed: list[str] = []  # kept in memory too: the run folder may be deleted under the run

    # Snakemake runs detached: its own session, its output into the run folder, the run folder's lock
    # inherited. A front end that dies (SIGKILL, a closed terminal) leaves it running; the top-level
    # Snakefile's handlers finish run.json and the PROV record on their own.
    console = run_dir / runstore.CONSOLE_LOG
    try:
        proc = subprocess.Popen(cmd, cwd=settings.registry_root, env=env, stdin=subprocess.DEVNULL, stdout=out_fd,
                                stderr=subprocess.STDOUT, pass_fds=(lock.fd,), preexec_fn=process.child_setup)
    finally:
        os.close(out_fd)
    # run.json is Snakemake's to write from here on (its onstart handler records its pid), so that two
    # processes never rewrite it at once
    try:
        lock.note_holder(f"pid {proc.pid} (snakemake, started by snakegate run pid {os.getpid()})")
    except OSError:
        pass

    def forward(signum, _frame):
        # Snakemake's own handler (signals.py) stops the jobs and records the cancel; escalate if it hangs
        first = cancelled["signal"] is None
        cancelled["signal"] = cancelled["signal"] or signal.Signals(signum).name
        process.send_signal(proc, signum)
        if first:
            process.escalate_later(proc, signum)

    if cancel is not None:
        process.cancel_when_set(cancel, proc, lambda: forward(signal.SIGINT, None))
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    in_main_thread = process.in_main_thread()
    if in_main_thread:
        for s in previous:
            signal.signal(s, forward)
    try:
        def on_line(line: str) -> None:
            followed.append(line)
            progress.feed(line)
            if echo:
                echo(line)

        process.follow(console, proc, on_line)
        exit_code = proc.wait()
    finally:
        if in_main_thread:
            for s, handler in previous.items():
                signal.signal(s, handler)
    return finish.finalise(wf, settings, run_id, run_dir, result, exit_code, cancelled["signal"], started,
                           "".join(followed))
