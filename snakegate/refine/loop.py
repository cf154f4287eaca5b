"""Running an approved refinement: each point in order, as a fork of the run before it, until the stop rule,
the budget or a cancel.

Before each run the point is gated again as a fork of its predecessor and must prove the very invocation
the person approved (snakegate.run.runner refuses any other before a run folder exists), so nothing
outside the approved space can run, whatever changed on disk since. Each run's run.json names the
refinement and the approval's sha256; the refinement's own record (snakegate.refine.approval) lists every
run and how the loop ended. Never asks anything: the caller has the approval.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snakegate.errors import UserError
from snakegate.refine import approval as approvals
from snakegate.refine.space import Proposal, same, value_at

# how a refinement ends
REACHED, BEST, BUDGET, EXHAUSTED, CANCELLED, STOPPED = "reached", "best", "budget", "exhausted", "cancelled", "stopped"


@dataclass
class Variant:
    n: int
    run_id: str
    values: dict[str, Any]         # as shown (x-sensitive values as keyed hashes)
    status: str                    # the run's status
    verdict: str                   # pass | fail | unknown
    check_status: str              # the stop rule's check in this run
    check_value: Any
    core_hours: float

    def row(self) -> dict:
        return {"n": self.n, "run_id": self.run_id, "values": self.values, "status": self.status,
                "verdict": self.verdict, "check": {"status": self.check_status, "value": self.check_value},
                "core_hours": round(self.core_hours, 6)}


@dataclass
class Outcome:
    refinement: str                 # the record's id
    state: str                      # how it ended (see the constants above)
    why: str                        # a sentence for a person
    variants: list[Variant] = field(default_factory=list)
    best: Variant | None = None


def check_of(verdict: dict | None, name: str) -> tuple[str, Any]:
    for check in (verdict or {}).get("checks") or []:
        if isinstance(check, dict) and check.get("name") == name:
            return str(check.get("status") or "unknown"), check.get("value")
    return "unknown", None


def run(registry, settings, proposal: Proposal, make_options: Callable[..., Any], *, approved_by: str,
        on_event: Callable[[str, dict], None] | None = None, cancel: threading.Event | None = None,
        execute: Callable[..., Any] | None = None) -> Outcome:
    """Run the approved proposal. `make_options(forcerun=, seed_from=)` gives each run's RunOptions;
    `on_event(kind, facts)` hears "start" (a point is about to run) and "end" (a variant). Raises
    ApprovalUnwritable (nothing ran) when the refinement's record cannot be written."""
    from snakegate.run.fork import ForkRefused, parent_invocation, plan_fork

    if execute is None:
        from snakegate.run.runner import execute
    emit = on_event or (lambda kind, facts: None)
    approved = proposal.approval()
    record = approvals.open_record(settings.registry_root, approved, approved_by)
    sha = record.data["approval_sha256"]
    stop_name = proposal.stop.get("until") or proposal.stop.get("best")
    variants: list[Variant] = []
    spent_s = 0.0
    predecessor: Path = proposal.parent
    state, why = EXHAUSTED, f"every one of the {len(proposal.points)} points ran; none passed {stop_name}"

    def finish() -> Outcome:
        best = _best(variants, proposal)
        if proposal.stop.get("best") and state in (EXHAUSTED, BUDGET) and best is not None:
            final_state, final_why = BEST, f"{why}; the best {stop_name} is run {best.run_id} ({best.check_value})"
        else:
            final_state, final_why = state, why
        try:
            record.update(state=final_state, why=final_why, runs=[v.row() for v in variants],
                          best=best.run_id if best else None)
        except approvals.ApprovalUnwritable:
            pass  # every run's run.json still names the approval; the caller prints the table
        return Outcome(refinement=record.id, state=final_state, why=final_why, variants=variants, best=best)

    try:
        for point in proposal.points:
            if cancel is not None and cancel.is_set():
                state, why = CANCELLED, "cancelled before the next run"
                break
            if len(variants) >= proposal.budget_runs:
                state, why = BUDGET, f"the budget of {proposal.budget_runs} run(s) is spent"
                break
            if proposal.core_hours is not None and spent_s / 3600 >= proposal.core_hours:
                state, why = BUDGET, (f"the budget of {proposal.core_hours:g} core-hour(s) is spent "
                                      f"({spent_s / 3600:.3g})")
                break
            base = parent_invocation(predecessor)
            changes = {k: v for k, v in point.values.items() if not same(value_at(base, k), v)}
            emit("start", {"n": point.n, "points": len(proposal.points), "values": point.shown,
                           "predecessor": predecessor.name})
            try:
                plan = plan_fork(registry, settings, predecessor, changes)
            except ForkRefused as exc:
                state, why = STOPPED, f"point {point.n} could not be forked from run {predecessor.name}: {exc.message}"
                break
            if plan.result.invocation_id != point.invocation_id:
                state, why = STOPPED, (f"point {point.n} now gates as invocation {plan.result.invocation_id[:12]}, "
                                       f"not the approved {point.invocation_id[:12]}: nothing outside the approved "
                                       "space runs")
                break
            extra = {**plan.record(), "refinement": {"id": record.id, "approval_sha256": sha, "point": point.n,
                                                     "points": len(proposal.points)}}
            options = make_options(forcerun=plan.changed_rules, seed_from=predecessor)
            try:
                outcome = execute(registry, settings, plan.invocation, options, extra_record=extra, cancel=cancel,
                                  approved_invocation_id=point.invocation_id)
            except UserError as exc:
                state, why = STOPPED, f"point {point.n} was not run: {exc.message}"
                break
            rec = outcome.record
            duration = float(rec.get("duration_s") or 0.0)
            spent_s += duration * proposal.cores
            verdict = rec.get("verdict") if isinstance(rec.get("verdict"), dict) else {}
            status, value = check_of(verdict, stop_name)
            variant = Variant(n=point.n, run_id=outcome.run_id, values=point.shown, status=outcome.status,
                              verdict=str(verdict.get("status") or "unknown"), check_status=status,
                              check_value=value, core_hours=duration * proposal.cores / 3600)
            variants.append(variant)
            record.update(runs=[v.row() for v in variants])
            emit("end", variant.row())
            predecessor = outcome.run_dir
            if outcome.status == "cancelled":
                state, why = CANCELLED, f"run {outcome.run_id} was cancelled"
                break
            if proposal.stop.get("until") and status == "pass":
                state, why = REACHED, f"run {outcome.run_id} passes {stop_name}"
                break
        else:
            if proposal.stop.get("best"):
                why = f"every one of the {len(proposal.points)} points ran"
    except KeyboardInterrupt:
        state, why = CANCELLED, "interrupted between runs"
    except approvals.ApprovalUnwritable as exc:
        state, why = STOPPED, str(exc)
    return finish()


def _best(variants: list[Variant], proposal: Proposal) -> Variant | None:
    """The variant with the best value of the stop rule's check (its direction), among those measured."""
    measured = [v for v in variants if isinstance(v.check_value, (int, float)) and not isinstance(v.check_value, bool)
                and v.status == "succeeded"]
    if not measured:
        return None
    if proposal.stop.get("until"):
        passing = [v for v in measured if v.check_status == "pass"]
        return passing[0] if passing else None
    pick = max if proposal.stop.get("direction") == "max" else min
    return pick(measured, key=lambda v: v.check_value)
