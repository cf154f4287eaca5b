"""Runs nobody finished: found when `snakegate runs` or `show-run` reads them, and completed from Snakemake's records.

A run's record says `running` while Snakemake works under the run folder's
lock (flock on runs/<id>/.lock, held for as long as Snakemake lives). A record
that says `running` while nobody holds that lock belongs to a run whose
processes are gone (killed with SIGKILL, a node that went down). `refresh()`
marks it `interrupted` with `interrupted_detected_at`, lists the jobs that had
started and never finished, and rebuilds its PROV record from Snakemake's own
job metadata and log, so every job that finished is in it.

Completing it also scrubs the run's sensitive values out of its logs and
records and out of Snakemake's job metadata of its outputs (runrecords.RunSecrets),
as the run's own end would have: a job killed mid-way may have printed one.

When the record cannot be written (a full disk, a read-only folder) nothing is
changed on disk and the returned record says so in `record_problem`; the next
reader tries again. Only writes inside the one run folder, under its lock (and
Snakemake's records of that run's jobs).
"""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path

from snakegate.provenance import runstore, seal
from snakegate.run import verdict
from snakegate.registry.settings import Settings

INTERRUPTED_ERROR = ("the run stopped without recording its end: no process held its run folder when this was "
                     "found (killed, or the machine went down)")


def refresh(settings: Settings, run_dir: Path, record: dict) -> dict:
    """The record as it stands, after completing it when it is a stale `running` one."""
    unfinished = record.get("status") == "running" or record.get("stage") == "provenance"
    if not unfinished or runstore.lock_is_held(run_dir):
        return record
    try:
        lock = runstore.RunLock(run_dir).acquire()
    except runstore.RunBusy:
        return record  # a run starting right now, or another reader completing it
    except OSError as exc:  # no process holds it, and it cannot even be locked to complete it
        return {**record, "status": "interrupted" if record.get("status") == "running" else record.get("status"),
                "record_problem": _problem(run_dir, exc)}
    try:
        current = runstore.read_run(run_dir)
        if current.get("status") == "running":
            return complete(settings, run_dir, current)
        if current.get("stage") == "provenance":  # the end was recorded, its PROV record never written
            workdir = Path(current.get("workdir") or settings.registry_root)
            _secrets_of(settings, run_dir, current).scrub_run(run_dir, workdir)
            if "verdict" not in current:
                verdict.record(run_dir)
            _rebuild_provenance(settings, run_dir, workdir, current, _log_of(run_dir, current),
                                current.get("status") or "failed")
            done = runstore.update_run(run_dir, stage="finished")
            seal.seal_finished(run_dir, settings.registry_root)
            return done
        return current
    except OSError as exc:
        return {**record, "status": "interrupted" if record.get("status") == "running" else record.get("status"),
                "record_problem": _problem(run_dir, exc)}
    finally:
        lock.release()


def _problem(run_dir: Path, exc: OSError) -> str:
    return (f"the run's processes are gone but its record could not be completed in {run_dir}: "
            f"{exc.strerror or exc}")


def _last_sign_of_life(paths: list[Path]) -> str | None:
    times = []
    for path in paths:
        try:
            times.append(path.stat().st_mtime)
        except OSError:
            continue
    if not times:
        return None
    stamp = _dt.datetime.fromtimestamp(max(times), _dt.timezone.utc)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def complete(settings: Settings, run_dir: Path, record: dict) -> dict:
    """Mark a stale run `interrupted` and rebuild its PROV record; raises OSError when it cannot write."""
    from snakegate.run import record as runrecord
    from snakegate.run.entry import MODULE_PREFIX

    run_dir = Path(run_dir)
    workdir = Path(record.get("workdir") or settings.registry_root)
    hidden = _secrets_of(settings, run_dir, record)
    logs = _logs(run_dir, record)
    log_path = logs[0] if logs else None
    ended = _last_sign_of_life(logs) or record.get("started")  # before scrubbing rewrites the logs
    if log_path is not None and log_path.parent != run_dir:
        hidden.copy(log_path, run_dir / runstore.SNAKEMAKE_LOG)
        log_path = run_dir / runstore.SNAKEMAKE_LOG
    hidden.scrub_run(run_dir, workdir)
    log_text = runrecord.read_text(log_path)
    runrecord.drop_empty_stderr(run_dir)
    fields = {"status": "interrupted", "stage": "provenance", "interrupted_detected_at": runstore.utc_now(),
              "ended": ended, "error": INTERRUPTED_ERROR,
              **runrecord.closing_fields(run_dir, workdir, "interrupted", log_text, MODULE_PREFIX, hidden=hidden)}
    fields["outputs"] = [{**o, "exists": (workdir / o["path"]).is_file() if not os.path.isabs(o["path"])
                          else Path(o["path"]).is_file()} for o in record.get("outputs") or []]
    fields["duration_s"] = runstore.duration_s({"started": record.get("started"), "ended": ended})
    record = runstore.update_run(run_dir, **fields)
    verdict.record(run_dir)  # what finished jobs made, judged before the PROV record and the seal
    _rebuild_provenance(settings, run_dir, workdir, record, log_path, "interrupted")
    runstore.update_run(run_dir, stage="finished")
    runstore.drop_reserve(run_dir)
    seal.seal_finished(run_dir, settings.registry_root)
    return runstore.read_run(run_dir)


