"""The chat app: wires the transcript, the input and the draft panel to one `Conversation`.

Owns the app's state (is a model turn or a run going on?) and the one place
an `Approval` is minted: `action_approve`, on the researcher's click or key.
Slow work runs in thread workers (`_send_turn`, `_execute_run`) that never
touch a widget: they post the small messages of `snakegate.tui.messages`, and
the handlers here update the screen on the UI thread. Layout and colours live
in chat.tcss; wording in present.py.
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Footer, Header, Input

from snakegate.agent.events import DraftReady
from snakegate.errors import UserError
from snakegate.runner import GateRejected
from snakegate.tui import present
from snakegate.tui.draft_panel import DraftPanel
from snakegate.tui.messages import RunFinished, RunProgressed, RunRefused, TurnFinished
from snakegate.tui.transcript import Transcript

PROMPT = "Describe what you want to run (Enter sends)"
BUSY = "waiting for the model…"


class ChatApp(App[None]):
    """`snakegate chat`: talk on the left, review and approve the draft on the right."""

    CSS_PATH = "chat.tcss"
    TITLE = "snakegate chat"
    BINDINGS = [
        Binding("ctrl+r", "approve", "Approve and run", priority=True),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(self, conversation, *, approved_by: str):
        super().__init__()
        self.conversation = conversation
        self.approved_by = approved_by
        self.registry = conversation.registry
        self.settings = conversation.settings
        self.thinking = False      # a model turn is running
        self.running = False       # a Snakemake run is going
        self.quit_armed = False    # ctrl+q pressed once during a run
        self.shown_draft = None    # the draft on the panel: the only one the researcher can approve

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="main"):
            with Vertical(id="chat"):
                yield Transcript(id="transcript")
                yield Input(placeholder=PROMPT, id="prompt")
            yield DraftPanel(id="draft-panel")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = present.backend_label(self.conversation.backend)
        # opening() makes no model call: the greeting is on the first screen without a wait
        self.transcript.show_events(self.conversation.opening())
        self.query_one("#prompt", Input).focus()

    @property
    def transcript(self) -> Transcript:
        return self.query_one("#transcript", Transcript)

    @property
    def panel(self) -> DraftPanel:
        return self.query_one("#draft-panel", DraftPanel)

    # ---- a conversation turn ----------------------------------------------------------------------------

    @on(Input.Submitted, "#prompt")
    def send(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text or self.thinking:
            return
        event.input.clear()
        self.transcript.add_researcher(text)
        self._set_thinking(True)
        self._send_turn(text)

    @work(thread=True, exclusive=True, group="turn")
    def _send_turn(self, text: str) -> None:
        # send() never raises for backend trouble: that comes back as a BackendFailed event
        self.post_message(TurnFinished(self.conversation.send(text)))

    def on_turn_finished(self, message: TurnFinished) -> None:
        self.transcript.show_events(message.events)
        drafts = [e.draft for e in message.events if isinstance(e, DraftReady)]
        if drafts:  # the newest replaces whatever was on screen; only it can be approved now
            draft = self.shown_draft = drafts[-1]
            schema = self._schema(draft.workflow)
            self.panel.show_draft(draft, schema, self.settings.registry_root)
            self.transcript.mask(present.secrets_in(schema, draft.params))
        self._set_thinking(False)

    def _set_thinking(self, busy: bool) -> None:
        self.thinking = busy
        self._refresh_approve()
        prompt = self.query_one("#prompt", Input)
        prompt.disabled = busy
        prompt.placeholder = BUSY if busy else PROMPT
        if not busy:
            # after the refresh: a widget that was disabled a moment ago cannot take the focus yet
            self.call_after_refresh(prompt.focus)

    def _schema(self, workflow_id: str) -> dict | None:
        wf = self.registry.get(workflow_id)
        return wf.schema if wf is not None else None

    # ---- approving and running --------------------------------------------------------------------------

    def can_approve(self) -> bool:
        # Approve only what is on screen: during a model turn the controller may already hold a newer
        # draft the researcher has not seen yet, so approving waits until the turn is shown.
        draft = self.conversation.draft
        return (draft is not None and not self.running and not self.thinking
                and self.shown_draft is not None and draft.invocation_id == self.shown_draft.invocation_id)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "approve":
            return True if self.can_approve() else None  # None: shown dimmed in the footer
        return True

    def _refresh_approve(self) -> None:
        self.panel.set_approvable(self.can_approve())
        self.refresh_bindings()

    @on(Button.Pressed, "#approve")
    def approve_pressed(self) -> None:
        self.action_approve()

    def action_approve(self) -> None:
        """The researcher approved the draft on screen: mint the Approval (only here) and start the run."""
        if not self.can_approve():
            return
        draft = self.conversation.draft
        try:
            approval = self.conversation.approve(self.approved_by)
        except UserError as exc:
            self.panel.run_refused(present.refusal_lines(exc.message, []))
            return
        self.running, self.quit_armed = True, False
        self._refresh_approve()
        self.panel.run_started(draft)
        self.transcript.add_note(f"▶ approved by {self.approved_by}: running {draft.workflow} "
                                 f"({present.short_id(draft.invocation_id)})")
        self._execute_run(approval)

    @work(thread=True, exclusive=True, group="run")
    def _execute_run(self, approval) -> None:
        def on_progress(p: dict) -> None:
            self.post_message(RunProgressed(p["done"], p["total"], p["rule"]))

        try:
            outcome = self.conversation.execute(approval, on_progress=on_progress)
        except GateRejected as rejected:
            problems = [f"{e.path} [{e.code}]: {e.message}" for e in rejected.result.errors]
            self.post_message(RunRefused(rejected.message, problems))
        except UserError as exc:
            self.post_message(RunRefused(exc.message))
        else:
            self.post_message(RunFinished(outcome))

    def on_run_progressed(self, message: RunProgressed) -> None:
        self.panel.run_progressed(message.done, message.total, message.rule)

    def on_run_finished(self, message: RunFinished) -> None:
        status, lines = present.outcome_lines(message.outcome, self.settings.registry_root)
        self.panel.run_finished(status, lines)
        self.transcript.add_note(f"■ run {message.outcome.run_id} {status}", ok=status == "succeeded")
        self._run_ended()

    def on_run_refused(self, message: RunRefused) -> None:
        lines = present.refusal_lines(message.message, message.problems)
        self.panel.run_refused(lines)
        self.transcript.add_note("■ " + lines[0], ok=False)
        self._run_ended()

    def _run_ended(self) -> None:
        self.running, self.quit_armed = False, False
        self._refresh_approve()

    # ---- quitting -----------------------------------------------------------------------------------------

    async def action_quit(self) -> None:
        if not self.running:
            self.exit()
            return
        if not self.quit_armed:
            self.quit_armed = True
            self.notify("A run is in progress. Press ctrl+q again to quit; snakegate then waits for the run to "
                        "finish and be recorded before it returns to the shell.", severity="warning", timeout=8)
            return
        # The run's thread goes on reading Snakemake: Python waits for it before the process ends, and the
        # runner then finishes run.json and the provenance record as usual. Say so once the screen is back.
        self.exit(message=Text(f"snakegate chat: a run is still going; waiting for Snakemake to finish and "
                               f"record it under {self.settings.runs_dir}"))
