"""The refinement action: `propose_refinement`, a bounded search around an earlier run, proposed for ONE approval.

The model (or the guided dialogue) names the parent run, the params that may vary with their candidate
values, a budget of runs and a stop rule (`until` a check passes, or the `best` value of a check). The
whole space is gated up front by snakegate.refine.space.propose (the same proof `snakegate refine` uses);
passing, the answer carries the `space.Proposal` itself, which the door keeps and shows whole for one
approval (the chat's panel, one MCP elicitation). A stop rule that names no check of the run's workflow
is answered with the checks to choose from (each with what it says and its status in the parent run),
as a gate refusal carries its choices. Nothing here runs, writes or approves anything: the refinement
runs only through the door's approval, and only its approved points can run (snakegate.refine.loop).
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import Field

from snakegate.agent.actions.base import RARE, ActionContext, Args, Refused
from snakegate.agent.actions.registry import gate_errors
from snakegate.agent.actions.runs import (
    _run_dir,  # the run actions' one reading of a run id
)
from snakegate.agent.redact import PLACEHOLDER
from snakegate.errors import UserError

# Every point is gated (a DAG build each) while the researcher waits for the answer: a model proposes fewer
# than the command line may (snakegate.refine.space.MAX_POINTS).
MAX_POINTS = 16
MAX_BUDGET = MAX_POINTS


class ProposeRefinementArgs(Args):
    run_id: str = Field(description="The run to refine around (usually one whose verdict failed): a run id as "
                                    "list_runs shows it, a unique prefix, or 'latest'.")
    vary: dict[str, list[Any]] = Field(min_length=1, max_length=4,
                                       description="Param name -> its candidate values, tried in the order given; "
                                                   "several names make a grid (the first varies slowest). Only "
                                                   "these params change; dotted names reach nested params, a "
                                                   "plan's are step.param.")
    budget: int = Field(ge=1, le=MAX_BUDGET, description=f"At most this many runs (1-{MAX_BUDGET}).")
    until: str = Field("", description="Stop at the first run that passes this check of the workflow's evaluate: "
                                       "(as the run's verdict names it). Give `until` or `best`, not both.")
    best: str = Field("", description="Instead of `until`: run the whole budget and keep the run with the best "
                                      "value of this check.", json_schema_extra=RARE)
    core_hours: float | None = Field(None, gt=0, description="Also stop once the runs have used this many "
                                                             "cores x hours.", json_schema_extra=RARE)


def _parent_statuses(run_dir) -> dict[str, str]:
    """check name -> its status in the run's verdict (pass | fail | unknown)."""
    from snakegate.provenance import runstore

    verdict = runstore.read_run(run_dir).get("verdict")
    checks = verdict.get("checks") if isinstance(verdict, dict) else None
    return {str(c.get("name")): str(c.get("status") or "unknown") for c in checks or [] if isinstance(c, dict)}


def check_choices(run_dir, checks: dict) -> list[dict]:
    """The checks a stop rule may name, in the workflow's order: name, what failing it says, the params to
    look at, and the check's status in `run_dir`'s verdict."""
    statuses = _parent_statuses(run_dir)
    return [{"name": name, "says": check.says, "params": list(check.params), "test": check.test,
             "in_this_run": statuses.get(name, "unknown")} for name, check in checks.items()]


def proposal_facts(proposal) -> dict:
    """The proposal as the model (and an MCP client) reads it: exactly what the person is asked to approve."""
    from snakegate.refine.approval import sha256_of

    return {"parent_run": proposal.parent.name, "workflow": proposal.workflow, "vary": list(proposal.names),
            "points": [{"n": p.n, "values": p.shown} for p in proposal.points],
            "left_out": [{"values": s["values"], "why": s["why"]} for s in proposal.skipped],
            "budget": {"runs": proposal.budget_runs, "core_hours": proposal.core_hours},
            "stop": dict(proposal.stop), "check": dict(proposal.check),
            "approval_sha256": sha256_of(proposal.approval())}


def propose_refinement(ctx: ActionContext, args: ProposeRefinementArgs):
    from snakegate.refine.space import RefineRefused, propose, run_checks
    from snakegate.run.pinning import PinError

    parent = _run_dir(ctx, args.run_id)
    if bool(args.until.strip()) == bool(args.best.strip()):
        raise Refused("bad_arguments", "propose_refinement needs one stop rule: `until` (the first run that passes "
                                       "a check) or `best` (the best value of a check over the budget)",
                      "give exactly one of `until` and `best`, naming a check of the run's workflow")
    empty = [name for name, values in args.vary.items() if not values]
    if empty:
        raise Refused("bad_arguments", f"`vary.{empty[0]}` has no candidate values",
                      "give each param a list of one or more values to try")
    if any(v == PLACEHOLDER for values in args.vary.values() for v in values):
        raise Refused("sensitive_value", "a sensitive value cannot be a refinement candidate",
                      "the parent's sensitive values are kept; vary other params")
    points = math.prod(len(values) for values in args.vary.values())
    if points > MAX_POINTS:
        raise Refused("too_many_points", f"the space holds {points} points; at most {MAX_POINTS} are gated and "
                                         "offered at once", "give fewer candidate values")
    name, rule = (args.until.strip(), "until") if args.until.strip() else (args.best.strip(), "best")
    try:
        checks = run_checks(parent)
    except PinError as exc:
        raise Refused("refinement_refused", f"run {parent.name} cannot be refined: {exc}",
                      "refine another run (list_runs), or ask the researcher") from None
    if name not in checks:
        choices = check_choices(parent, checks)
        message = (f"`{name}` is not a check of run {parent.name}'s workflow" if checks else
                   f"run {parent.name}'s workflow has no `evaluate:` checks, so no stop rule can be judged")
        error = {"path": rule, "code": "unknown_check", "message": message,
                 "hint": "name one of `choices` (see `checks`: what each says and its status in this run)"
                 if checks else "refine a workflow whose workflow.yaml says what a good run looks like",
                 "choices": list(checks)}
        return {"ok": False, "errors": [error], "checks": choices}, \
            f"refinement of {parent.name}: refused, {rule} `{name}` is no check", None
    tries = [(key, value) for key, values in args.vary.items() for value in values]
    try:
        proposal = propose(ctx.registry, ctx.settings, parent, tries, args.budget,
                           until=name if rule == "until" else None, best=name if rule == "best" else None,
                           core_hours=args.core_hours, cores=1)
    except RefineRefused as exc:
        if exc.results:
            errors = [{**e, "path": f"point {label}: {e['path']}"} for label, result in exc.results
                      for e in gate_errors(result)]
            return ({"ok": False, "errors": errors},
                    f"refinement of {parent.name}: refused, {len(exc.results)} point(s) do not pass the gate", None)
        raise Refused("refinement_refused", exc.message, "change the space, or ask the researcher") from None
    except UserError as exc:
        raise Refused("bad_arguments", exc.message, "name params as describe_workflow lists them") from None
    facts = proposal_facts(proposal)
    result = {"ok": True, "refinement": facts,
              "next": "the researcher approves the whole refinement once, where it is shown to them; nothing runs "
                      "before, and only these points can run"}
    n = len(proposal.points)
    return result, (f"proposed a refinement of run {parent.name}: {n} point(s) gated, budget "
                    f"{proposal.budget_runs} run(s), {rule} {name}"), proposal
