"""The conversation as the researcher sees it: a scrolling column of messages, notes and error notices.

Owns only presentation: it is told what to show (by the app, on the UI
thread) and never calls the model or the controller. Assistant text is
Markdown; everything else is plain text (no console markup is interpreted,
so a model cannot restyle or hide part of the screen).
"""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widgets import Static

from snakegate.tui import present


class Transcript(VerticalScroll):
    """Left column: assistant (Markdown), researcher, one-line action notes, error notices."""

    can_focus = False  # the Input keeps the focus; the mouse wheel still scrolls

    def add_assistant(self, text: str) -> None:
        from textual.widgets import Markdown  # its parser loads after the first paint: nothing before needs it

        self._add(Markdown(present.keep_line_breaks(text), classes="assistant"))

    def add_researcher(self, text: str) -> None:
        self._add(Researcher(text))

    def add_note(self, text: str, *, ok: bool = True) -> None:
        self._add(Static(text, classes="note" if ok else "note failed", markup=False))

    def add_error(self, text: str) -> None:
        self._add(Static(text, classes="error", markup=False))

    def add_result(self, markdown: str, *, ok: bool) -> None:
        """A finished run's summary: outcome, key numbers, plots, where to look next."""
        from textual.widgets import Markdown

        self._add(Markdown(present.keep_line_breaks(markdown), classes="result" if ok else "result failed"))

    def mask(self, secrets: list[str]) -> None:
        """Hide sensitive values the researcher typed (e.g. a token answering a question) once a draft shows
        which of their words were sensitive."""
        for said in self.query(Researcher):
            said.mask(secrets)

    def show_events(self, events) -> None:
        """One conversation turn's events in order. A DraftReady is announced here; the panel shows it."""
        # imported here: the agent's modules load with the registry, after the first paint
        from snakegate.agent.events import ActionCalled, AssistantSaid, BackendFailed, DraftCleared, DraftReady
        from snakegate.agent.refining import RefinementReady

        for event in events:
            if isinstance(event, AssistantSaid):
                self.add_assistant(event.text)
            elif isinstance(event, ActionCalled):
                self.add_note(present.action_note(event), ok=event.ok)
            elif isinstance(event, BackendFailed):
                self.add_error(present.backend_failed_text(event.message, event.reached))
            elif isinstance(event, DraftReady):
                note, ok = present.draft_note(event.draft)
                self.add_note(note, ok=ok)
            elif isinstance(event, DraftCleared):
                self.add_note(f"→ draft withdrawn: {event.reason}", ok=False)
            elif isinstance(event, RefinementReady):
                p = event.refinement.proposal
                self.add_note(f"→ refinement ready: {len(p.points)} point(s) around run {p.parent.name}; review "
                              "the whole space on the right, then approve it once")

    def _add(self, widget) -> None:
        self.mount(widget)
        # follow the conversation; after the refresh, so the new widget's height is known
        self.call_after_refresh(self.scroll_end, animate=False)


class Researcher(Static):
    """What the researcher wrote, kept so sensitive parts can be masked after the fact."""

    def __init__(self, text: str):
        super().__init__(text, classes="researcher", markup=False)
        self.said = text

    def mask(self, secrets: list[str]) -> None:
        shown = self.said
        for secret in secrets:  # longest first (secret_strings' order), so a secret inside another still goes
            shown = shown.replace(secret, present.MASK)
        if shown != self.said:
            self.said = shown
            self.update(shown)
