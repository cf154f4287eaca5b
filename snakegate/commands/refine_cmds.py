"""`snakegate refine`: a bounded search around an earlier run, approved once.

Gates the whole space first (snakegate.refine.space), shows it and asks once (or takes --yes), then runs
it (snakegate.refine.loop) and prints a table of the variants with their verdicts. Exit 0 when the stop
rule is met (or, for --best, a best run exists), 1 when it is not or a point could not run, 130 when
cancelled.
"""

from __future__ import annotations

import json
import signal
import sys

from snakegate.errors import ExitCode, UserError


def register(sub, epilog: str) -> None:
    from snakegate.commands.run_cmds import add_snakemake_options

    p = sub.add_parser("refine", help="try a bounded space of param values around a run, approved once",
                       epilog=epilog,
                       description="Gate every point of the space (--try values; several names make a grid), show "
                                   "it with the budget and the stop rule, ask once, then run the points in order, "
                                   "each a fork of the run before it, until the stop rule or the budget. Nothing "
                                   "but the approved points can run; each run records the approval it ran under.")
    p.add_argument("run", help="run id, unique prefix, or 'latest'")
    p.add_argument("--try", dest="tries", action="append", default=[], metavar="NAME=VALUE",
                   help="a candidate value (read as YAML) of a param that may vary; repeat for more candidates "
                        "(tried in the order given) and for more params (a grid); a plan's as STEP.PARAM=VALUE")
    p.add_argument("--budget", type=int, required=True, metavar="N", help="at most N runs")
    p.add_argument("--core-hours", dest="core_hours", type=float, metavar="H",
                   help="also stop once the runs have used H cores x hours (measured; a run is never cut short)")
    rule = p.add_mutually_exclusive_group(required=True)
    rule.add_argument("--until", metavar="CHECK", help="stop at the first run that passes CHECK (a check of the "
                      "workflow's evaluate:)")
    rule.add_argument("--best", metavar="CHECK", help="run the budget and keep the run with the best value of CHECK")
    p.add_argument("--yes", action="store_true", help="approve the proposal without asking (it is still printed)")
    p.add_argument("--json", action="store_true", help="print the outcome as JSON (the proposal goes to stderr)")
    add_snakemake_options(p)
    p.set_defaults(handler=cmd_refine, passes_to_snakemake=True)


def cmd_refine(ctx) -> int:
    from snakegate.commands.registry_cmds import print_gate_result
    from snakegate.commands.run_cmds import (
        ProgressPrinter,
        find_run_or_fail,
        options_from,
    )
    from snakegate.refine import loop
    from snakegate.refine.approval import ApprovalUnwritable
    from snakegate.refine.space import RefineRefused, parse_try, propose
    from snakegate.refine.text import outcome_lines, proposal_lines, values_text

    args = ctx.args
    parent = find_run_or_fail(ctx, args.run)
    tries = [parse_try(text) for text in args.tries]
    options_from(args)  # refuse bad --cores/--profile before the space is gated
    try:
        proposal = propose(ctx.registry, ctx.settings, parent, tries, args.budget, until=args.until,
                           best=args.best, core_hours=args.core_hours, cores=args.cores)
    except RefineRefused as exc:
        for label, result in exc.results:
            print_gate_result(result, f"refinement point {label}", stream=sys.stderr)
        raise
    out = sys.stderr if args.json else sys.stdout
    print("\n".join(proposal_lines(proposal)), file=out, flush=True)
    who = _user(ctx.settings.registry_root)
    if args.yes:
        approved_by = f"{who} (--yes)"
    else:
        if not sys.stdin.isatty():
            raise UserError("refine asks once before it runs anything, and nobody is at a terminal to answer: read "
                            "the proposal above and pass --yes to approve it", ExitCode.USAGE)
        print(f"Run up to {min(proposal.budget_runs, len(proposal.points))} of these {len(proposal.points)} "
              "points? [y/N] ", end="", file=out, flush=True)
        answer = sys.stdin.readline().strip().lower()
        if answer not in ("y", "yes"):
            print("not approved; nothing was run", file=out)
            return ExitCode.OK
        approved_by = f"{who} (answered yes at the terminal)"

    def make_options(**extra):
        return options_from(args, **extra)

    def on_event(kind: str, facts: dict) -> None:
        if kind == "start":
            print(f"point {facts['n']}/{facts['points']}: {values_text(facts['values'])} (fork of {facts['predecessor']})",
                  file=sys.stderr, flush=True)

    def execute(*a, **kw):
        from snakegate.run.runner import execute as run
        return run(*a, on_progress=ProgressPrinter(), **kw)  # each run's rules from zero

    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, _interrupt)  # between runs, SIGTERM cancels as Ctrl-C does (recorded)
    try:
        outcome = loop.run(ctx.registry, ctx.settings, proposal, make_options, approved_by=approved_by,
                           on_event=on_event, execute=execute)
    except ApprovalUnwritable as exc:
        raise UserError(f"{exc}; nothing was run", ExitCode.USAGE) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    if args.json:
        print(json.dumps({"refinement": outcome.refinement, "state": outcome.state, "why": outcome.why,
                          "best": outcome.best.run_id if outcome.best else None,
                          "runs": [v.row() for v in outcome.variants]}, indent=2, sort_keys=True))
    else:
        print("\n".join(outcome_lines(proposal, outcome)))
    if outcome.state == loop.CANCELLED:
        return ExitCode.CANCELLED
    return ExitCode.OK if outcome.state in (loop.REACHED, loop.BEST) else ExitCode.INVALID


def _interrupt(signum, _frame):
    raise KeyboardInterrupt


def _user(root) -> str:
    """Who approves, as every other door names them (snakegate.registry.approver: remembered, git, login)."""
    from snakegate.registry.approver import resolve

    try:
        return resolve(root).name
    except UserError:  # no name in this environment: say so rather than fail
        return "an unnamed user"
