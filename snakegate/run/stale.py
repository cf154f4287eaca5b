"""Runs nobody finished: found when `snakegate runs` or `show-run` reads them, and completed from Snakemake's records.

A run's record says `running` while Snakemake works under the run folder's
lock (flock on runs/<id>/.lock, held for as long as Snakemake lives). A record
that says `running` while nobody holds that lock belongs to a run whose
processes are gone (killed with SIGKILL, a node that went down). `refresh()`
marks it `interrupted` with `interrupted_detected_at`, lists the jobs that had
started and never finished, and rebuilds its PROV record from Snakemake's own
job metadata and log, so every job that finished is in it.

A plan's run is completed the same way from its steps' workflow copies (snakegate.run.plan_run; its steps
in the plan's order, snakegate.plan.config): its sensitive values are every step's, its PROV record is
rebuilt by snakegate.provenance.capture_plan (a sub-activity per step).

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
            _rebuild_provenance(settings, run_dir, workdir, current, _log_of(run_dir, current, settings.registry_root),
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


def _died_by(run_dir: Path, found: str) -> str | None:
    from snakegate.run.heartbeat import died_by

    when = runstore.parse_time(found)
    bound = died_by(run_dir, when.timestamp()) if when else None
    if bound is None:
        return None
    stamp = _dt.datetime.fromtimestamp(bound, _dt.timezone.utc)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def complete(settings: Settings, run_dir: Path, record: dict) -> dict:
    """Mark a stale run `interrupted` and rebuild its PROV record; raises OSError when it cannot write."""
    from snakegate.run import record as runrecord
    from snakegate.run.entry import MODULE_PREFIX

    run_dir = Path(run_dir)
    workdir = Path(record.get("workdir") or settings.registry_root)
    hidden = _secrets_of(settings, run_dir, record)
    logs = _logs(run_dir, record, settings.registry_root)
    log_path = logs[0] if logs else None
    found = runstore.utc_now()
    # the end is not before the kill: the heartbeat's bound (heartbeat.py) when the run had one, else the
    # last sign of life (before scrubbing rewrites the logs)
    ended = _died_by(run_dir, found) or _last_sign_of_life(logs) or record.get("started")
    if log_path is not None and log_path.parent != run_dir:
        hidden.copy(log_path, run_dir / runstore.SNAKEMAKE_LOG)
        log_path = run_dir / runstore.SNAKEMAKE_LOG
    hidden.scrub_run(run_dir, workdir)
    log_text = runrecord.read_text(log_path)
    runrecord.drop_empty_stderr(run_dir)
    fields = {"status": "interrupted", "stage": "provenance", "interrupted_detected_at": found,
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


def _plan_steps(run_dir: Path, record: dict) -> list[tuple[str, object]] | None:
    """A plan's run: its steps in the order the run took them (snakegate.plan.config), each with the workflow
    copy it ran (snakegate.run.plan_run); None for one workflow's run. PinError when a copy is gone or the
    plan's steps cannot be read from invocation.json."""
    from snakegate.plan.config import order, read_plan
    from snakegate.run import pinning, plan_run

    inv = runstore.read_json(Path(run_dir) / runstore.INVOCATION_JSON)
    if record.get("kind") != "plan" and inv.get("kind") != "plan":
        return None
    steps = (inv.get("invocation") or {}).get("steps") if isinstance(inv.get("invocation"), dict) else None
    config = {"steps": {n: {"workflow": s.get("workflow"), "params": s.get("params") or {}}
                        for n, s in sorted((steps or {}).items()) if isinstance(s, dict)}}
    plan, _errors = read_plan(config)  # a step name that is not one (`../x`) is never made a path
    if plan is None or not plan.steps:
        raise pinning.PinError(f"the plan's steps cannot be read from {runstore.INVOCATION_JSON}")
    names = order(plan)[0]
    names += [n for n in plan.steps if n not in names]  # a record whose steps loop: still every step, once
    copies = plan_run.load_copies(run_dir, {"steps": {n: {"workflow": plan.steps[n].workflow} for n in names}})
    return [(n, copies[n]) for n in names]


