"""The conversation's half of a bounded refinement: the one proposal on offer, its one approval, its one loop.

A mixin of `Conversation` (controller.py), as approval.py is for drafts. When `propose_refinement` passes
(the whole space gated, snakegate.agent.actions.refine), the controller keeps the `space.Proposal` as the
`refinement` on offer and emits `RefinementReady`; a later proposal replaces it, and the replaced one can
no longer be approved. `approve_refinement()` is called by the UI when the person approves the space they
see (never by a model) and mints the one `RefinementApproval` for exactly that proposal (its sha256);
`run_refinement()` demands it, consumes it and runs the proposal it holds in memory through
snakegate.refine.loop: only the approved points can run, whatever the model says meanwhile (a proposal
made mid-loop is a new offer needing a new approval). Each run records the conversation as its origin.
When the loop ends, its table of variants with their verdicts is kept for the conversation and enters the
history at the next turn (as the assistant's words, so the guided dialogue reads no command into it and
a model sees what happened). The audit log gets the proposal, the approval and the refinement's id.
"""

from __future__ import annotations

import datetime as _dt
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from snakegate.agent.actions import limits
from snakegate.agent.actions.platform import Outcome
from snakegate.agent.events import DraftReady
from snakegate.errors import UserError

NOTE = "(snakegate) The refinement you proposed ran:\n{table}"


@dataclass(frozen=True)
class RefinementDraft:
    """A refinement on offer: the gated proposal, what the person approves (its sha256) and how it reads."""

    proposal: Any                    # snakegate.refine.space.Proposal
    sha256: str                      # of proposal.approval(): the one thing an approval names
    lines: tuple[str, ...]           # snakegate.refine.text.proposal_lines: the whole space as shown
    answered_by: str | None = None   # the model name the server reported for the reply that proposed it


@dataclass(frozen=True)
class RefinementReady:
    """Event: a refinement passed the gate whole and is on offer for one approval."""

    refinement: RefinementDraft


@dataclass(frozen=True)
class RefinementApproval:
    """Minted by the UI when the person approves one refinement; `run_refinement` demands it, once."""

    sha256: str
    approved_by: str
    approved_at: str
    token: str = field(repr=False)
    transcript_sha256: str | None = None


def is_refinement(proposal: Any) -> bool:
    from snakegate.refine.space import Proposal

    return isinstance(proposal, Proposal)


def ready_event(draft: Any):
    """The event announcing what a tool call put on offer: a refinement, or a draft."""
    return RefinementReady(draft) if isinstance(draft, RefinementDraft) else DraftReady(draft)


def _utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_approved(registry, settings, proposal, *, approved_by: str, origin: dict, options=None,
                 on_event: Callable[[str, dict], None] | None = None,
                 on_progress: Callable[[dict], None] | None = None, cancel: threading.Event | None = None):
    """loop.run for a door that holds an approval: every run gets `origin` in its record, the runner's progress
    goes to `on_progress`. Raises UserError (nothing ran) when the refinement's record cannot be written."""
    from snakegate.refine import loop
    from snakegate.refine.approval import ApprovalUnwritable
    from snakegate.run import runner

    base = options or runner.RunOptions()

    def make_options(**extra):
        return replace(base, **extra)

    def execute(reg, sets, invocation, opts, **kw):
        kw["extra_record"] = {**(kw.get("extra_record") or {}), "origin": origin}
        return runner.execute(reg, sets, invocation, opts, on_progress=on_progress, **kw)

    try:
        return loop.run(registry, settings, proposal, make_options, approved_by=approved_by, on_event=on_event,
                        cancel=cancel, execute=execute)
    except ApprovalUnwritable as exc:
        raise UserError(f"{exc}; nothing was run") from None


