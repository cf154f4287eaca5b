"""The one interface every model speaks: `request(messages, tools) -> Reply`.

Messages and tools are in the OpenAI chat-completions wire format (plain
dicts), so the offline guided dialogue and any OpenAI-compatible server are
interchangeable behind the conversation controller. A backend never runs a
platform action itself; it only says which one it wants called. Backends
differ only in how they ask for the next step (native tool calls,
constrained JSON, or the guided dialogue's own rules).
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