def _secrets_of(settings: Settings, run_dir: Path, record: dict):
    """The run's sensitive values, by the contract of the workflow copy it ran (else the registry's)."""
    from snakegate.provenance.runrecords import RunSecrets
    from snakegate.registry.workflows import Registry
    from snakegate.run import pinning

    workflow = str(record.get("workflow") or "")
    try:
        schema = pinning.load_copy(run_dir, workflow).schema
    except Exception:  # noqa: BLE001 - no copy (a run recorded before copies), or a damaged one
        try:
            wf = Registry.load(settings.registry_root).get(workflow)
        except Exception:  # noqa: BLE001 - a registry that cannot be read: no contract to go by
            wf = None
        schema = wf.schema if wf is not None else {}
    return RunSecrets.of_run(run_dir, settings.registry_root, schema)


def _logs(run_dir: Path, record: dict) -> list[Path]:
    """Snakemake's log file (named at onstart), its copy in the run folder, everything Snakemake printed."""
    return [Path(p) for p in (record.get("snakemake_log"), run_dir / runstore.SNAKEMAKE_LOG,
                              run_dir / runstore.CONSOLE_LOG) if p and Path(p).is_file()]


def _log_of(run_dir: Path, record: dict) -> Path | None:
    logs = _logs(run_dir, record)
    return logs[0] if logs else None


def _rebuild_provenance(settings: Settings, run_dir: Path, workdir: Path, record: dict, log_path: Path | None,
                        status: str) -> None:
    from snakegate.run.entry import MODULE_PREFIX
    from snakegate.registry.workflows import Registry

    try:
        from snakegate.provenance import capture
    except ImportError:
        return
    wf = Registry.load(settings.registry_root).get(record.get("workflow") or "")
    if wf is None:
        runstore.update_run(run_dir, provenance_error=f"workflow {record.get('workflow')!r} is not in the registry "
                                                      "any more: the PROV record could not be rebuilt")
        return
    try:
        capture.capture(run_dir=run_dir, registry_root=settings.registry_root, workdir=workdir,
                        manifest=wf.manifest.model_dump(), schema=wf.schema, workflow_folder=wf.folder,
                        snakemake_log=str(log_path) if log_path else None, status=status,
                        rule_prefix=MODULE_PREFIX)
    except Exception as exc:  # noqa: BLE001 - the status above stands even when PROV cannot be written
        problem = f"{exc.strerror or exc}" if isinstance(exc, OSError) else f"{type(exc).__name__}: {exc}"
        runstore.update_run(run_dir, provenance_error=problem)


def record_note(run_dir: Path, record: dict) -> str | None:
    """What a reader should know about a record that is not whole, or None."""
    if record.get("record_problem"):
        return record["record_problem"]
    if record.get("status") == "running" and not (Path(run_dir) / runstore.INVOCATION_JSON).exists():
        return "the run folder's invocation.json is gone (deleted while the run goes on?)"
    if record.get("stage") == "finished" and not (Path(run_dir) / runstore.PROV_JSON).exists():
        why = record.get("provenance_error")
        return "no PROV record" + (f" ({why})" if why else "")
    if record.get("provenance_error"):
        return f"PROV record not written: {record['provenance_error']}"
    return None
