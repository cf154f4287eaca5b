"""The chat's audit log: one JSON line per event of a conversation, sensitive values redacted.

Owns `<registry>/.snakegate/audit/<conversation_id>.jsonl` (git-ignored, mode 0600): every
researcher message, every model request and response, every action with its
arguments and result, drafts, approvals and runs, in order, each line with a
sequence number and a UTC time. A value that becomes known as sensitive later
is scrubbed from the lines already written (the file is rewritten whole or not at all, still 0600).
`digest()` is the sha256 of the
log so far: an approval records it, so a run names the exact transcript that
led to it. Writing never raises into the conversation: a log that cannot be
written is reported by `error` and the approval then records no digest.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from snakegate.agent.redact import scrub
from snakegate.provenance.secrets import replace_file


class AuditLog:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.error: str | None = None
        self._seq = 0
        self._secrets: list[str] = []

    def _append(self, text: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(text)

    def write(self, kind: str, **data: Any) -> None:
        if self.error is not None:
            return
        self._seq += 1
        entry = {"seq": self._seq, "at": _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds"),
                 "kind": kind, **data}
        try:
            line = json.dumps(scrub(entry, self._secrets), sort_keys=True, default=str, ensure_ascii=False)
            self._append(line + "\n")
        except (OSError, ValueError, TypeError) as exc:
            self.error = f"the audit log {self.path} cannot be written ({getattr(exc, 'strerror', None) or exc})"

    def learn(self, secrets: list[str]) -> None:
        """From now on scrub `secrets`; lines already written that hold a new one are rewritten without it."""
        new = [s for s in secrets if s not in self._secrets]
        if not new:
            return
        self._secrets = sorted(set(self._secrets) | set(new), key=len, reverse=True)
        if self.error is not None or not self.path.is_file():
            return
        try:
            text = self.path.read_text(encoding="utf-8")
            # a line holds a value as JSON writes it: quotes, backslashes and control characters escaped
            if not any(s in text or _as_json(s) in text for s in new):
                return
            lines = [json.dumps(scrub(json.loads(l), self._secrets), sort_keys=True, default=str, ensure_ascii=False)
                     for l in text.splitlines() if l.strip()]
            replace_file(self.path, ("\n".join(lines) + "\n").encode("utf-8"), 0o600)
        except (OSError, ValueError) as exc:
            self.error = f"the audit log {self.path} cannot be rewritten ({getattr(exc, 'strerror', None) or exc})"

    def digest(self) -> str | None:
        """sha256 of the log as it stands (None when it could not be written)."""
        if self.error is not None or not self.path.is_file():
            return None
        with open(self.path, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()


def _as_json(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)[1:-1]
