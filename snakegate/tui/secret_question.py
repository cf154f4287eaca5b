"""The question the chat asks before sending a message that holds something secret-shaped.

`SecretQuestion` names what looked secret (what it looks like and a few characters,
never the value) and where the message would go, and dismisses with the answer:
`REDACT` (send it with those values as "<redacted>", which marks them secret for
the rest of the conversation), `AS_TYPED` (they are no secrets) or None (Esc: edit
the message; nothing is sent). The turn code decides what the answer does.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

REDACT = "redact"
AS_TYPED = "as-typed"


class SecretQuestion(ModalScreen[str | None]):
    """Send redacted / send as typed / edit (Esc), the safe answer focused."""

    BINDINGS = [Binding("escape", "edit", "Edit the message")]

    def __init__(self, suspects, where: str):
        super().__init__(classes="dialog")
        self.suspects, self.where = suspects, where

    def compose(self) -> ComposeResult:
        found = "\n".join(f"  • {s.kind} {s.hint}" for s in self.suspects)
        question = (f"This message holds what looks like a secret:\n{found}\nSent as typed, it goes to "
                    f"{self.where} with every later message, and into the conversation's audit log.")
        with Vertical(classes="dialog-box"):
            yield Static(question, classes="dialog-question", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Send it as <redacted>", id=REDACT, variant="success", compact=True)
                yield Button("Edit (Esc)", id="edit", compact=True)
                yield Button("Not a secret: send as typed", id=AS_TYPED, variant="warning", compact=True)

    def on_mount(self) -> None:
        self.query_one(f"#{REDACT}", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id if event.button.id in (REDACT, AS_TYPED) else None)

    def action_edit(self) -> None:
        self.dismiss(None)
