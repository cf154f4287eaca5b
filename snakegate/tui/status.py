"""What the chat says about the model it talks to: the header (which model, which tool mode and why) and the
line above the input while a request is out (how long, which step of how many, how to stop it).

The wording is pure (`header_text`, `waiting_text`); `WaitingLine` only shows it. Both read the backend's
plain attributes (`mode`, `mode_why`, `waiting`), which the turn's thread sets: reading them from the UI
thread is safe, and a value one tick old is shown one tick late, never wrong. Nothing here calls the
server, and the guided dialogue (which never waits) shows no tool mode and no waiting line.
"""

from __future__ import annotations

import time
from typing import Any

from textual.widgets import Static

from snakegate.tui import present

TICK = 0.5  # seconds between updates of the header and the waiting line


def header_text(backend: Any) -> str:
    """The header's subtitle: the tool mode and why, then the model and where it runs ("json — the server says
    it cannot call tools (/props) · smollm2 @ http://127.0.0.1:8088/v1"); the mode first, as the part an 80-column
    header keeps. Before "auto" has asked the server, that it is asking."""
    label = present.backend_label(backend)
    if getattr(backend, "name", None) != "openai-compatible":
        return label
    return f"{mode_text(backend)} · {label}"


def mode_text(backend: Any) -> str:
    """"json — the server says it cannot call tools (/props)", or "auto — asking the server" before it is known."""
    mode, why = getattr(backend, "mode", None), getattr(backend, "mode_why", None)
    if mode is None:
        return f"auto — {why or 'asking the server'}"
    return f"{mode} — {why}" if why else str(mode)


def mode_note(backend: Any) -> str | None:
    """The transcript's line when the tool mode is decided or changes (the header is cut at 80 columns; this
    line is not). None for the guided dialogue and while "auto" has no answer."""
    if getattr(backend, "name", None) != "openai-compatible" or getattr(backend, "mode", None) is None:
        return None
    return f"◆ tool mode {mode_text(backend)}"


def waited(seconds: float) -> str:
    """12 s under a minute, then 1:05: whole seconds, as a clock shows them."""
    whole = max(0, int(seconds))
    return f"{whole} s" if whole < 60 else f"{whole // 60}:{whole % 60:02d}"


def waiting_text(seconds: float, step: int, max_steps: int | None) -> str:
    """The line above the input while the model is at it (one line in the chat's column at 80x24)."""
    of = f" of {max_steps}" if max_steps else ""
    return f"⧗ waiting {waited(seconds)} · step {step}{of} · Esc stops it"


class WaitingLine(Static):
    """Shown while a model turn waits for the server; hidden otherwise. `update_from(app)` is called every TICK."""

    def update_from(self, app: Any) -> None:
        conversation = getattr(app, "conversation", None)
        backend = getattr(conversation, "backend", None)
        waiting = getattr(backend, "waiting", None)
        if not getattr(app, "thinking", False) or waiting is None:
            self.display = False
            return
        self.update(waiting_text(time.monotonic() - waiting.since, waiting.step,
                                 getattr(conversation, "max_steps", None)))
        self.display = True