class Refining:
    """Mixin: expects `registry`, `settings`, `audit`, `messages`, `_lock`, `_log` and (approval.py's)
    `_origin` from Conversation."""

    refinement: RefinementDraft | None = None
    _refinement_approval: RefinementApproval | None = None
    _refinement_notes: tuple[str, ...] = ()   # tables of finished loops, for the next turn's history

    # ---- the controller's hooks ------------------------------------------------------------------
    def _refinement_draft(self, outcome: Outcome, turn, model: str | None) -> tuple[Outcome, RefinementDraft | None]:
        """A proposal that passed the gate whole becomes the refinement on offer (replacing any other)."""
        from snakegate.agent.actions.platform import error_result
        from snakegate.refine.approval import sha256_of
        from snakegate.refine.text import proposal_lines

        if turn.drafts >= limits.MAX_DRAFTS_PER_TURN:
            result = limits.drafts_exhausted(outcome.name)
            return Outcome(outcome.name, outcome.arguments, result, False,
                           f"{outcome.name}: {result['error']['message']}"), None
        proposal = outcome.proposal
        try:
            draft = RefinementDraft(proposal=proposal, sha256=sha256_of(proposal.approval()),
                                    lines=tuple(proposal_lines(proposal)), answered_by=model)
        except Exception as exc:  # noqa: BLE001 - a proposal that cannot be shown is not offered (fail closed)
            result = error_result("refinement_not_offered", f"the refinement cannot be shown: {exc}",
                                  "tell the researcher; report it to the snakegate maintainers")
            return Outcome(outcome.name, outcome.arguments, result, False, f"{outcome.name}: not offered"), None
        turn.drafts += 1
        self.refinement, self._refinement_approval = draft, None
        self._log("refinement_proposed", approval_sha256=draft.sha256, parent_run=proposal.parent.name,
                  points=[p.invocation_id for p in proposal.points], budget=proposal.budget_runs,
                  stop=dict(proposal.stop))
        return outcome, draft

    def _refinement_turn(self, turn) -> None:
        """At a turn's start (lock held): remember what was on offer, and put finished loops' tables into the
        history before the turn's first message, so undoing the turn never drops them."""
        turn.refinement = self.refinement
        for table in self._refinement_notes:
            text = NOTE.format(table=table)
            last = self.messages[-1] if len(self.messages) > 1 else None
            if last is not None and last.get("role") == "assistant" and not last.get("tool_calls"):
                # one assistant message after another breaks chat templates that want the roles alternating
                last["content"] = f"{last.get('content') or ''}\n\n{text}".strip()
            else:
                self.messages.append({"role": "assistant", "content": text})
        self._refinement_notes = ()

    def _undo_refinement(self, turn) -> None:
        """An undone turn takes back the refinement it proposed; an approval is never brought back."""
        if self.refinement is not getattr(turn, "refinement", None):
            self.refinement, self._refinement_approval = getattr(turn, "refinement", None), None

    def _forget_refinement(self) -> None:
        self.refinement, self._refinement_approval = None, None

    # ---- the UI's half ---------------------------------------------------------------------------
    def approve_refinement(self, approved_by: str) -> RefinementApproval:
        """Mint the approval for the refinement on offer. Called by the UI when the person approves, never by a
        model."""
        with self._lock:
            draft = self.refinement
            if draft is None:
                raise UserError("there is no refinement to approve: the model must first propose one that passes "
                                "the gate")
            if not isinstance(approved_by, str) or not approved_by.strip():
                raise UserError(f"approved_by must name the person approving (got {approved_by!r})")
            approved_at = _utc_now()
            self._log("refinement_approval", approval_sha256=draft.sha256, approved_by=approved_by.strip(),
                      approved_at=approved_at, parent_run=draft.proposal.parent.name)
            digest = self.audit.digest() if self.audit is not None else None
            self._refinement_approval = RefinementApproval(sha256=draft.sha256, approved_by=approved_by.strip(),
                                                           approved_at=approved_at, token=secrets.token_hex(32),
                                                           transcript_sha256=digest)
            return self._refinement_approval

    def run_refinement(self, approval: RefinementApproval, options=None,
                       on_event: Callable[[str, dict], None] | None = None,
                       on_progress: Callable[[dict], None] | None = None,
                       cancel: threading.Event | None = None):
        """Run the approved refinement (snakegate.refine.loop.Outcome). The approval is spent at once: a second
        call, or one for a refinement that was replaced, is a UserError and runs nothing. `on_event` hears each
        point start and end; setting `cancel` cancels the running variant and starts no other."""
        from snakegate.refine.text import outcome_lines

        if not isinstance(approval, RefinementApproval):
            raise UserError("run_refinement needs the RefinementApproval the panel mints when the researcher "
                            "approves the refinement")
        with self._lock:
            draft, current = self.refinement, self._refinement_approval
            if draft is None or approval.sha256 != draft.sha256:
                raise UserError("this approval is not for the refinement on offer (a newer proposal replaced it, "
                                "or it already ran); nothing ran. Approve the refinement shown now")
            if current is None or not secrets.compare_digest(approval.token.encode(), current.token.encode()) \
                    or (approval.approved_by, approval.approved_at) != (current.approved_by, current.approved_at):
                raise UserError("the approval of this refinement is not valid (not minted by this conversation, or "
                                "already used); nothing ran. Approve it in the panel again")
            self.refinement, self._refinement_approval = None, None  # one approval, one loop
        origin = self._origin(approval, draft.answered_by)  # approval.py
        outcome = run_approved(self.registry, self.settings, draft.proposal, approved_by=approval.approved_by,
                               origin=origin, options=options, on_event=on_event, on_progress=on_progress,
                               cancel=cancel)
        self._log("refinement", refinement=outcome.refinement, approval_sha256=draft.sha256, state=outcome.state,
                  why=outcome.why, runs=[v.run_id for v in outcome.variants])
        with self._lock:
            self._refinement_notes = (*self._refinement_notes, "\n".join(outcome_lines(draft.proposal, outcome)))
        return outcome
