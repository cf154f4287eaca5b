"""Approving and running a bounded refinement in the chat app: one approval, then each point in the run worker.

`RefineMixin` is part of `ChatApp` (app.py), beside `RunsMixin` (runs.py), which hands it ctrl+r when a
refinement is on the panel. A refinement the model (or the guided dialogue) proposed replaces the draft on
the panel, showing the whole space; ctrl+r approves exactly that one (the conversation must still hold it:
a newer proposal, or a restart, leaves nothing to approve) and `Conversation.run_refinement` runs it in a
daemon thread that only posts messages: each point's start and end, the runner's progress, the outcome.
ctrl+c sets the loop's cancel event: the running variant is cancelled (recorded `cancelled`) and no other
starts. The table of variants with their verdicts goes into the transcript (and, through the
conversation, into the model's next request). Nothing here runs a point the approval did not name.
"""

from __future__ import annotations

import threading

from textual import work

from snakegate.tui import present, present_refine, present_runs
from snakegate.tui.background import in_thread
from snakegate.tui.messages import (
    RefinementFinished,
    RefinementStepped,
    RunProgressed,
    RunRefused,
)


class RefineMixin:
    """The refinement half of ChatApp: needs `conversation`, `panel`, `run_panel`, `transcript`, `thinking`,
    `running`, `approved_by` and RunsMixin's `_refresh_approve`/`_run_ended`."""

    def _init_refine(self) -> None:
        self.shown_refinement = None  # the refinement on the panel: the only one ctrl+r can approve
        self.refined: dict[str, str] = {}  # approval sha256 -> how its loop ended

    def refinement_proposed(self, refinement) -> None:
        """A refinement passed the gate whole: it takes the panel (the draft there can no longer be approved)."""
        self.shown_draft, self.withdrawn, self.shown_refinement = None, None, refinement
        self.panel.clear_secrets()
        self.panel.show_refinement(refinement.lines, refinement.proposal.budget_runs)
        self._refresh_approve()

    def can_approve_refinement(self) -> bool:
        convo = self.conversation
        return (self.shown_refinement is not None and convo is not None and not self.running and not self.thinking
                and convo.refinement is self.shown_refinement)

    def _refinement_state(self) -> tuple[str, str]:
        shown = self.shown_refinement
        if self.running and self.run_draft is shown:
            return "running", present.draft_status("running", who=self.approved_by)
        if shown.sha256 in self.refined:
            return "used", present.draft_status("refined", ended=self.refined[shown.sha256])
        if self.conversation is not None and self.conversation.refinement is not shown:
            return "withdrawn", present.draft_status("withdrawn", reason="a newer proposal or a restart replaced it")
        if not self.can_approve_refinement():
            return "pending", present.draft_status("pending")
        return "ready", present.draft_status("ready")

    def _approve_and_refine(self) -> None:
        """Mint the refinement's approval (only here) for the one on screen, and start its loop."""
        from snakegate.errors import UserError

        refinement = self.shown_refinement
        if not self.can_approve_refinement():
            self._refresh_approve()
            return
        try:
            approval = self.conversation.approve_refinement(self.approved_by)
        except UserError as exc:
            self.run_panel.refused(present_runs.refusal_lines(exc.message, []))
            return
        self.running, self.quit_armed, self.cancel_requested, self.run_draft = True, False, False, refinement
        self._run_cancel = threading.Event()
        self._refresh_approve()
        self.run_panel.started(f"Refinement of run {refinement.proposal.parent.name}", present_refine.CANCEL_HINT)
        self.transcript.add_note(present_refine.started_note(self.approved_by, refinement))
        self._execute_refinement(approval, refinement, self._run_cancel)

    @work(exclusive=True, group="run")
    async def _execute_refinement(self, approval, refinement, cancel: threading.Event) -> None:
        from snakegate.errors import UserError
        from snakegate.refine.text import outcome_lines

        def on_event(kind: str, facts: dict) -> None:  # in the loop's thread: only post
            self.post_message(RefinementStepped(kind, facts))

        def on_progress(p: dict) -> None:
            self.post_message(RunProgressed(p["done"], p["total"], p["rule"]))

        def run():
            return self.conversation.run_refinement(approval, on_event=on_event, on_progress=on_progress,
                                                    cancel=cancel)

        try:
            outcome = await in_thread(run, name="snakegate-refine")
        except UserError as exc:
            self.post_message(RunRefused(exc.message))
        else:
            self.post_message(RefinementFinished(outcome, outcome_lines(refinement.proposal, outcome)))

    def on_refinement_stepped(self, message: RefinementStepped) -> None:
        facts = message.facts
        if message.kind == "start" and not self.cancel_requested:
            self.run_panel.point(present_refine.point_title(facts), present_refine.point_lines(facts))
        elif message.kind == "end" and self.run_draft is not None:
            check = self.run_draft.proposal.check["name"]
            self.transcript.add_note(present_refine.variant_note(facts, check), ok=facts.get("status") == "succeeded")

    def on_refinement_finished(self, message: RefinementFinished) -> None:
        outcome = message.outcome
        self.run_panel.finished(present_refine.panel_status(outcome.state), message.lines)
        self.transcript.add_result(present_refine.outcome_markdown(message.lines),
                                   ok=outcome.state in present_refine.ENDED_OK)
        if self.run_draft is not None:
            self.refined[self.run_draft.sha256] = outcome.state
        self._run_ended()