def _secrets_of(settings: Settings, run_dir: Path, record: dict):
    """The run's sensitive values, by the contract of the workflow copy it ran (else the registry's); a plan's
    by each step's copy, from config.yaml's and invocation.json's step params."""
    from snakegate.provenance.runrecords import RunSecrets
    from snakegate.registry.workflows import Registry
    from snakegate.run import pinning

    try:
        steps = _plan_steps(run_dir, record)
    except pinning.PinError:  # a plan whose copies are gone: every value of its config counts as sensitive
        steps = []
        if record.get("kind") == "plan":
            return RunSecrets.of(settings.registry_root, {"x-sensitive": True}, _plan_params(run_dir)[0])
    if steps is not None:
        schema = {"type": "object", "properties": {n: wf.schema for n, wf in steps}}
        return RunSecrets.of(settings.registry_root, schema, *_plan_params(run_dir))
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


def _plan_params(run_dir: Path) -> tuple[dict, dict]:
    """({step: params} of config.yaml (plain values), {step: params} of invocation.json (keyed hashes))."""
    from snakegate.config.read import read_run_config

    def by_step(steps) -> dict:
        return {n: s["params"] for n, s in steps.items() if isinstance(s, dict) and isinstance(s.get("params"), dict)} \
            if isinstance(steps, dict) else {}

    config, error = read_run_config(Path(run_dir) / runstore.CONFIG_YAML)
    plain = by_step(config.get("steps")) if error is None and isinstance(config, dict) else {}
    inv = runstore.read_json(Path(run_dir) / runstore.INVOCATION_JSON).get("invocation")
    return plain, by_step(inv.get("steps")) if isinstance(inv, dict) else {}


def _logs(run_dir: Path, record: dict, root: Path | None = None) -> list[Path]:
    """Snakemake's log file (named at onstart; relative to the working directory when run.json keeps host paths
    out), its copy in the run folder, everything Snakemake printed."""
    named = record.get("snakemake_log")
    if isinstance(named, str) and named and not os.path.isabs(named):
        named = str(Path(record.get("workdir") or root or Path.cwd()) / named)
    return [Path(p) for p in (named, run_dir / runstore.SNAKEMAKE_LOG,
                              run_dir / runstore.CONSOLE_LOG) if p and Path(p).is_file()]


def _log_of(run_dir: Path, record: dict, root: Path | None = None) -> Path | None:
    logs = _logs(run_dir, record, root)
    return logs[0] if logs else None


def _rebuild_provenance(settings: Settings, run_dir: Path, workdir: Path, record: dict, log_path: Path | None,
                        status: str) -> None:
    from snakegate.run.entry import MODULE_PREFIX
    from snakegate.registry.workflows import Registry

    try:
        from snakegate.provenance import capture
    except ImportError:
        return
    from snakegate.run import pinning

    try:
        steps = _plan_steps(run_dir, record)
    except pinning.PinError as exc:
        runstore.update_run(run_dir, provenance_error=f"the plan's PROV record could not be rebuilt: {exc}")
        return
    if steps is not None:
        _rebuild_plan_provenance(settings, run_dir, workdir, steps, log_path, status)
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
                        rule_prefix=MODULE_PREFIX, record_hostname=settings.record_hostname)
    except Exception as exc:  # noqa: BLE001 - the status above stands even when PROV cannot be written
        _provenance_failed(run_dir, exc)


def _rebuild_plan_provenance(settings: Settings, run_dir: Path, workdir: Path, steps: list[tuple], log_path,
                             status: str) -> None:
    """A plan's PROV record from its steps' copies (snakegate.provenance.capture_plan), as the run's end writes it."""
    from snakegate.provenance import capture_plan
    from snakegate.run.entry import MODULE_PREFIX

    try:
        capture_plan.capture(run_dir=run_dir, registry_root=settings.registry_root, workdir=workdir,
                             steps=[(n, wf.manifest.model_dump(), wf.schema, wf.folder) for n, wf in steps],
                             snakemake_log=str(log_path) if log_path else None, status=status,
                             rule_prefix=MODULE_PREFIX, record_hostname=settings.record_hostname)
    except Exception as exc:  # noqa: BLE001 - the status above stands even when PROV cannot be written
        _provenance_failed(run_dir, exc)


def _provenance_failed(run_dir: Path, exc: Exception) -> None:
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
