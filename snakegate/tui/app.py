"""The chat app: the conversation on the left, the draft and its run on the right, the history a key away.

Owns the app's shell: the layout, the key bindings, loading the registry and
the conversation after the first paint (so the window is up at once), the
history screen and quitting. The header names the model and its tool mode with
the reason, and a line above the input counts the seconds and the step while
the model is at it (status.py). The input keeps the focus: PageUp/PageDown scroll
the transcript from it, and the line above it (asking.py) keeps the guided
dialogue's open question, its default and the `back`/`done` words in view. The conversation turns live in turns.py and the
approvals and runs in runs.py and a bounded refinement's in refine_runs.py (mixins
of this class; they are the only places an approval is minted, on the
researcher's key or click).
Slow work runs in workers that never touch a widget; layout and colours live
in chat.tcss, wording in present.py / present_runs.py.
"""

from __future__ import annotations

import asyncio

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widgets import Footer, Header, Input

from snakegate.tui import present
from snakegate.tui.asking import AskingLine
from snakegate.tui.background import in_thread
from snakegate.tui.draft_panel import DraftPanel
from snakegate.tui.refine_runs import RefineMixin
from snakegate.tui.messages import ConnectFailed, Connected
from snakegate.tui.run_panel import RunPanel
from snakegate.tui.runs import RunsMixin
from snakegate.tui.status import TICK, WaitingLine, header_text, mode_note
from snakegate.tui.transcript import Transcript
from snakegate.tui.turns import PROMPT, TurnsMixin


