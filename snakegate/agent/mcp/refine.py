"""A bounded refinement over MCP: `propose_refinement` gates the whole space, `execute_refinement` asks the person
ONCE, by elicitation, showing the whole space, and only then runs it.

`offer()` keeps each space propose_refinement gated during this server run, by its approval's sha256 (a
proposal made again replaces it, unrun); `execute_refinement(approval_sha256)` accepts only those. It asks
as `execute` does (execute.confirm: a standalone elicitation on handshake-era connections, an
InputRequiredResult with a one-time nonce on 2026-07-28 ones; a client without form elicitation is refused
and nothing runs), showing every point, the budget, the stop rule and the check's advice. Only a ticked,
accepted form mints the approval; declined or cancelled, nothing runs. Then snakegate.refine.loop runs the
proposal held here in memory (the agent's run_approved: each run records this server run and the approver
as its origin, and the person's cores), with a progress notification per point and per job; a cancelled
MCP request cancels the running variant and starts no other. One confirmation, one loop: the space cannot
run twice without being proposed and confirmed again. The audit line of the call records the elicitation's
answer, the approval's sha256, the approver, the refinement's id and how it ended.
"""

from __future__ import annotations

import secrets
from dataclasses import replace

from mcp_types import CallToolResult, InputRequiredResult

from snakegate.agent.mcp.audit import Call
from snakegate.agent.mcp.execute import (
    ConfirmRefinement,
    _origin,
    _refuse,
    _utc_now,
    checked_arguments,
    confirm,
    in_worker,
)
from snakegate.agent.mcp.state import (
    McpState,
    RefinementEntry,
    client_label,
    error_dict,
    tool_result,
)
from snakegate.agent.mcp.tools import EXECUTE_REFINEMENT
from snakegate.agent.refining import RefinementApproval, run_approved
from snakegate.errors import UserError


def offer(state: McpState, proposal, result: dict) -> dict:
    """Keep a gated space for execute_refinement; the answer says how to run it."""
    from snakegate.refine.approval import sha256_of
    from snakegate.refine.text import proposal_lines

    sha = sha256_of(proposal.approval())
    with state.lock:
        state.refinements[sha] = RefinementEntry(proposal=proposal, lines=proposal_lines(proposal))
    return {**result, "approval_sha256": sha,
            "next": "call execute_refinement with this approval_sha256: the person is shown the whole space once "
                    "and asked to confirm it; nothing runs before, and only these points can run"}


def question(entry: RefinementEntry, sha: str, client: str) -> tuple[str, dict]:
    """The confirmation's message (the whole space) and its form schema."""
    from mcp.server.elicitation import render_elicitation_schema

    p = entry.proposal
    n = len(p.points)
    message = (f"{client} asks snakegate to run a bounded refinement (approval {sha[:12]}…).\n"
               f"One confirmation runs up to {min(p.budget_runs, n)} of these {n} point(s), in order, each a fork "
               "of the run before it, until the stop rule or the budget; nothing else can run:\n\n"
               + "\n".join(entry.lines)
               + "\n\nTick \"Run this refinement now\" and accept to run it. Decline or cancel, and nothing runs.")
    return message, render_elicitation_schema(ConfirmRefinement)


async def execute_refinement(state: McpState, ctx, params, call: Call) -> CallToolResult | InputRequiredResult:
    from snakegate.refine import loop
    from snakegate.refine.space import cores_of
    from snakegate.refine.text import outcome_lines, values_text
    from snakegate.run.runner import RunOptions

    args, refused = checked_arguments(state, params, call, EXECUTE_REFINEMENT)
    if refused is not None:
        return refused
    sha = args.approval_sha256
    with state.lock:
        entry = state.refinements.get(sha)
    if entry is None:
        return _refuse(state, call, error_dict(
            "unknown_refinement", f"no refinement with approval_sha256 `{sha[:80]}` was proposed to this server; "
                                  "nothing ran", "call propose_refinement first and pass the approval_sha256 it returns"))
    if entry.ran is not None:
        return _refuse(state, call, error_dict(
            "refinement_used", f"this refinement already ran (refinement {entry.ran}); one confirmation runs it "
                               "once; nothing ran", "call propose_refinement again, and the person confirms anew"))
    message, schema = question(entry, sha, client_label(ctx.session))
    approved_by, answered = await confirm(
        state, ctx, params, call, key=sha, what=f"refinement {sha[:12]}…", message=message, schema=schema,
        command=None, ask="ask the researcher what to change; propose_refinement again for another space",
        tool=EXECUTE_REFINEMENT.name, form_model=ConfirmRefinement)
    if answered is not None:
        return answered
    with state.lock:  # one confirmation, one loop, even when two confirmations arrive at once
        if entry.ran is not None or state.refinements.get(sha) is not entry:
            return _refuse(state, call, error_dict("refinement_used", "this refinement is already running or was "
                                                                      "proposed anew; nothing ran",
                                                   "call propose_refinement again"))
        entry.ran = "starting"
    # The approval exists only from here on: minted from the person's accepted confirmation, used once.
    approval = RefinementApproval(sha256=sha, approved_by=approved_by, approved_at=_utc_now(),
                                  token=secrets.token_hex(32), transcript_sha256=state.audit.digest())
    call.extra.update(approval_sha256=sha, approved_by=approved_by, approved_at=approval.approved_at)
    proposal = replace(entry.proposal, cores=cores_of(state.cores))  # the budget counts the cores runs use here

    def work(progress, cancel):
        at = {"n": None}

        def on_event(kind: str, facts: dict) -> None:
            if kind == "start":
                at["n"] = f"point {facts['n']}/{facts['points']} ({values_text(facts['values'])}): "
                progress({"done": 0, "total": None, "rule": None}, at["n"])

        return run_approved(state.registry, state.settings, proposal, approved_by=approved_by,
                            origin=_origin(state, ctx, approval), options=RunOptions(cores=state.cores),
                            on_event=on_event, on_progress=lambda p: progress(p, at["n"] or ""), cancel=cancel)

    try:
        outcome = await in_worker(ctx, work, first="every point gated; the first is starting")
    except UserError as exc:
        with state.lock:
            entry.ran = None
        return _refuse(state, call, error_dict("run_refused", f"the refinement could not start: {exc.message}",
                                               "tell the researcher; this is not something new arguments fix"))
    with state.lock:
        entry.ran = outcome.refinement
    call.extra.update(refinement=outcome.refinement, state=outcome.state, runs=[v.run_id for v in outcome.variants])
    result = {"ok": outcome.state in (loop.REACHED, loop.BEST), "refinement": outcome.refinement,
              "state": outcome.state, "why": outcome.why, "best": outcome.best.run_id if outcome.best else None,
              "runs": [v.row() for v in outcome.variants], "table": outcome_lines(entry.proposal, outcome),
              "approved_by": approved_by, "approved_at": approval.approved_at}
    return tool_result(state, result, ok=True)
