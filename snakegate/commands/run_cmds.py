"""Run commands: run, runs, show-run."""

from __future__ import annotations

import argparse
import json
import sys

from snakegate.errors import ExitCode, UserError

PASS_THROUGH = "--cores, --executor, --jobs, --profile"
RUN_STATUSES = ("running", "succeeded", "failed", "cancelled", "interrupted", "incomplete", "unreadable")
VERDICTS = ("pass", "fail", "unknown")
TARGET_RULES = ("snakegate_all",)  # the entry's own target rule (snakegate.entry)


def add_snakemake_options(p) -> None:
    g = p.add_argument_group("Snakemake options passed through (only these)")
    g.add_argument("--cores", type=cores_value, default=1, nargs="?", const="all", metavar="N",
                   help="cores for local jobs: a number, or `all` (or no value) for every core, as Snakemake "
                        "takes it (default 1)")
    g.add_argument("--executor", metavar="NAME", help="Snakemake executor plugin, e.g. slurm")
    g.add_argument("--jobs", type=int, metavar="N", help="jobs submitted at once (cluster executors)")
    g.add_argument("--profile", metavar="DIR", help="Snakemake profile folder (or $SNAKEMAKE_PROFILE); only the "
                   "settings the README lists (executor, resources, retries, software deployment, …) are allowed")
    p.add_argument("-v", "--verbose", action="store_true", help="show Snakemake's own output")


def cores_value(text: str) -> int | str:
    """--cores N or --cores all, as Snakemake reads it."""
    if text.strip().lower() == "all":
        return "all"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of cores or `all` (got {text!r})") from None


