"""Run commands: run, runs, show-run."""

from __future__ import annotations

import json
import sys

from snakegate.errors import ExitCode, UserError

PASS_THROUGH = "--cores, --executor, --jobs, --profile"


def add_snakemake_options(p) -> None:
    g = p.add_argument_group("Snakemake options passed through (only these)")
    g.add_argument("--cores", type=int, default=1, metavar="N", help="cores for local jobs (default 1)")
    g.add_argument("--executor", metavar="NAME", help="Snakemake executor plugin, e.g. slurm")
    g.add_argument("--jobs", type=int, metavar="N", help="jobs submitted at once (cluster executors)")
    g.add_argument("--profile", metavar="DIR", help="Snakemake profile folder (or $SNAKEMAKE_PROFILE); only the "
                   "settings the README lists (executor, resources, retries, software deployment, …) are allowed")
    p.add_argument("-v", "--verbose", action="store_true", help="show Snakemake's own output")


def register(sub, epilog: str) -> None:
    p = sub.add_parser("run", help="gate a run config and run it with Snakemake", epilog=epilog,
                       description=f"Gate RUN_YAML, write runs/<run_id>/, run it with Snakemake. Only {PASS_THROUGH} "
                                   "reach Snakemake; anything else is refused.")
    p.add_argument("config", help="run config YAML")
    add_snakemake_options(p)
    p.set_defaults(handler=cmd_run, passes_to_snakemake=True)

    p = sub.add_parser("runs", help="list runs (newest last)", epilog=epilog)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=cmd_runs)

    p = sub.add_parser("show-run", help="show one run's record", epilog=epilog)
    p.add_argument("run", help="run id, unique prefix, or 'latest'")
    p.add_argument("--json", action="store_true", help="print run.json")
    p.set_defaults(handler=cmd_show_run)


def options_from(args, **extra):
    from snakegate.profiles import check_executor, checked_profile
    from snakegate.runner import RunOptions
    if args.cores < 1:
        raise UserError(f"--cores must be at least 1 (got {args.cores})")
    if args.jobs is not None and args.jobs < 1:
        raise UserError(f"--jobs must be at least 1 (got {args.jobs})")
    check_executor(args.executor)
    profile = checked_profile(args.profile, args.executor)  # only allow-listed keys reach Snakemake
    return RunOptions(cores=args.cores, executor=args.executor, jobs=args.jobs, profile=profile, **extra)


class ProgressPrinter:
    """One line per change of step or rule; quiet enough for a log file, live enough for a terminal."""

    def __init__(self, stream=sys.stderr):
        self.stream = stream
        self.last = None

    def __call__(self, p: dict) -> None:
        key = (p["done"], p["rule"])
        if key == self.last:
            return
        self.last = key
        total = p["total"] if p["total"] is not None else "?"
        rule = f" · {p['rule']}" if p["rule"] and p["rule"] != "snakegate_all" else ""
        print(f"  [{p['done']}/{total}]{rule}", file=self.stream, flush=True)


def run_and_report(ctx, invocation: dict, options, source: str, extra_record: dict | None = None,
                   pinned_from=None):
    """Shared by run, rerun and fork: gate + execute + one-line summary; returns the outcome.
    `pinned_from`: the recorded run whose workflow copy is run (rerun, fork), not the registry's."""
    from snakegate.commands.registry_cmds import print_gate_result
    from snakegate.runner import GateRejected, execute

    echo = (lambda line: sys.stderr.write(line)) if getattr(ctx.args, "verbose", False) else None
    try:
        outcome = execute(ctx.registry, ctx.settings, invocation, options, on_progress=ProgressPrinter(), echo=echo,
                          extra_record=extra_record, pinned_from=pinned_from)
    except GateRejected as rejected:
        print_gate_result(rejected.result, source, stream=sys.stderr)
        raise UserError("nothing was run", ExitCode.INVALID) from None
    print(summary_line(outcome, ctx.settings.registry_root))
    return outcome


def summary_line(outcome, root) -> str:
    rec = outcome.record
    made = [o["path"] for o in rec.get("outputs", []) if o.get("exists")]
    dur = rec.get("duration_s")
    parts = [f"{outcome.status}", f"run {outcome.run_id}", f"{dur:.1f} s" if dur is not None else "?"]
    failure = rec.get("failure") or {}
    if outcome.status == "failed" and failure:
        log = _rel(outcome.run_dir / failure["log"], root) if failure.get("log") else "none"
        parts.append(f"failed rule {failure['rule']}: {rec.get('error')} (log: {log})")
    elif outcome.status == "failed" and rec.get("failed_rule"):
        parts.append(f"failed rule {rec['failed_rule']} (log: {', '.join(rec.get('failed_log') or []) or 'none'})")
    elif outcome.status == "failed" and rec.get("error_code"):
        parts.append(str(rec.get("error")))  # refused by the pin, or an input changed under the run
    elif outcome.status == "failed" and rec.get("error"):
        parts.append(f"error: {rec['error']}")
    if outcome.status == "incomplete":
        parts.append(f"missing: {', '.join(rec.get('missing_outputs') or [])}")
    if outcome.status == "cancelled":
        running = ", ".join(rec.get("running_jobs") or []) or "none"
        parts.append(f"cancelled by {rec.get('cancelled_by') or 'a signal'} (jobs stopped: {running})")
    parts.append("outputs: " + (", ".join(made) if made else "none"))
    prov = outcome.run_dir / "prov.json"
    parts.append(f"provenance: {_rel(prov, root)}" if prov.exists() else "provenance: not written")
    return " · ".join(parts)


