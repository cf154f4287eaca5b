"""The line above the input that keeps the open question in view: what is asked, what an empty Enter keeps,
what the request already set, and the `back` / `done` / `show` words.

Presentation only: the app hands it the guided dialogue's `status()` (plain data) after each turn; a model
backend has none, and the line is hidden. Plain text, never console markup: values come from the researcher
and the registry.
"""

from __future__ import annotations

from textual.widgets import Static

HINTS = "back: previous question · done: defaults for the rest"


def asking_text(status: dict | None) -> str:
    """The line's text for a `status()` dict; "" when no question is open."""
    if not status:
        return ""
    where = status.get("workflow") or ""
    if status.get("step"):
        where = f"step {status['step']} ({where})"
    keeps = (f"empty Enter keeps `{status['default']}`" if status.get("default") is not None
             else "type a value")
    lines = [f"▸ `{status.get('question')}` ({where}): {keeps}"]
    taken = status.get("taken") or {}
    if taken:
        lines.append("from your request: " + ", ".join(f"{k} = {v}" for k, v in taken.items()))
    lines.append(HINTS)
    return "\n".join(lines)


class AskingLine(Static):
    """Docked above the input, below the transcript: it never scrolls away."""

    def __init__(self, **kw) -> None:
        super().__init__("", markup=False, **kw)

    def show(self, status: dict | None) -> None:
        text = asking_text(status)
        self.update(text)
        self.display = bool(text)
