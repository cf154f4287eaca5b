"""The one interface every model speaks: `request(messages, tools) -> Reply`.

Messages and tools are in the OpenAI chat-completions wire format (plain
dicts), so the offline guided dialogue and any OpenAI-compatible server are
interchangeable behind the conversation controller. A backend never runs a
platform action itself; it only says which one it wants called. Backends
differ only in how they ask for the next step (native tool calls,
constrained JSON, or the guided dialogue's own rules). A backend that talks to a
server keeps `waiting` (a `Waiting`, or None) while a request is out, so a
screen can say from another thread how long the model has been at which step,
and may offer `abandon()`: the researcher stopped the turn, hang up on the
server now rather than wait for an answer nobody reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from snakegate.errors import ExitCode, UserError


@dataclass(frozen=True)
class ToolCall:
    """The model asks for one platform action with JSON arguments."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """One model turn: text for the researcher, and/or platform actions to call."""

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = field(default_factory=tuple)
    finish_reason: str | None = None      # "length": the server cut the reply at max_tokens
    model: str | None = None              # the model that answered, as the server names it
    usage: dict | None = None             # the server's token counts (prompt_tokens, completion_tokens)
    asks_secret: str | None = None        # a sensitive param the backend asks for (the UI shows a masked field)
    wire: dict | None = field(default=None, repr=False, compare=False)  # {"request", "response"} for the audit log


@dataclass(frozen=True)
class Waiting:
    """A request out to the model: the step of the turn it asks for (1 = the first after the researcher's
    message) and when it was sent (time.monotonic())."""

    step: int
    since: float


def step_of(messages: list[dict]) -> int:
    """Which step of the turn a request for `messages` is: one more than the model's replies since the
    researcher's last message (the controller records one assistant message per reply)."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    return 1 + sum(1 for m in messages[last_user + 1:] if m.get("role") == "assistant")


class BackendError(UserError):
    """The model could not be reached or answered nonsense; the message says what to do. `reached`: whether
    the server answered at all (True: it runs, so "is it running?" is no advice; False: nothing answered;
    None: not known)."""

    def __init__(self, message: str, reached: bool | None = None):
        super().__init__(message, ExitCode.INVALID)
        self.reached = reached


class Backend(Protocol):
    name: str   # "openai-compatible" or "guided"; recorded as proposed_by_backend
    model: str  # the model's name, or "guided-dialogue"; recorded in provenance

    def request(self, messages: list[dict], tools: list[dict]) -> Reply:
        """The next turn given the whole conversation so far. Raises BackendError when it cannot answer."""
        ...
