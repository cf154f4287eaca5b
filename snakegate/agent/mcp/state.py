"""What one `snakegate mcp` server run holds, and how its answers are shaped for MCP.

Owns `McpState`: the registry and settings, the action context (the known
sensitive values to scrub), the drafts validated during this server run (by
invocation id: the only ones `execute` accepts), the refinements gated
(by their approval's sha256: the only ones `execute_refinement` accepts), the one-time nonces of the
confirmation questions still open (each answer counts once), the person
recorded as the approver unless they type another name, and the audit log.
Also the shaping every handler shares: a result dict -> `CallToolResult` (JSON text plus
structured content, `isError` for refusals), paths hidden as the chat hides
them, known secrets scrubbed. Reads and writes nothing itself.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from secrets import token_hex
from typing import Any

from mcp_types import CallToolResult, TextContent

from snakegate.agent.actions.base import ActionContext
from snakegate.agent.actions.platform import conversation_secrets
from snakegate.agent.events import Draft
from snakegate.agent.actions.limits import PathView
from snakegate.agent.mcp.audit import McpAudit
from snakegate.agent.prompt import relative
from snakegate.agent.redact import scrub
from snakegate.registry.workflows import Registry
from snakegate.registry.settings import Settings

UNKNOWN_CLIENT = "unknown MCP client"
OPEN_CONFIRMATIONS = 256  # questions awaiting an answer; beyond this the oldest is forgotten (asked again)


@dataclass
class DraftEntry:
    """A draft validate_params (or fork_run) wrote during this server run, and the runs it started."""

    draft: Draft
    runs: list[str] = field(default_factory=list)


@dataclass
class RefinementEntry:
    """A refinement propose_refinement gated during this server run (by its approval's sha256), and how it ran."""

    proposal: Any                     # snakegate.refine.space.Proposal
    lines: list[str]                  # the whole space as the person is shown it
    ran: str | None = None            # the refinement record's id once a confirmation started its loop


@dataclass
class McpState:
    registry: Registry
    settings: Settings
    approver: str                     # the default "who confirmed" shown in the confirmation form
    server_run_id: str
    audit: McpAudit
    cores: int = 1                    # Snakemake --cores for runs started here: the person's setting, not the model's
    ctx: ActionContext = None         # type: ignore[assignment]  (made in __post_init__)
    drafts: dict[str, DraftEntry] = field(default_factory=dict)
    refinements: dict[str, RefinementEntry] = field(default_factory=dict)  # approval sha256 -> the gated space
    confirmations: dict[str, str] = field(default_factory=dict)  # open question's nonce -> its invocation id
    # the person's words, as the client passed them to the prompt: what each draft is checked against
    requests: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self):
        if self.ctx is None:
            self.ctx = ActionContext(self.registry, self.settings,
                                     author={"model": "an MCP client", "backend": "mcp",
                                             "conversation": self.server_run_id})
        self.view = PathView(self.settings.registry_root, self.settings.data_roots)

    @property
    def root(self) -> Path:
        return self.settings.registry_root

    def secrets(self) -> list[str]:
        return conversation_secrets(self.ctx)

    def learn_secrets(self, values: list[str]) -> None:
        """From now on these values are scrubbed from every answer and from the audit log (older lines too)."""
        self.ctx.known_secrets.update(values)
        self.audit.learn(self.secrets())

    def shown(self, value: Any) -> Any:
        """What an MCP client may see of `value`: known secrets scrubbed, paths outside the data roots hidden."""
        return self.view.hide(scrub(value, self.secrets()))

    def mint_confirmation(self, invocation_id: str) -> str:
        """A fresh nonce for one confirmation question about `invocation_id`; its answer counts once."""
        nonce = token_hex(16)
        with self.lock:
            self.confirmations[nonce] = invocation_id
            while len(self.confirmations) > OPEN_CONFIRMATIONS:
                del self.confirmations[next(iter(self.confirmations))]
        return nonce

    def consume_confirmation(self, nonce, invocation_id: str) -> bool:
        """True exactly once for a nonce minted for `invocation_id`; False for a spent, forgotten or unknown one."""
        if not isinstance(nonce, str):
            return False
        with self.lock:
            if self.confirmations.get(nonce) != invocation_id:
                return False
            del self.confirmations[nonce]
        return True

    def run_command(self, draft: Draft) -> str:
        return f"snakegate run {relative(draft.config_path, self.root)}"


def client_info(session) -> dict | None:
    """The connected client's name and version, as it declared them (None when it did not)."""
    params = getattr(session, "client_params", None)
    info = getattr(params, "client_info", None)
    if info is None:
        return None
    return {"name": info.name, "version": info.version}


def client_label(session) -> str:
    info = client_info(session)
    if not info or not str(info.get("name") or "").strip():
        return UNKNOWN_CLIENT
    return f"{info['name']} {info['version']}".strip()


def error_dict(code: str, message: str, hint: str | None = None) -> dict:
    return {"error": {"code": code, "message": message, "hint": hint}}


def tool_result(state: McpState, result: dict, ok: bool) -> CallToolResult:
    """The answer to a tools/call: the (scrubbed, path-hidden) result as sorted JSON text and as structured content;
    a refusal is `isError`, so the model reads it as something to fix."""
    shown = state.shown(result)
    text = json.dumps(shown, sort_keys=True, default=str)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=json.loads(text),
                          is_error=not ok)
