"""The MCP server's audit log: one JSON line per MCP call, in a folder per server run.

Owns `<audit_dir>/mcp-<server run id>/` (beside the chat's conversation logs,
so git-ignored with them): `server.json` (start time, transport, registry,
process id) and `calls.jsonl`, one line per call — the method, the tool,
resource or prompt, the arguments with sensitive values redacted, the outcome
(`ok`, `refused` or `error`, with the code), the duration and the client's
name and version. Lines go through `agent/audit.AuditLog` (mode 0600, known
secrets scrubbed, older lines rewritten when a value becomes known as
secret). Writing never raises into the server: a log that cannot be written
sets `error`, which the server reports once on stderr.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snakegate.agent.audit import AuditLog
from snakegate.provenance.private import private_path


def new_server_run_id() -> str:
    return "mcp-" + _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


@dataclass
class Call:
    """One MCP call being served; the handler fills in what it learns, `McpAudit.record` writes it."""

    method: str
    name: str | None = None                  # tool, resource URI or prompt
    arguments: Any = None                    # sensitive values redacted
    outcome: str = "ok"                      # ok | refused | error
    code: str | None = None                  # the refusal's or error's code
    extra: dict = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)

    def refused(self, code: str) -> None:
        self.outcome, self.code = "refused", code

    def failed(self, code: str) -> None:
        self.outcome, self.code = "error", code


class McpAudit:
    def __init__(self, audit_dir: Path, server_run_id: str, *, transport: str, registry: Path):
        self.folder = Path(audit_dir) / server_run_id
        self.log = AuditLog(self.folder / "calls.jsonl")
        self.error: str | None = None
        try:
            private_path(self.folder)
            fd = os.open(self.folder / "server.json", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"server_run_id": server_run_id, "transport": transport, "registry": str(registry),
                           "pid": os.getpid(),
                           "started": _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds")},
                          fh, sort_keys=True)
        except OSError as exc:
            self.error = f"the MCP audit folder {self.folder} cannot be written ({exc.strerror or exc})"

    def record(self, call: Call, client: dict | None) -> None:
        entry = {"method": call.method, "outcome": call.outcome,
                 "duration_ms": round((time.monotonic() - call.started) * 1000, 1), "client": client}
        if call.name is not None:
            entry["name"] = call.name
        if call.arguments is not None:
            entry["arguments"] = call.arguments
        if call.code is not None:
            entry["code"] = call.code
        entry.update(call.extra)
        self.log.write("call", **entry)
        self.error = self.error or self.log.error

    def learn(self, secret_texts: list[str]) -> None:
        self.log.learn(secret_texts)

    def digest(self) -> str | None:
        return self.log.digest()