def _rel(path, root) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def cmd_run(ctx) -> int:
    from snakegate.runconfig import read_run_config
    from snakegate.commands.registry_cmds import print_gate_result
    from snakegate.models import GateResult

    data, yaml_error = read_run_config(ctx.args.config)
    if yaml_error is not None:
        print_gate_result(GateResult(ok=False, errors=[yaml_error]), ctx.args.config, stream=sys.stderr)
        return ExitCode.INVALID
    outcome = run_and_report(ctx, data, options_from(ctx.args), ctx.args.config)
    return exit_for(outcome.status)


def exit_for(status: str) -> int:
    return {"succeeded": ExitCode.OK, "cancelled": ExitCode.CANCELLED}.get(status, ExitCode.INVALID)


def _records(ctx) -> list[tuple]:
    """(folder, record, note) of every run; stale `running` records are completed on the way (staleruns.py)."""
    from snakegate import staleruns
    from snakegate.provenance import runstore

    out = []
    for folder in runstore.run_folders(ctx.settings.runs_dir):
        record, problem = runstore.load_run(folder)
        if problem:
            out.append((folder, {"run_id": folder.name, "status": runstore.UNREADABLE}, problem))
            continue
        record = staleruns.refresh(ctx.settings, folder, record)
        out.append((folder, record, staleruns.record_note(folder, record)))
    return out


def cmd_runs(ctx) -> int:
    from snakegate.provenance import runstore

    rows = []
    for folder, r, note in _records(ctx):
        row = {"run_id": r.get("run_id") or folder.name, "workflow": r.get("workflow"), "status": r.get("status"),
               "started": r.get("started"), "duration_s": r.get("duration_s", runstore.duration_s(r)),
               "invocation_id": r.get("invocation_id")}
        if note:
            row["note"] = note
        rows.append(row)
    if ctx.args.json:
        print(json.dumps({"runs": rows}, indent=2, sort_keys=True))
        return ExitCode.OK
    if not rows:
        print(f"no runs yet in {ctx.settings.runs_dir}")
        return ExitCode.OK
    for r in rows:
        dur = f"{r['duration_s']:.1f}s" if isinstance(r["duration_s"], (int, float)) else "-"
        line = (f"{r['run_id']:<34} {str(r['workflow'] or '-'):<22} {str(r['status']):<11} "
                f"{str(r['started'] or '-'):<25} {dur:>8}  {(r['invocation_id'] or '')[:12]}")
        print(line + (f"  ({r['note']})" if r.get("note") else ""))
    return ExitCode.OK


def find_run_or_fail(ctx, ref: str):
    from snakegate.provenance import runstore
    try:
        return runstore.find_run(ctx.settings.runs_dir, ref)
    except runstore.RunNotFound as exc:
        raise UserError(str(exc), ExitCode.INVALID) from None


def cmd_show_run(ctx) -> int:
    from snakegate import staleruns
    from snakegate.provenance import runstore

    run_dir = find_run_or_fail(ctx, ctx.args.run)
    record, problem = runstore.load_run(run_dir)
    if problem:
        raise UserError(f"the record of run {run_dir.name} cannot be read: {problem} (folder {run_dir}); "
                        "the other runs are not affected", ExitCode.INVALID)
    record = staleruns.refresh(ctx.settings, run_dir, record)
    note = staleruns.record_note(run_dir, record)
    if ctx.args.json:
        print(json.dumps({**record, **({"note": note} if note else {})}, indent=2, sort_keys=True))
        return ExitCode.OK
    keys = ["run_id", "workflow", "version", "status", "stage", "source", "started", "ended", "duration_s",
            "exit_code", "invocation_id", "failed_rule", "error", "cancelled_by", "interrupted_detected_at"]
    for k in keys:
        if record.get(k) is not None:
            print(f"{k:<14} {record[k]}")
    if record.get("status") == "running" and record.get("snakemake_pid"):
        print(f"{'snakemake pid':<14} {record['snakemake_pid']} (stop it with kill -TERM {record['snakemake_pid']})")
    if record.get("running_jobs"):
        print(f"{'running jobs':<14} {', '.join(record['running_jobs'])}")
    failure = record.get("failure") or {}
    if failure.get("log"):
        print(f"{'log':<14} {failure['log']}")
    for line in failure.get("log_tail") or []:
        print(f"{'':<14} | {line}")
    for copy in failure.get("cluster_logs") or []:
        print(f"{'cluster log':<14} {copy['path']} (from {copy['source']}, sha256 {copy['sha256'][:12]}…)")
    for o in record.get("outputs", []):
        print(f"{'output':<14} {o['name']}: {o['path']} ({'present' if o.get('exists') else 'missing'})")
    for p in record.get("partial_outputs", []) or []:
        print(f"{'partial':<14} {p}")
    if note:
        print(f"{'note':<14} {note}")
    print(f"{'folder':<14} {run_dir}")
    return ExitCode.OK
