"""Small modal questions: confirm a repeat run, ask for a fork's one change.

Each dismisses with its answer (a bool, or the typed text / None) and does
nothing else: the screen that asked decides what the answer means.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static


class Confirm(ModalScreen[bool]):
    """A yes/no question; Esc answers no."""

    BINDINGS = [Binding("escape", "no", "Cancel")]

    def __init__(self, question: str, *, yes: str = "Yes", no: str = "No"):
        super().__init__(classes="dialog")
        self.question, self.yes_label, self.no_label = question, yes, no

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box"):
            yield Static(self.question, classes="dialog-question", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button(self.yes_label, id="yes", variant="warning", compact=True)
                yield Button(self.no_label, id="no", compact=True)

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()  # the safe answer is the default

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_no(self) -> None:
        self.dismiss(False)


class AskChange(ModalScreen[str | None]):
    """One line of text (e.g. a fork's `name=value`); Enter answers, Esc cancels with None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, question: str, placeholder: str, value: str = ""):
        super().__init__(classes="dialog")
        self.question, self.placeholder, self.value = question, placeholder, value

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box"):
            yield Static(self.question, classes="dialog-question", markup=False)
            yield Input(value=self.value, placeholder=self.placeholder, id="answer")
            yield Static("", id="answer-problem", markup=False)

    def on_mount(self) -> None:
        self.query_one("#answer", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip():
            self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)