def register(sub, epilog: str) -> None:
    p = sub.add_parser("run", help="gate a run config and run it with Snakemake", epilog=epilog,
                       description=f"Gate RUN_YAML, write runs/<run_id>/, run it with Snakemake. Only {PASS_THROUGH} "
                                   "reach Snakemake; anything else is refused.")
    p.add_argument("config", help="run config YAML")
    p.add_argument("-n", "--dry-run", "--dryrun", dest="dry_run", action="store_true",
                   help="not here: `snakegate validate CONFIG` checks a config without running a job")
    add_snakemake_options(p)
    p.set_defaults(handler=cmd_run, passes_to_snakemake=True)

    p = sub.add_parser("runs", help="list runs (newest last)", epilog=epilog,
                       description="List the runs of the registry by start time, newest last, every kind "
                                   "(snakegate run, chat, plain snakemake, forks, reruns); under a fork or a "
                                   "rerun, the run it was made from.")
    p.add_argument("--workflow", metavar="ID", help="only runs of this workflow (a plan's run: one of its steps "
                                                    "runs it)")
    p.add_argument("--status", metavar="STATUS", help="only runs with this status: " + ", ".join(RUN_STATUSES))
    p.add_argument("--verdict", metavar="VERDICT", help="only runs whose verdict is this: " + ", ".join(VERDICTS)
                   + " (a run still going, or made before verdicts, has none)")
    p.add_argument("--since", metavar="WHEN", help="only runs started since WHEN: a UTC date or time "
                   "(2026-11-24, 2026-11-24T14:00) or an age (90m, 12h, 7d, 2w)")
    p.add_argument("--limit", type=int, metavar="N", help="only the newest N runs (still listed newest last)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=cmd_runs)

    p = sub.add_parser("show-run", help="show one run's record", epilog=epilog,
                       description="Show one run: a warning first when its record does not prove itself (as "
                                   "`snakegate verify` checks it), its status and verdict, where it came from "
                                   "(a fork, a refinement), its params, each check of its verdict (for a failing "
                                   "one what it means and the params to look at), what went wrong and its outputs.")
    p.add_argument("run", help="run id, unique prefix, or 'latest'")
    p.add_argument("--json", action="store_true", help="print run.json, with `record_check`: whether the record "
                                                       "proves itself and, when not, what failed")
    p.set_defaults(handler=cmd_show_run)


def options_from(args, **extra):
    from snakegate.run.profiles import check_executor, checked_profile
    from snakegate.run.runner import RunOptions
    if args.cores != "all" and args.cores < 1:
        raise UserError(f"--cores must be at least 1, or `all` (got {args.cores})")
    if args.jobs is not None and args.jobs < 1:
        raise UserError(f"--jobs must be at least 1 (got {args.jobs})")
    check_executor(args.executor)
    profile = checked_profile(args.profile, args.executor)  # only allow-listed keys reach Snakemake
    return RunOptions(cores=args.cores, executor=args.executor, jobs=args.jobs, profile=profile, **extra)


class ProgressPrinter:
    """One line the first time each rule starts (`  [2/5] wf_pvalues`: the job it is, of the run's jobs),
    never a bare count and never the target rule (`snakegate_all`, which only gathers the outputs): quiet
    enough for a log file, live enough for a terminal. One printer per run (the counts start at zero)."""

    def __init__(self, stream=sys.stderr):
        self.stream = stream
        self.seen: set[str] = set()
        self.done = 0
        self.started = 0

    def __call__(self, p: dict) -> None:
        if p["done"] != self.done:  # a "k of n steps done" line: no rule started
            self.done = p["done"]
            return
        rule = p["rule"]
        if not rule or rule in TARGET_RULES:
            return
        self.started += 1
        if rule in self.seen:
            return
        self.seen.add(rule)
        # Snakemake's count includes the target rule's job, which is not work a person waits for
        jobs = p["total"] - 1 if isinstance(p["total"], int) and p["total"] > 1 else None
        where = f"{min(self.started, jobs)}/{jobs}" if jobs else str(self.started)
        print(f"  [{where}] {rule}", file=self.stream, flush=True)


def run_and_report(ctx, invocation: dict, options, source: str, extra_record: dict | None = None,
                   pinned_from=None):
    """Shared by run, rerun and fork: gate + execute + summary (summary_lines); returns the outcome.
    `pinned_from`: the recorded run whose workflow copy is run (rerun, fork), not the registry's."""
    from snakegate.commands.registry_cmds import print_gate_result
    from snakegate.run.runner import GateRejected, execute

    echo = (lambda line: sys.stderr.write(line)) if getattr(ctx.args, "verbose", False) else None
    try:
        outcome = execute(ctx.registry, ctx.settings, invocation, options, on_progress=ProgressPrinter(), echo=echo,
                          extra_record=extra_record, pinned_from=pinned_from)
    except GateRejected as rejected:
        print_gate_result(rejected.result, source, stream=sys.stderr)
        raise UserError("nothing was run", ExitCode.INVALID) from None
    print("\n".join(summary_lines(outcome, ctx.settings.registry_root)))
    for line in verdict_line(outcome.record, outcome.run_id):
        print(line)
    return outcome


def verdict_line(record: dict, run_id: str) -> list[str]:
    """After a run: its verdict in one sentence (wrapped), and where to read why when a check did not pass."""
    from snakegate.commands.layout import wrap
    from snakegate.views.verdict import read, summary_text

    verdict = read(record)
    if verdict is None:
        return []
    why = f"; `snakegate show-run {run_id}` says why" if verdict["status"] != "pass" else ""
    return wrap(f"verdict {summary_text(verdict)}{why}")


def summary_lines(outcome, root) -> list[str]:
    """After a run: one line that fits the terminal (status, run id, time, how many outputs), what went wrong
    wrapped under it, then the outputs one per line and where the provenance record is."""
    from snakegate.commands.layout import wrap
    from snakegate.views.facts import cut_line, duration_text

    rec = outcome.record
    made = [o["path"] for o in rec.get("outputs", []) if o.get("exists")]
    count = f"{len(made)} output{'' if len(made) == 1 else 's'}"
    lines = [" · ".join([outcome.status, f"run {cut_line(outcome.run_id, 40)}", duration_text(rec.get("duration_s")),
                         count])]
    lines += [line for detail in _what_went_wrong(outcome, root) for line in wrap(detail, indent=2)]
    lines += (["outputs:"] + [f"  {path}" for path in made]) if made else ["outputs: none"]
    prov = outcome.run_dir / "prov.json"
    lines.append(f"provenance: {_rel(prov, root)}" if prov.exists() else "provenance: not written")
    return lines


def _what_went_wrong(outcome, root) -> list[str]:
    rec = outcome.record
    failure = rec.get("failure") or {}
    if outcome.status == "failed" and failure:
        log = _rel(outcome.run_dir / failure["log"], root) if failure.get("log") else "none"
        return [f"failed rule {failure['rule']}: {rec.get('error')}", f"log: {log}"]
    if outcome.status == "failed" and rec.get("failed_rule"):
        return [f"failed rule {rec['failed_rule']}", f"log: {', '.join(rec.get('failed_log') or []) or 'none'}"]
    if outcome.status == "failed" and rec.get("error_code"):
        return [str(rec.get("error"))]  # refused by the pin, or an input changed under the run
    if outcome.status == "failed" and rec.get("error"):
        return [f"error: {rec['error']}"]
    if outcome.status == "incomplete":
        return [f"missing: {', '.join(rec.get('missing_outputs') or [])}"]
    if outcome.status == "cancelled":
        running = ", ".join(rec.get("running_jobs") or []) or "none"
        return [f"cancelled by {rec.get('cancelled_by') or 'a signal'} (jobs stopped: {running})"]
    return []


def _rel(path, root) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def cmd_run(ctx) -> int:
    from snakegate.config.read import read_run_config

    if ctx.args.dry_run:
        raise UserError(f"snakegate run has no dry run: `snakegate validate {ctx.args.config}` passes the config "
                        "through the whole gate, Snakemake's own DAG step included, and runs no job")
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
    """(folder, record, note) of every run; stale `running` records are completed on the way (stale.py)."""
    from snakegate.run import stale
    from snakegate.provenance import runstore

    out = []
    for folder in runstore.run_folders(ctx.settings.runs_dir):
        record, problem = runstore.load_run(folder, whole=False)
        if problem:
            out.append((folder, {"run_id": folder.name, "status": runstore.UNREADABLE}, problem))
            continue
        record = stale.refresh(ctx.settings, folder, record)
        out.append((folder, record, stale.record_note(folder, record)))
    return out


def cmd_runs(ctx) -> int:
    from snakegate.commands import run_views
    from snakegate.views.lineage import lineage
    from snakegate.contract.dialect import did_you_mean
    from snakegate.provenance import runstore
    from snakegate.views import verdict as verdicts
    from snakegate.views.plan import is_plan_record, read as read_plan

    args = ctx.args
    for flag, given, allowed, what in (("--status", args.status, RUN_STATUSES, "a run status"),
                                       ("--verdict", args.verdict, VERDICTS, "a verdict")):
        if given and given not in allowed:
            close = did_you_mean(given, allowed)
            raise UserError(f"{flag} {given!r} is not {what}"
                            + (f"; did you mean `{close}`?" if close else f"; use one of {', '.join(allowed)}"))
    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit must be at least 1 (got {args.limit})")
    since = run_views.parse_since(args.since) if args.since else None
    rows = []
    for folder, r, note in _records(ctx):
        row = {"run_id": r.get("run_id") or folder.name, "workflow": r.get("workflow"), "status": r.get("status"),
               "started": r.get("started"), "duration_s": r.get("duration_s", runstore.duration_s(r)),
               "invocation_id": r.get("invocation_id"), "kind": "workflow", **verdicts.for_list(r)}
        row.update(lineage(r))
        if is_plan_record(r):
            plan = read_plan(folder, record=r, contracts=False)  # names and workflows: no contract is read
            row.update(kind="plan", plan=plan.label, steps=[s.as_json() for s in plan.steps])
        if note:
            row["note"] = note
        if not row["started"]:  # no start recorded (an unreadable record): the folder's time places it
            row["folder_time"] = _folder_time(folder)
        rows.append(row)
    shown = run_views.select(rows, args.workflow, args.status, since, args.limit, args.verdict)
    matched = len(run_views.select(rows, args.workflow, args.status, since, None, args.verdict))
    if args.json:
        for row in shown:
            row.pop("folder_time", None)
        print(json.dumps({"runs": shown, "matched": matched, "total": len(rows)}, indent=2, sort_keys=True))
        return ExitCode.OK
    if not rows:
        print(f"no runs yet in {ctx.settings.runs_dir}")
        return ExitCode.OK
    if not shown:
        known = sorted({str(r.get("workflow")) for r in rows if r.get("workflow")}
                       | {str(s["workflow"]) for r in rows for s in r.get("steps") or [] if s.get("workflow")})
        hint = f" (runs exist of: {', '.join(known)})" if args.workflow and args.workflow not in known else ""
        print(f"no run matches the filters among the {len(rows)} runs in {ctx.settings.runs_dir}{hint}")
        return ExitCode.OK
    print("\n".join(run_views.runs_lines(shown, len(rows))))
    return ExitCode.OK


def _folder_time(folder) -> str:
    import datetime as _dt
    try:
        return _dt.datetime.fromtimestamp(folder.stat().st_mtime, _dt.timezone.utc).isoformat()
    except OSError:
        return ""


def find_run_or_fail(ctx, ref: str):
    from snakegate.provenance import runstore
    try:
        return runstore.find_run(ctx.settings.runs_dir, ref)
    except runstore.RunNotFound as exc:
        raise UserError(str(exc), ExitCode.INVALID) from None


def cmd_show_run(ctx) -> int:
    from snakegate.views import facts
    from snakegate.views import params as param_view
    from snakegate.run import stale
    from snakegate.commands.run_views import show_run_lines
    from snakegate.provenance import compare, runstore
    from snakegate.views.plan import read as read_plan
    from snakegate.views.proof import record_check

    run_dir = find_run_or_fail(ctx, ctx.args.run)
    record, problem = runstore.load_run(run_dir)
    if problem:
        raise UserError(f"the record of run {run_dir.name} cannot be read: {problem} (folder {run_dir}); "
                        "the other runs are not affected", ExitCode.INVALID)
    record = stale.refresh(ctx.settings, run_dir, record)
    record.setdefault("run_id", run_dir.name)
    note = stale.record_note(run_dir, record)
    proof = record_check(run_dir, ctx.settings.registry_root) if record.get("status") != "running" else None
    from snakegate.views import assessments

    assessed = assessments.of_run(ctx.settings.registry_root, str(record["run_id"]))
    if ctx.args.json:
        print(json.dumps({**record, **({"note": note} if note else {}), **({"record_check": proof} if proof else {}),
                          **({"assessments": assessed} if assessed else {})}, indent=2, sort_keys=True))
        return ExitCode.OK
    plan = read_plan(run_dir, ctx.registry, record)
    if plan is not None:  # each step's params by its own contract (views.plan)
        schema, params = plan.scope()[0], []
    else:
        wf = facts.workflow_of(ctx.registry, run_dir)
        schema = wf.schema if wf is not None else None
        invocation = runstore.read_json(run_dir / runstore.INVOCATION_JSON).get("invocation") or {}
        shown = param_view.masked_params(schema, invocation.get("params") or {})
        params = [(name, param_view.value_text(value)) for name, value in shown.items()]
    try:
        prov = compare.load_prov(run_dir)
    except compare.ProvMissing:
        prov = {}
    scrub = param_view.Scrubber(run_dir, schema, plan)
    origin = facts.origin_of(record, run_dir, prov)
    lines = show_run_lines(record, origin, params, facts.parent_of(record, schema), run_dir, note, plan=plan,
                           proof=proof)
    lines += assessments.lines(assessed)  # beside the record, never inside it: after everything the record says
    print("\n".join(scrub(lines)))
    return ExitCode.OK
