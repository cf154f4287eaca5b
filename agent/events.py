"""What a conversation turn produces, for the UI to show: small immutable records, no behaviour.

The controller returns a list of these from `Conversation.send()`; the TUI
renders them; tests assert on them. A `Draft` is a config that passed the
gate and was written to disk; only an `Approval` minted by the UI (never the
model) lets it run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Draft:
    """A run config that passed the gate, written to drafts/, awaiting a human's approval."""

    workflow: str
    version: str
    invocation_id: str
    params: dict[str, Any]      # as the researcher gave them, defaults filled; sensitive values included
    config_path: Path           # the file plain `snakemake --configfile` (or `snakegate run`) also accepts
    config_text: str


@dataclass(frozen=True)
class Approval:
    """Minted by the UI when the human approves one draft; `Conversation.execute` demands it."""

    invocation_id: str
    approved_by: str
    approved_at: str            # ISO 8601 with a zone, e.g. 2026-01-31T10:00:00Z
    token: str = field(repr=False)


@dataclass(frozen=True)
class AssistantSaid:
    text: str


@dataclass(frozen=True)
class ActionCalled:
    """The model called a platform action; `summary` is one line for the researcher."""

    name: str
    arguments: dict[str, Any]   # sensitive values redacted
    ok: bool
    summary: str


@dataclass(frozen=True)
class DraftReady:
    draft: Draft


@dataclass(frozen=True)
class DraftCleared:
    """The draft on screen is withdrawn (the researcher started over, or is filling another workflow):
    it can no longer be approved."""

    reason: str


@dataclass(frozen=True)
class BackendFailed:
    """The model could not be reached or misbehaved; nothing was lost, the researcher may retry."""

    message: str


Event = AssistantSaid | ActionCalled | DraftReady | DraftCleared | BackendFailed
