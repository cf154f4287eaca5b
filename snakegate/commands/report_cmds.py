"""`snakegate report RUN [-o FILE] [--force]`: a run's page as one self-contained HTML file (snakegate.views.report)."""

from __future__ import annotations

from pathlib import Path

from snakegate.errors import ExitCode, UserError


def register(sub, epilog: str) -> None:
    p = sub.add_parser("report", help="write a run's report: one self-contained HTML page", epilog=epilog,
                       description="Write one HTML file for a run: status and times, who proposed and approved "
                                   "it, the invocation id and git SHAs, the params (sensitive values masked), "
                                   "every declared output with its sha256 (plots inline, key numbers of JSON, "
                                   "the first rows of tables), the job timeline and, for a failure, the rule, "
                                   "the error and its log. The page loads nothing from the network and keeps to "
                                   "a size budget: images up to 2 MiB each and 8 MiB in all, previews of at most "
                                   "40 outputs; what it leaves out is listed with path, size and sha256.")
    p.add_argument("run", help="run id, unique prefix, or 'latest'")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="where to write it (default: runs/<run_id>/report.html, where a fork's or rerun's "
                        "page finds its parent's)")
    p.add_argument("--force", action="store_true", help="replace FILE even when it is not a report of this run")
    p.set_defaults(handler=cmd_report)


def cmd_report(ctx) -> int:
    from snakegate.views import report
    from snakegate.commands.run_cmds import find_run_or_fail
    from snakegate.views.facts import UnreadableRun, relative_to

    run_dir = find_run_or_fail(ctx, ctx.args.run)
    dest = Path(ctx.args.output) if ctx.args.output else report.default_path(run_dir)
    try:
        data = report.build(ctx.registry, ctx.settings, run_dir, dest=dest)
    except UnreadableRun as exc:
        raise UserError(str(exc), ExitCode.INVALID) from None
    try:
        report.write(report.render(data), dest, data["run_id"], force=ctx.args.force)
    except report.ReportError as exc:
        raise UserError(str(exc)) from None
    shown = relative_to(dest, Path.cwd())
    print(f"wrote the report of run {run_dir.name} ({data['status']}) to {shown}")
    return ExitCode.OK
