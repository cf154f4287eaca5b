"""The end of a run, after Snakemake exited: its outcome, the record's last fields, its PROV record, its seal.

Keeps what Snakemake's own handlers recorded and adds the exit code, the PROV record and the seal (the handlers
leave those to this process, which is then no longer beside Snakemake's DAG: entry.front_end_records), or
records the end itself (status, outputs, verdict, provenance) when they never ran. It never starts or
signals a process.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from snakegate.models import GateResult
from snakegate.provenance import runrecords, runstore, seal
from snakegate.run import verdict
from snakegate.run.entry import missing_outputs, reuse_fields, MODULE_PREFIX


@dataclass
class RunOutcome:
    run_id: str
    run_dir: Path
    status: str
    exit_code: int
    record: dict
    gate: GateResult


def is_plan_result(result) -> bool:
    return hasattr(result, "order")  # snakegate.plan.prove.PlanResult


def finalise(wf, settings, run_id, run_dir, result, exit_code, signal_name, started: str,
              console_text: str) -> RunOutcome:
    """After Snakemake exited: keep what its handlers recorded and add the exit code; when they never ran
    (stopped before the first job, killed), record the end here from its output."""
    from snakegate.run import record as runrecord

    # Snakemake has exited: its output and every log of the run lose the run's sensitive values
    hidden = runrecords.RunSecrets.of(settings.registry_root, *context(wf, settings, run_dir, result).secret_scope())
    console_text = hidden.text(console_text)
    hidden.scrub_run(run_dir, settings.registry_root)
    record = runstore.read_run(run_dir)
    if console_text and not (run_dir / runstore.CONSOLE_LOG).exists() and run_dir.is_dir():
        # the folder was deleted under the run: what Snakemake printed is kept all the same
        runstore.write_text_atomic(run_dir / runstore.CONSOLE_LOG, console_text)
    if record.get("stage") in ("finished", "provenance"):
        # the handlers recorded the end; the stage is still `provenance` when they left the PROV record to this
        # process (entry.front_end_records: not built beside Snakemake's DAG) or Snakemake stopped before it
        record = runstore.update_run(run_dir, exit_code=exit_code)
        if record.get("stage") != "finished" or not (run_dir / runstore.PROV_JSON).exists():
            if "verdict" not in record:  # Snakemake stopped between the run's status and its verdict
                verdict.record(run_dir)
            record_provenance_after(wf, settings, run_dir, result, record["status"])
            runstore.update_run(run_dir, stage="finished")
            runstore.drop_reserve(run_dir)
        seal.seal_finished(run_dir, settings.registry_root)  # again: the exit code came after the handlers' seal
        return RunOutcome(run_id=run_id, run_dir=run_dir, status=record["status"], exit_code=exit_code,
                          record=runstore.read_run(run_dir), gate=result)
    ctx = context(wf, settings, run_dir, result)
    lost = ctx.restore_if_emptied()
    outputs = ctx.declared_outputs()
    if signal_name:
        status = "cancelled"
    elif exit_code == 0:
        # a dry run, a profile or an executor that built less: what is missing is not a success
        status = "incomplete" if missing_outputs(outputs) else "succeeded"
    else:
        status = "failed"
    # what Snakemake printed: from the run folder, or as followed when the folder was lost
    log_text = runrecord.read_text(run_dir / runstore.CONSOLE_LOG) or console_text
    if lost and log_text and not (run_dir / runstore.CONSOLE_LOG).exists():
        runstore.write_text_atomic(run_dir / runstore.CONSOLE_LOG, log_text)
    ended = runstore.utc_now()
    started = record.get("started") or started
    fields = {**ctx.identity(), **({"record_problem": lost} if lost else {}), "source": "snakegate run",
              "started": started, "status": status, "stage": "provenance", "exit_code": exit_code, "ended": ended,
              "outputs": outputs,
              **runrecord.closing_fields(run_dir, settings.registry_root, status, log_text, MODULE_PREFIX,
                                         cancelled_by=signal_name, hidden=hidden)}
    fields["duration_s"] = runstore.duration_s({"started": started, "ended": ended})
    if status == "incomplete":
        fields["missing_outputs"] = missing_outputs(outputs)
    fields.update(reuse_fields(run_dir))
    if status == "failed" and "error" not in fields:
        # the gate's own words when the Snakefile refused (written before Snakemake stopped), else
        # Snakemake's last words: it stopped outside any job (a parse or DAG error, a missing input)
        fields["error"] = record.get("error") or runrecord.last_words(log_text)
    runrecord.drop_empty_stderr(run_dir)
    record = runstore.update_run(run_dir, **hidden.data(fields))
    verdict.record(run_dir)
    record_provenance_after(wf, settings, run_dir, result, status)
    runstore.update_run(run_dir, stage="finished")
    runstore.drop_reserve(run_dir)
    seal.seal_finished(run_dir, settings.registry_root)
    return RunOutcome(run_id=run_id, run_dir=run_dir, status=status, exit_code=exit_code,
                      record=runstore.read_run(run_dir), gate=result)


def context(wf, settings, run_dir, result):
    """The same context the top-level Snakefile builds (Snakemake runs from the registry root)."""
    from snakegate.run import staged
    from snakegate.run.entry import RunContext, output_prefix

    prefix = output_prefix(run_dir, settings.registry_root)
    entries = staged.read_manifest(run_dir)
    if is_plan_result(result):
        from snakegate.run.plan_run import PlanRunContext

        return PlanRunContext(settings=settings, workflow=wf[result.order[0]], result=result, run_id=run_dir.name,
                              run_dir=run_dir, prefix=prefix, source="snakegate run", staged=entries, copies=wf,
                              workdir=settings.registry_root)
    # Snakemake worked in the registry root (its --directory), wherever this process was started
    return RunContext(settings=settings, workflow=wf, result=result, run_id=run_dir.name, run_dir=run_dir,
                      prefix=prefix, source="snakegate run", staged=entries, workdir=settings.registry_root)


def record_provenance_after(wf, settings, run_dir, result, status) -> None:
    from snakegate.run.entry import record_provenance

    # Snakemake's log file when its handlers copied it in, else everything it printed
    log = next((p for p in (run_dir / runstore.SNAKEMAKE_LOG, run_dir / runstore.CONSOLE_LOG) if p.exists()), None)
    record_provenance(context(wf, settings, run_dir, result), str(log) if log else None, status)
