"""What the chat app's workers and widgets tell the app: small dataclass messages, no behaviour.

Workers run the slow parts (loading the registry, a model turn, a Snakemake
run) in threads and never touch a widget: they post one of these, and the
app's handlers update the screen on the UI thread. `post_message` is
thread-safe. Turn messages carry the turn's number, so the events of a turn
the researcher abandoned (Esc) are dropped when they arrive late.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message


@dataclass
class Connected(Message):
    """The registry is loaded and the conversation is ready (`conversation` is a Conversation)."""

    conversation: Any


@dataclass
class ConnectFailed(Message):
    """The conversation cannot start (e.g. a model is set without a server URL): the message says why."""

    message: str


@dataclass
class TurnEvent(Message):
    """One event of a model turn, as it happens (assistant text, an action, a draft, a withdrawn draft)."""

    turn: int
    event: Any


@dataclass
class TurnFinished(Message):
    """`Conversation.send` returned its events (already shown one by one through TurnEvent)."""

    turn: int
    events: list[Any]


@dataclass
class SensitiveEntered(Message):
    """The researcher typed a sensitive param's value into the panel's masked field."""

    workflow: str
    param: str
    value: Any = field(repr=False)


@dataclass
class RunProgressed(Message):
    """Snakemake finished another step (from the runner's on_progress callback)."""

    done: int
    total: int | None
    rule: str | None


@dataclass
class RunFinished(Message):
    """Snakemake ended: `outcome` is the runner's RunOutcome; `explained` the agent's explain_run of it."""

    outcome: Any
    explained: dict = field(default_factory=dict)


@dataclass
class RunRefused(Message):
    """Nothing ran: the gate or the approval check refused at execute time (e.g. files changed since approval)."""

    message: str
    problems: list[str] = field(default_factory=list)


@dataclass
class RefinementStepped(Message):
    """The refinement loop started a point ("start": n, points, values, predecessor) or ended one ("end": a
    variant's row: n, run_id, values, status, verdict, check)."""

    kind: str
    facts: dict


@dataclass
class RefinementFinished(Message):
    """The refinement loop ended: `outcome` is snakegate.refine.loop.Outcome, `lines` its table as worded for
    every door (snakegate.refine.text.outcome_lines)."""

    outcome: Any
    lines: list[str]
