"""The `recover_run` action: a fork of a failed run, or of a run with a failing check, proposed as a recovery.

The run's own record decides what there is to recover from (agent/recovery.py over its summary): a check
that failed (its value, the threshold it missed, what the workflow says), or the failure itself (the
failing rule and its real error). The changes are the ones given, or, when none are, what the run itself
suggests for the check's params (a `suggested_<param>` key in the check's output, e.g. pump-probe's
suggested background ROI). Then it is fork_run's own path (the full gate on the parent's pinned workflow
copy; a Proposal the person approves), with the draft marked a recovery: the run it makes records
`recovery_of: {run, check}` in run.json and PROV. A run that passed, a check that did not fail and a
recovery with nothing to change are refused, each naming the fix. Reads only; writes and runs nothing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import Field

from snakegate.agent import recovery
from snakegate.agent.actions.base import ActionContext, Args, Refused
from snakegate.agent.actions.results import run_summary
from snakegate.agent.actions.runs import ForkRunArgs, fork_run


class RecoverRunArgs(Args):
    run_id: str = Field(description="The run to recover: a run id, a unique prefix, or 'latest'.")
    check: str = Field("", description="The failing check it recovers from (as the run's verdict names it), or "
                                       "'failure' for a failed run; empty: the first failing one.")
    changes: dict[str, Any] = Field(default_factory=dict,
                                    description="Param name -> new value; empty: what the run itself suggests for "
                                                "the failing check's params.")


def recover_run(ctx: ActionContext, args: RecoverRunArgs):
    summary = run_summary(ctx, args.run_id)
    run = str(summary.get("run_id"))
    found = recovery.evidence(summary)
    if not found:
        raise Refused("nothing_to_recover", f"run {run} {summary.get('status')} and no check of its verdict failed "
                                            f"(verdict: {(summary.get('verdict') or {}).get('status', 'none')})",
                      "to try a variant anyway, use fork_run")
    ev = recovery.addressed(summary, args.check or None, args.changes)
    if ev is None:
        failing = ", ".join(f"`{e.check}`" for e in found)
        raise Refused("not_failing", f"`{args.check}` is not a failing check of run {run} (failing: {failing})",
                      "name one of those, or leave `check` empty for the first")
    changes = dict(args.changes) or dict(ev.suggested)
    if not changes:
        looked = f"; the workflow names {', '.join(f'`{p}`' for p in ev.params)}" if ev.params else ""
        raise Refused("no_change", f"run {run} suggests no value to change for {ev.check}{looked}",
                      "ask the researcher what to change, then call recover_run with `changes`")
    shown, said, proposal = fork_run(ctx, ForkRunArgs(run_id=run, changes=changes))
    of = {"run": run, "check": ev.check}
    params = shown.get("params") or {}  # redacted by the contract: a changed sensitive value stays hidden
    shown = {**shown, "recovery_of": of, "evidence": ev.text,
             "changes": {name: params.get(name.split(".")[0]) for name in changes}}
    if proposal is None or proposal.fork is None:  # the gate refused the change: its errors, with the evidence
        return shown, said, None
    proposal = replace(proposal, fork=replace(proposal.fork, recovery_of=of))
    return shown, f"recovery of run {run} ({ev.check}): " + said, proposal
