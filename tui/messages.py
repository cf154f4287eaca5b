"""What the chat app's workers tell the app: small dataclass messages, no behaviour.

Workers run the slow parts (a model turn, a Snakemake run) in threads and
never touch a widget; they post one of these to the app, whose handlers
(on the UI thread) update the screen. `post_message` is thread-safe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message


@dataclass
class TurnFinished(Message):
    """`Conversation.send` returned: show its events (assistant text, action notes, a draft, a failure)."""

    events: list[Any]


@dataclass
class RunProgressed(Message):
    """Snakemake finished another step (from the runner's on_progress callback)."""

    done: int
    total: int | None
    rule: str | None


@dataclass
class RunFinished(Message):
    """Snakemake ended: succeeded, failed or cancelled; `outcome` is the runner's RunOutcome."""

    outcome: Any


@dataclass
class RunRefused(Message):
    """Nothing ran: the gate or the approval check refused at execute time (e.g. files changed since approval)."""

    message: str
    problems: list[str] = field(default_factory=list)