class ChatApp(TurnsMixin, RunsMixin, RefineMixin, App[None]):
    """`snakegate chat`: talk on the left, review and approve the draft on the right."""

    CSS_PATH = "chat.tcss"
    TITLE = "snakegate chat"
    ENABLE_COMMAND_PALETTE = False  # every action has its key in the footer
    BINDINGS = [
        Binding("ctrl+r", "approve", "Approve and run", priority=True),
        Binding("ctrl+c", "cancel_run", "Cancel run", priority=True),
        Binding("escape", "cancel_turn", "Stop the model"),
        Binding("ctrl+o", "history", "History"),
        Binding("ctrl+t", "set_approver", "Approver", show=False),  # the panel's approver line names the key
        Binding("ctrl+n", "new_conversation", "New chat"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
        # the input keeps the focus, so the transcript scrolls from here (the input has no use for these keys)
        Binding("pageup", "scroll_transcript(-1)", "Scroll up", show=False, priority=True),
        Binding("pagedown", "scroll_transcript(1)", "Scroll down", show=False, priority=True),
    ]

    def __init__(self, connect, *, approved_by: str, approver_asks: bool = False, settings=None):
        """`connect()` builds the Conversation (loading the registry); it runs in the background after the
        first paint. A ready Conversation may be passed instead. `approver_asks`: `approved_by` is only the
        machine's name, so the first ctrl+r asks who approves (runs.py)."""
        super().__init__()
        self._connect_fn = connect if callable(connect) else (lambda: connect)
        self.conversation = None if callable(connect) else connect
        self.settings = settings if settings is not None else getattr(self.conversation, "settings", None)
        self.approved_by, self.approver_asks = approved_by, approver_asks
        self._connected = asyncio.Event()
        self._mode_noted: str | None = None  # the tool mode the transcript last said
        self._init_turns()
        self._init_runs()
        self._init_refine()

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="main"):
            with Vertical(id="chat"):
                yield Transcript(id="transcript")
                yield WaitingLine(id="waiting")
                yield AskingLine(id="asking")
                yield Input(placeholder=PROMPT, id="prompt")
            with Vertical(id="side"):
                yield DraftPanel(id="draft-panel")
                yield RunPanel(id="run-panel")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = present.LOADING
        self.query_one("#prompt", Input).focus()
        # after the first frame: loading the registry must not compete with painting it
        self.call_after_refresh(self._connect)
        # the header's tool mode can change with any request ("auto" decides on the server's answers) and the
        # waiting line counts seconds: both are read from the backend on a tick rather than pushed by it
        self.set_interval(TICK, self._show_status)

    @property
    def registry(self):
        return self.conversation.registry if self.conversation is not None else None

    @property
    def transcript(self) -> Transcript:
        return self.query_one("#transcript", Transcript)

    @property
    def panel(self) -> DraftPanel:
        return self.query_one("#draft-panel", DraftPanel)

    def chat_mounted(self) -> bool:
        """Are the chat's widgets there? Not while the app closes: a turn or a run that ends in between posts its
        message to an app whose widgets are gone, and a handler must then drop it, not fail the app's exit."""
        try:
            self.query_one("#draft-panel", DraftPanel)
        except NoMatches:
            return False
        return True

    @property
    def run_panel(self) -> RunPanel:
        return self.query_one("#run-panel", RunPanel)

    # ---- loading the conversation after the first paint -------------------------------------------------

    @work(exclusive=True, group="connect")
    async def _connect(self) -> None:
        if self.conversation is None:
            try:
                conversation = await in_thread(self._load_conversation, name="snakegate-connect")
            except Exception as exc:  # noqa: BLE001 - a UserError or worse: the app cannot start; say why
                self.post_message(ConnectFailed(getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"))
                return
        else:
            conversation = self.conversation
        self.post_message(Connected(conversation))

    def _load_conversation(self):
        """In the background: the conversation (registry, backend), and the Markdown widget the greeting needs."""
        from textual.widgets import Markdown  # noqa: F401 - imported here so the UI thread does not pay for it

        return self._connect_fn()

    def on_connected(self, message: Connected) -> None:
        if not self.chat_mounted():
            return
        self.conversation = message.conversation
        self.settings = self.settings or self.conversation.settings
        self.sub_title = header_text(self.conversation.backend)
        self._settle_mode()
        # opening() makes no model call: the greeting shows as soon as the registry is loaded
        self.transcript.show_events(self.conversation.opening())
        self._connected.set()
        self._refresh_approve()
        self.show_asking()

    @work(exclusive=True, group="mode")
    async def _settle_mode(self) -> None:
        """In "auto" mode, ask the server its tool mode now, so the header says it before the first message (a
        message sent meanwhile waits for this answer instead of asking again)."""
        settle = getattr(self.conversation.backend, "settle_mode", None)
        if not callable(settle):
            return
        try:
            await in_thread(settle, name="snakegate-mode")
        except Exception:  # noqa: BLE001 - the first request asks again and its failure notice says why
            pass
        self._show_status()

    def _show_status(self) -> None:
        try:  # queries from the app read the chat's own screen, also while the history is on top of it
            line, transcript = self.query_one("#waiting", WaitingLine), self.transcript
        except NoMatches:  # the app is ending and its widgets are gone; a tick can still fall in between
            return
        if self.conversation is not None:
            self.sub_title = header_text(self.conversation.backend)
            note = mode_note(self.conversation.backend)
            if note is not None and note != self._mode_noted:  # decided, or changed by the server's refusal
                self._mode_noted = note
                transcript.add_note(note)
        line.update_from(self)

    def on_connect_failed(self, message: ConnectFailed) -> None:
        self.exit(return_code=2, message=Text(f"snakegate chat: {message.message}"))

    async def conversation_ready(self):
        await self._connected.wait()
        return self.conversation

    # ---- keys -------------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_run":
            return self.running  # otherwise ctrl+c keeps its usual meaning (copy, or a hint how to quit)
        if action == "cancel_turn":
            return self.thinking and self.screen is self.screen_stack[0]
        if action in ("approve", "set_approver", "history", "new_conversation", "scroll_transcript"):
            return self.screen is self.screen_stack[0]  # the chat's own keys; other screens have theirs
        return True

    def action_scroll_transcript(self, direction: int) -> None:
        """PageUp / PageDown: a page of the transcript, whatever has the focus on the chat screen."""
        if self.screen is not self.screen_stack[0]:
            return
        if direction < 0:
            self.transcript.scroll_page_up(animate=False)
        else:
            self.transcript.scroll_page_down(animate=False)

    def action_history(self) -> None:
        from snakegate.tui.history import HistoryScreen

        if self.conversation is None:
            self.notify("The registry is still loading.", timeout=3)
            return
        self.push_screen(HistoryScreen(self.registry, self.settings))

    # ---- quitting -----------------------------------------------------------------------------------------

    async def action_quit(self) -> None:
        # Model turns and runs are followed from daemon threads: nothing holds the exit back.
        if not self.running:
            self.exit()
            return
        if not self.quit_armed:
            self.quit_armed = True
            self.notify("A run is going. It goes on after you quit and records itself (snakegate runs lists it). "
                        "Press ctrl+q again to quit, or ctrl+c to cancel the run.", severity="warning", timeout=8)
            return
        run = self._running_run_id() or "latest"
        self.exit(message=Text(f"snakegate chat: run {run} goes on in the background and records itself; "
                               f"`snakegate show-run {run}` follows it"))

    def _running_run_id(self) -> str | None:
        """The run this conversation started that is still going (its folder names it once Snakemake starts)."""
        from snakegate.provenance import runstore

        mine = [r for r in runstore.list_runs(self.settings.runs_dir) if r.get("status") == "running"
                and (r.get("origin") or {}).get("conversation_id") == self.conversation.conversation_id]
        return max(mine, key=lambda r: str(r.get("started") or ""))["run_id"] if mine else None
