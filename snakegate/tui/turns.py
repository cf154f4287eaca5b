"""Conversation turns in the chat app: send a message, show each event as it happens, stop a turn with Esc.

`TurnsMixin` is part of `ChatApp` (app.py). A turn runs `Conversation.send`
in a daemon thread (background.py): the screen never waits for the model,
Esc abandons the turn at once (the conversation rolls it back, and a model
server is hung up on, so it stops generating for nobody), and ctrl+q
quits at once. A message the model could not answer, or one the researcher
stopped, goes back into the input. An empty Enter while the guided dialogue asks a question with a
usable default sends `default` (the line above the input says so); otherwise it sends nothing. Drafts that arrive are shown on the panel;
a withdrawn draft (the researcher started over or moved to another workflow)
leaves the panel at once, so it can never be approved while a new one is
being filled. Sensitive params are typed in the panel's masked fields and
handed to the conversation out of band; the chat only ever carries
"<redacted>". A message holding something secret-shaped is held back: a value
typed for a sensitive param moves into its masked field (the rest of the message
stays in the input), anything else is asked about (secret_question.py) before
it is sent, redacted or as typed.
When a run ends its summary enters the conversation (agent/reporting.py): the guided dialogue answers it
at once in a turn of its own (the summary read back, a recovery proposed after a failure); a model reads
it with the researcher's next message, so a finished run costs no request. A fork asked for from the
history while that turn goes waits for it instead of being refused.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from textual import work
from textual.widgets import Input

from snakegate.tui import present
from snakegate.tui.background import in_thread
from snakegate.tui.messages import SensitiveEntered, TurnEvent, TurnFinished
from snakegate.tui.secret_question import AS_TYPED, REDACT, SecretQuestion

PROMPT = "Type here; Enter sends"
BUSY = "waiting for the model… (Esc stops it)"


class TurnsMixin:
    """The turn half of ChatApp: needs `conversation`, `transcript`, `panel` and `_refresh_approve()`."""

    def _init_turns(self) -> None:
        self.thinking = False       # a model turn is running
        self.turn = 0               # number of the current turn; late events of older turns are dropped
        self._turn_cancel = threading.Event()
        self._turn_text: str | None = None  # what the researcher typed, put back if the turn fails or is stopped
        self._reporting = False     # the turn going is a finished run's summary being answered
        self._after_turn: list[Callable[[], None]] = []  # what waits for that turn (another summary, a fork)

    @property
    def prompt(self) -> Input:
        return self.query_one("#prompt", Input)

    # ---- sending ------------------------------------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "prompt":
            return
        text = event.value.strip()
        if self.thinking:
            return
        if not text:
            default = (self._asking() or {}).get("default")
            if default is not None:  # an empty Enter keeps the default the line above the input shows
                self.start_turn("default", shown=f"(empty Enter: keep the default `{default}`)", restorable=False)
            return
        event.input.clear()
        self.start_turn(text, shown=text, restorable=True)

    def _asking(self) -> dict | None:
        """The open question of the guided dialogue (its `status()`); None for a model or when none is open."""
        status = getattr(getattr(self.conversation, "backend", None), "status", None)
        return status() if callable(status) else None

    def show_asking(self) -> None:
        from snakegate.tui.asking import AskingLine

        self.query_one("#asking", AskingLine).show(None if self.thinking else self._asking())

    def start_turn(self, text: str, *, shown: str, restorable: bool) -> None:
        """Send `text` (shown in the transcript as `shown`); `restorable`: put it back in the input if the
        turn fails or is stopped."""
        if restorable and self._held_back(text):
            return
        self._begin(shown, text if restorable else None,
                    lambda conversation, **kw: conversation.send(text, **kw))

    def _begin(self, shown: str | None, restore: str | None, call: Callable) -> None:
        """Start a turn; `shown` is the researcher's line in the transcript (None: a turn nobody typed)."""
        self.turn += 1
        self._turn_cancel = threading.Event()
        self._turn_text = restore
        self._reporting = shown is None
        if shown is not None:
            self.transcript.add_researcher(shown)
        self._set_thinking(True)
        self._run_turn(self.turn, call, self._turn_cancel)

    @work(exclusive=True, group="turn")
    async def _run_turn(self, turn: int, call: Callable, cancel: threading.Event) -> None:
        conversation = await self.conversation_ready()

        def on_event(event) -> None:  # in the turn's thread: only post
            self.post_message(TurnEvent(turn, event))

        try:
            events = await in_thread(call, conversation, on_event=on_event, cancel=cancel, name="snakegate-turn")
        except Exception as exc:  # noqa: BLE001 - a refusal (UserError) or a bug: say so, keep the app
            from snakegate.agent.events import BackendFailed

            events = [BackendFailed(getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}")]
            self.post_message(TurnEvent(turn, events[0]))
        self.post_message(TurnFinished(turn, events))

    def _current(self, turn: int) -> bool:
        return turn == self.turn and not self._turn_cancel.is_set()

    def on_turn_event(self, message: TurnEvent) -> None:
        if not self._current(message.turn) or not self.chat_mounted():
            return
        from snakegate.agent.events import DraftCleared, DraftReady, SecretRequested
        from snakegate.agent.refining import RefinementReady

        event = message.event
        self.transcript.show_events([event])
        if isinstance(event, DraftReady):
            self.draft_proposed(event.draft)
        elif isinstance(event, DraftCleared):
            self.draft_withdrawn(event.reason)
        elif isinstance(event, SecretRequested):
            self.panel.ask_secret(event.workflow, event.param)
        elif isinstance(event, RefinementReady):
            self.refinement_proposed(event.refinement)

    def on_turn_finished(self, message: TurnFinished) -> None:
        if not self._current(message.turn) or not self.chat_mounted():  # (a turn ending as the app closes)
            return
        from snakegate.agent.events import BackendFailed

        if any(isinstance(e, BackendFailed) for e in message.events):
            self._give_back_text()
        self._set_thinking(False)
        self.show_asking()
        self._next_waiting()

    # ---- a run ended ------------------------------------------------------------------------------------------

    def after_run(self) -> None:
        """A run this conversation approved ended: its summary enters the conversation. The guided dialogue
        answers it now; a model reads it with the next message (no request is spent on it alone)."""
        conversation = self.conversation
        if conversation is None or not conversation.unreported:
            return
        if not getattr(conversation.backend, "local", False):
            conversation.record_runs()  # while a turn goes, the next message carries it
            self.transcript.add_note("◆ the run's summary is in the conversation: the model reads it with your "
                                     "next message")
            return
        if self.thinking:
            self._after_turn.append(self.after_run)
            return
        self._begin(None, None, lambda conversation, **kw: conversation.report_runs(**kw))

    def _next_waiting(self) -> None:
        if self._after_turn and not self.thinking:
            self._after_turn.pop(0)()

    # ---- stopping and starting over -------------------------------------------------------------------------

    def action_cancel_turn(self) -> None:
        """Esc: stop waiting for the model. The conversation forgets the turn; the message goes back in the
        input so it can be edited and sent again."""
        if not self.thinking:
            return
        self._turn_cancel.set()
        abandon = getattr(getattr(self.conversation, "backend", None), "abandon", None)
        if callable(abandon):  # hang up on the server: it stops generating, the next request is not queued
            abandon()
        self.workers.cancel_group(self, "turn")
        what = "the request to the model is abandoned" if callable(abandon) else "this turn is abandoned"
        self.transcript.add_note(f"■ stopped: {what} and nothing of it is kept", ok=False)
        self._give_back_text()
        self._set_thinking(False)

    def action_new_conversation(self) -> None:
        """ctrl+n: start over (as typing `restart` does): the history, the draft and typed secrets are dropped."""
        if self.thinking:
            self.action_cancel_turn()
        if self.conversation is not None:
            self.start_turn("restart", shown="restart", restorable=False)

    def fork_run(self, run_id: str, change: str) -> None:
        """From the history: ask for a fork of `run_id` with `change` (name=value), as the researcher would
        type it. The fork becomes a draft on the panel, approved like any other; nothing runs from here."""
        while len(self.screen_stack) > 1:
            self.pop_screen()
        if self.thinking and self._reporting:  # the run's summary is being answered: the fork comes next
            self._after_turn.append(lambda: self.fork_run(run_id, change))
            return
        if self.thinking:
            self.notify("Wait for the model's answer, then fork again.", timeout=4)
            return
        self.start_turn(f"fork {run_id} {change}", shown=f"fork {run_id} {change}", restorable=True)

    def _give_back_text(self) -> None:
        if self._turn_text and not self.prompt.value:
            self.prompt.value = self._turn_text
            self.prompt.cursor_position = len(self._turn_text)
        self._turn_text = None

    def _set_thinking(self, busy: bool) -> None:
        self.thinking = busy
        self._refresh_approve()
        self.prompt.placeholder = BUSY if busy else PROMPT
        self.refresh_bindings()
        if not busy:
            self.prompt.focus()

    # ---- sensitive params -------------------------------------------------------------------------------------

    def on_sensitive_entered(self, message: SensitiveEntered) -> None:
        """A value typed in the panel's masked field goes to the conversation out of band; the model (or the
        guided dialogue) only learns that it was entered, and refers to it as "<redacted>"."""
        message.stop()
        if self.conversation is None or self.thinking:
            self.notify("Wait for the answer, then press Enter in the field again.", timeout=4)
            return
        workflow, param, value = message.workflow, message.param, message.value
        self.panel.secret_set(param)
        self._begin(f"({param} entered in the masked field: {present.MASK})", None,
                    lambda conversation, **kw: conversation.enter_sensitive(workflow, param, value, **kw))

    def _held_back(self, text: str) -> bool:
        """Keep a message with something secret-shaped from the model (True when held back). A value typed
        for a sensitive param of the workflow being filled goes into its masked field and the message back
        into the input with "<redacted>" in its place; anything else is asked about first. Before the
        conversation is ready, send() itself refuses such a message and it comes back to the input."""
        from snakegate.agent.redact import PLACEHOLDER

        conversation = self.conversation
        suspects = conversation.suspected_secrets(text) if conversation is not None else []
        if not suspects:
            return False
        owners = {p["param"]: p["workflow"] for p in conversation.sensitive_params()}
        moved = [s for s in suspects if s.param in owners]
        if moved:
            rest = text
            for s in moved:
                self.panel.put_secret(owners[s.param], s.param, s.value)
                rest = rest.replace(s.value, PLACEHOLDER)
            self.prompt.value = rest
            names = ", ".join(f"`{s.param}`" for s in moved)
            self.notify(f"What you typed for {names} is in the masked field on the right: press Enter there to "
                        "enter it. Nothing was sent.", timeout=8)
            return True
        self.push_screen(SecretQuestion(suspects, _where(conversation.backend)),
                         lambda answer: self._answered(text, suspects, answer))
        return True

    def _answered(self, text: str, suspects, answer: str | None) -> None:
        values = [s.value for s in suspects]
        if answer == REDACT:
            self.conversation.mark_secret(values)  # from now on "<redacted>" to the model and in the audit log
            shown = text
            for value in values:
                shown = shown.replace(value, present.MASK)
            self._begin(shown, text, lambda conversation, **kw: conversation.send(text, **kw))
        elif answer == AS_TYPED:
            self.conversation.mark_not_secret(values)
            self._begin(text, text, lambda conversation, **kw: conversation.send(text, **kw))
        else:
            self.prompt.value = text  # edit it: nothing was sent
            self.prompt.cursor_position = len(text)
            self.prompt.focus()

    def schema_of(self, workflow_id: str | None) -> dict | None:
        wf = self.registry.get(workflow_id) if self.registry is not None and workflow_id else None
        return wf.schema if wf is not None else None


def _where(backend) -> str:
    """Where a message goes, for the secret question."""
    if getattr(backend, "local", False):
        return "the guided dialogue (it stays on this machine)"
    return f"the model {present.backend_label(backend)}"
