"""Approving and running in the chat app: the draft on the panel, the one-time approval, the run, cancelling it.

`RunsMixin` is part of `ChatApp` (app.py); with a refinement on the panel, ctrl+r is
RefineMixin's (refine_runs.py). `approve` is the only place an
`Approval` is minted, and only for the draft the researcher sees on the
panel. One approval runs one draft once: after its run the draft is marked
used, and running it again needs a confirmation that says it is a repeat.
ctrl+r with nothing approvable says why on the panel.
The panel names the approver before ctrl+r and ctrl+t sets it; when the name is only
the machine's (git's user.name, the login name) the first ctrl+r asks who approves
first, and the answer is remembered for the registry (snakegate.registry.approver). The run itself goes
through `Conversation.execute` (and so the runner and the gate) in a daemon
thread that only posts messages; ctrl+c during a run asks the runner to
cancel it, which records it `cancelled`; once it ends, its summary enters the
conversation (TurnsMixin.after_run). Snakemake runs detached and records
the run itself, so quitting the chat leaves a run going.
"""

from __future__ import annotations

import threading

from textual import work
from textual.widgets import Button

from snakegate.tui import present, present_runs
from snakegate.tui.background import in_thread
from snakegate.tui.messages import RunFinished, RunProgressed, RunRefused


