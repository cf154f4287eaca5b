"""The record of one approved refinement, kept beside the run index, outside every run folder:
`<registry>/.snakegate/refinements/<id>.json` (0600 in a 0700 folder).

It holds the approval exactly as the person saw it (parent, varying params, every gated point with its
invocation id, budget, stop rule) and its sha256, who approved and when, then each run the loop started
and how the loop ended. Every run's run.json carries the id and the sha256 (`refinement`), so a run
proves which approval it ran under and an edited approval no longer matches its runs. Writes only its own
files, atomically; never decides what runs (snakegate.refine.loop does, from the approval in memory).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from pathlib import Path
from typing import Any
from snakegate.provenance.private import private_path

FOLDER = (".snakegate", "refinements")


class ApprovalUnwritable(Exception):
    """The refinement's record cannot be written: nothing may run without it."""


def folder(registry_root: Path) -> Path:
    return Path(registry_root).joinpath(*FOLDER)


def sha256_of(approval: dict) -> str:
    text = json.dumps(approval, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Record:
    """One refinement's record file; `update` rewrites it whole (the approval part never changes)."""

    def __init__(self, path: Path, data: dict):
        self.path = path
        self.data = data

    @property
    def id(self) -> str:
        return self.data["refinement"]

    def update(self, **fields: Any) -> None:
        self.data.update(fields)
        _write(self.path, self.data)


def open_record(registry_root: Path, approval: dict, approved_by: str,
                now: _dt.datetime | None = None) -> Record:
    """A new record for `approval`, written before any run starts. Raises ApprovalUnwritable."""
    now = now or _dt.datetime.now(_dt.UTC)
    sha = sha256_of(approval)
    base = f"{now.strftime('%Y%m%dT%H%M%SZ')}-{sha[:8]}"
    where = folder(registry_root)
    try:
        private_path(where)
    except OSError as exc:
        raise ApprovalUnwritable(f"cannot write the refinement record in {where}: {exc.strerror or exc}") from None
    n = 1
    while True:
        ref_id = base if n == 1 else f"{base}.{n}"
        path = where / f"{ref_id}.json"
        try:  # claim the name: two refinements approved in one second get two records
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            break
        except FileExistsError:
            n += 1
        except OSError as exc:
            raise ApprovalUnwritable(f"cannot write the refinement record {path}: {exc.strerror or exc}") from None
    data = {"refinement": ref_id, "approval": approval, "approval_sha256": sha, "approved_by": approved_by,
            "approved_at": now.isoformat(timespec="seconds"), "state": "running", "runs": []}
    record = Record(path, data)
    try:
        _write(path, data)
    except ApprovalUnwritable:
        path.unlink(missing_ok=True)
        raise
    return record


def read(registry_root: Path, ref_id: str) -> dict | None:
    """A refinement's record, or None when there is none (or it is not one)."""
    if not ref_id or "/" in ref_id or ref_id.startswith("."):
        return None
    try:
        with open(folder(registry_root) / f"{ref_id}.json", encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def intact(data: dict) -> bool:
    """Whether the record's approval still hashes as recorded (an edited approval does not)."""
    return isinstance(data.get("approval"), dict) and sha256_of(data["approval"]) == data.get("approval_sha256")


def _write(path: Path, data: dict) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{os.urandom(4).hex()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, (json.dumps(data, indent=1, sort_keys=True, default=str) + "\n").encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise ApprovalUnwritable(f"cannot write the refinement record {path}: {exc.strerror or exc}") from None
