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

from snakegate.agent.actions.base import ForkOrigin, PlanOutline


@dataclass(frozen=True)
class Draft:
    """A run config (or a plan: `plan` set, `workflow` its title, no version or params) that passed the gate,
    written to drafts/, awaiting a human's approval."""

    workflow: str
    version: str
    invocation_id: str
    params: dict[str, Any]      # as the researcher gave them, defaults filled; sensitive values included
    config_path: Path           # the file plain `snakemake --configfile` (or `snakegate run`) also accepts
    config_text: str
    fork: ForkOrigin | None = None  # a fork_run draft: its parent run, and the rules running it re-executes
    answered_by: str | None = None  # the model name the server reported for the reply that proposed it
    plan: PlanOutline | None = None   # a plan's steps and the edges between them
    # what the researcher said that the draft does not hold, one sentence each (agent/faithful.py); a draft
    # with any is shown as "differs from your request", never as plain ready
    differences: tuple[str, ...] = ()

    @property
    def faithful(self) -> bool:
        return not self.differences


@dataclass(frozen=True)
class Approval:
    """Minted by the UI when the human approves one draft; `Conversation.execute` demands it."""

    invocation_id: str
    approved_by: str
    approved_at: str            # ISO 8601 with a zone, e.g. 2026-01-31T10:00:00Z
    token: str = field(repr=False)
    transcript_sha256: str | None = None  # the audit log up to and including this approval


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
    """A draft passed the gate. `faithful` False: it differs from what the researcher said (`differences`),
    and the doors say so above the approval instead of calling it ready."""

    draft: Draft

    @property
    def faithful(self) -> bool:
        return self.draft.faithful

    @property
    def differences(self) -> tuple[str, ...]:
        return self.draft.differences


@dataclass(frozen=True)
class DraftCleared:
    """The draft on screen is withdrawn (the researcher started over, or is filling another workflow):
    it can no longer be approved."""

    reason: str


@dataclass(frozen=True)
class SecretRequested:
    """A sensitive param is needed: the UI offers a masked field, whose value goes to
    `Conversation.set_sensitive`/`enter_sensitive` and never through the model. `param` is dotted for nested ones."""

    workflow: str
    param: str
    description: str


@dataclass(frozen=True)
class BackendFailed:
    """The model could not be reached or misbehaved; the turn was rolled back, so sending again is a clean retry.
    `reached`: the server answered (it is running: a door adds no "check that it runs"), did not (False), or
    not known (None)."""

    message: str
    reached: bool | None = None


Event = AssistantSaid | ActionCalled | DraftReady | DraftCleared | SecretRequested | BackendFailed