class RunsMixin:
    """The run half of ChatApp: needs `conversation`, `panel`, `run_panel`, `transcript`, `thinking`."""

    def _init_runs(self) -> None:
        self.running = False        # a Snakemake run is going
        self.quit_armed = False     # ctrl+q pressed once during a run
        self.shown_draft = None     # the draft on the panel: the only one the researcher can approve
        self.withdrawn: str | None = None            # why the last draft left the panel
        self.used: dict[str, tuple[str, str]] = {}   # invocation id -> (run id, status) of its latest run
        self.run_draft = None       # the draft being run
        self.cancel_requested = False
        self._run_cancel = threading.Event()

    # ---- the draft on the panel -------------------------------------------------------------------------

    def draft_proposed(self, draft) -> None:
        """A draft passed the gate: it replaces whatever was on the panel; only it can be approved now."""
        self.shown_draft, self.withdrawn, self.shown_refinement = draft, None, None
        schema = self.schema_of(draft.workflow)
        self.panel.show_draft(draft, schema, self.settings.registry_root, present.fork_note(draft, schema),
                              schema_of=self.schema_of)
        self.transcript.mask(present.draft_secrets(draft, self.schema_of))
        self._refresh_approve()

    def draft_withdrawn(self, reason: str) -> None:
        if self.shown_draft is None:
            return
        self.shown_draft, self.withdrawn = None, reason
        self.panel.clear_draft(f"The draft was withdrawn: {reason}.")
        self.panel.clear_secrets()
        self._refresh_approve()

    def can_approve(self) -> bool:
        # Approve only what is on screen: during a model turn the controller may already hold a newer
        # draft the researcher has not seen yet, so approving waits until the turn is shown.
        if self.shown_refinement is not None:  # a refinement on the panel (refine_runs.py)
            return self.can_approve_refinement()
        convo = self.conversation
        draft = convo.draft if convo is not None else None
        return (draft is not None and not self.running and not self.thinking and self.shown_draft is not None
                and draft.invocation_id == self.shown_draft.invocation_id)

    def _draft_state(self) -> tuple[str, str]:
        if self.shown_refinement is not None:
            return self._refinement_state()
        if self.running and self.run_draft is not None:
            return "running", present.draft_status("running", who=self.approved_by)
        if self.shown_draft is None:
            if self.withdrawn:
                return "withdrawn", present.draft_status("withdrawn", reason=self.withdrawn)
            return "none", present.draft_status("none")
        if self.shown_draft.invocation_id in self.used:
            run, status = self.used[self.shown_draft.invocation_id]
            return "used", present.draft_status("used", run=run, status=status)
        if not self.can_approve():  # the turn that drafted it is still going: ctrl+r would not run it yet
            return "pending", present.draft_status("pending")
        if getattr(self.shown_draft, "differences", ()):  # passed the gate, but not what was asked: never "ready"
            return "differs", present.draft_status("differs")
        return "ready", present.draft_status("ready")

    def _refresh_approve(self) -> None:
        state, text = self._draft_state()
        self.panel.set_state(state, text)
        label = ("Run again… (ctrl+r)" if state == "used" else "Approve as drafted (ctrl+r)" if state == "differs"
                 else "Approve and run (ctrl+r)")
        self.panel.set_approvable(self.can_approve(), label)
        self.panel.set_approver(present.approver_text(self.approved_by, self.approver_asks))
        self.refresh_bindings()

    # ---- approving ----------------------------------------------------------------------------------------

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "approve":
            event.stop()
            self.action_approve()

    def action_approve(self) -> None:
        """ctrl+r or the button: approve the draft on screen, asking first when it would be a repeat."""
        if not self.can_approve():
            self.panel.set_state("blocked", present.not_approvable(
                loading=self.conversation is None, thinking=self.thinking, running=self.running,
                withdrawn=self.withdrawn))
            self.bell()
            return
        if self.approver_asks:  # the name is only the machine's: asked once, then remembered for the registry
            self.action_set_approver(then=self.action_approve)
            return
        if self.shown_refinement is not None:
            self._approve_and_refine()
            return
        draft = self.shown_draft
        if draft.invocation_id in self.used:
            from snakegate.tui.dialogs import Confirm

            run, status = self.used[draft.invocation_id]
            self.push_screen(Confirm(present.repeat_question(draft, run, status), yes="Run it again",
                                     no="Keep it"),
                             callback=lambda yes: self._approve_and_run(draft) if yes else None)
            return
        self._approve_and_run(draft)

    # ---- who approves ---------------------------------------------------------------------------------------

    def action_set_approver(self, then=None) -> None:
        """ctrl+t (or the first ctrl+r when the name is only the machine's): ask who approves, prefilled with the
        current name; the answer is recorded from the next approval on and remembered for the registry. `then`
        (the approval that asked) goes on once a name is set; Esc sets nothing and approves nothing."""
        from snakegate.tui.dialogs import AskChange

        def answered(text: str | None) -> None:
            if text is None:
                if then is not None:
                    self.panel.set_state("blocked", present.APPROVER_UNSET)
                return
            if self._set_approver(text) and then is not None:
                then()

        self.push_screen(AskChange(present.approver_question(self.approved_by, first_run=then is not None),
                                   "your name, as recorded in provenance", value=self.approved_by), answered)

    def _set_approver(self, text: str) -> bool:
        from snakegate.registry.approver import clean_name, remember

        name = clean_name(text)
        if name is None:
            self.notify("The approver must be a name; nothing changed.", severity="warning", timeout=5)
            return False
        self.approved_by, self.approver_asks = name, False
        try:
            remember(self.settings.registry_root, name)
            kept = "remembered for this registry"
        except OSError as exc:  # still this conversation's approver; the next chat asks again
            kept = f"not remembered ({exc.strerror or exc}): the next chat asks again"
        self.transcript.add_note(f"◆ approver: {name} ({kept})")
        self._refresh_approve()
        return True

    def _approve_and_run(self, draft) -> None:
        """Mint the Approval (only here) for `draft`, if it is still the one on screen, and start the run."""
        if not self.can_approve() or self.shown_draft is not draft:
            self._refresh_approve()
            return
        from snakegate.errors import UserError

        try:
            approval = self.conversation.approve(self.approved_by)
        except UserError as exc:
            self.run_panel.refused(present_runs.refusal_lines(exc.message, []))
            return
        repeat = draft.invocation_id in self.used
        self.running, self.quit_armed, self.cancel_requested, self.run_draft = True, False, False, draft
        self._run_cancel = threading.Event()
        self._refresh_approve()
        self.run_panel.started(f"Run · {draft.workflow} {present.short_id(draft.invocation_id)}"
                               + (" (repeat)" if repeat else ""))
        self.transcript.add_note(f"▶ approved by {self.approved_by}: running {draft.workflow} "
                                 f"({present.short_id(draft.invocation_id)})" + (", a repeat" if repeat else ""))
        self._execute_run(approval, self._run_cancel)

    # ---- running ------------------------------------------------------------------------------------------

    @work(exclusive=True, group="run")
    async def _execute_run(self, approval, cancel: threading.Event) -> None:
        # In a daemon thread: Snakemake runs detached and records the run itself, so quitting the chat
        # never waits for it (the run goes on; `snakegate runs` shows it).
        from snakegate.errors import UserError
        from snakegate.run.runner import GateRejected
        from snakegate.tui import runinfo

        def on_progress(p: dict) -> None:
            self.post_message(RunProgressed(p["done"], p["total"], p["rule"]))

        def run():
            outcome = self.conversation.execute(approval, on_progress=on_progress, cancel=cancel)
            return outcome, runinfo.explain(self.registry, self.settings, outcome.run_dir)

        try:
            outcome, explained = await in_thread(run, name="snakegate-run")
        except GateRejected as rejected:
            problems = [f"{e.path} [{e.code}]: {e.message}" for e in rejected.result.errors]
            self.post_message(RunRefused(rejected.message, problems))
        except UserError as exc:
            self.post_message(RunRefused(exc.message))
        else:
            self.post_message(RunFinished(outcome, explained))

    def on_run_progressed(self, message: RunProgressed) -> None:
        if not self.chat_mounted():  # a run that goes on as the app closes: its record is on disk, no panel is left
            return
        if not self.cancel_requested:
            self.run_panel.progressed(message.done, message.total, message.rule)

    def on_run_finished(self, message: RunFinished) -> None:
        if not self.chat_mounted():
            return
        o, root = message.outcome, self.settings.registry_root
        explained = message.explained
        self.run_panel.finished(o.status, present_runs.outcome_lines(o.status, o.run_id, o.record, explained,
                                                                     o.run_dir, root))
        summary = present_runs.result_summary(o.status, o.run_id, o.record, explained, o.run_dir, root)
        self.transcript.add_result(summary, ok=o.status == "succeeded")
        if self.run_draft is not None:
            self.used[self.run_draft.invocation_id] = (o.run_id, o.status)
        self._run_ended()
        self.after_run()  # its summary enters the conversation (turns.py)

    def on_run_refused(self, message: RunRefused) -> None:
        if not self.chat_mounted():
            return
        lines = present_runs.refusal_lines(message.message, message.problems)
        self.run_panel.refused(lines)
        self.transcript.add_note("■ " + lines[0], ok=False)
        self._run_ended()

    def _run_ended(self) -> None:
        self.running, self.quit_armed, self.cancel_requested = False, False, False
        self._refresh_approve()

    # ---- cancelling ---------------------------------------------------------------------------------------

    def action_cancel_run(self) -> None:
        """ctrl+c during a run: the runner signals Snakemake, which stops its jobs; the run is recorded
        `cancelled`. A second ctrl+c while it stops does nothing more."""
        if not self.running or self.cancel_requested:
            return
        self.cancel_requested = True
        self._run_cancel.set()
        self.run_panel.cancelling()
        self.transcript.add_note("■ cancelling the run (ctrl+c)", ok=False)
