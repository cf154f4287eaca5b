"""The run store: `runs/<run_id>/` folders are the source of truth; nothing else is.

A run folder holds config.yaml (what Snakemake got), invocation.json (the
canonical invocation), run.json (status, timings, progress, failure), the
workflow's outputs and logs, snakemake.log, and the PROV files. Every write is
write-then-rename, so a crash leaves the previous complete version; run.json's
`stage` says how far the run got. A run folder is locked (flock) while
something executes in it.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import json
import os
import re
from pathlib import Path
from typing import Any

RUN_JSON = "run.json"
CONFIG_YAML = "config.yaml"
CONFIG_MODE = 0o600  # config.yaml holds x-sensitive values in plain text: owner only
INVOCATION_JSON = "invocation.json"
SNAKEMAKE_LOG = "snakemake.log"
ORIGIN_JSON = "origin.json"
LOCK_FILE = ".lock"
# Set by `snakegate run` for its Snakemake child, which runs under the parent's lock.
LOCK_HELD_ENV = "SNAKEGATE_RUN_LOCK_HELD"

STATUSES = ("running", "succeeded", "failed", "cancelled", "incomplete")
RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # as schemas/invocation.schema.json


class RunBusy(Exception):
    def __init__(self, run_dir: Path, holder: str):
        super().__init__(f"run folder {run_dir} is busy: another process ({holder}) is executing it")
        self.run_dir = run_dir
        self.holder = holder


class RunNotFound(Exception):
    pass


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_time(text: str | None) -> _dt.datetime | None:
    if not text:
        return None
    return _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def is_safe_run_id(run_id: str) -> bool:
    """A run id that names one folder directly under runs/ (no `..`, no `/`)."""
    return bool(RUN_ID_PATTERN.fullmatch(run_id)) and set(run_id) != {"."}


def new_run_id(invocation_id: str, now: _dt.datetime | None = None) -> str:
    """UTC timestamp + the first 8 hex of the invocation id: sortable and traceable to the invocation."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    return f"{now.strftime('%Y%m%dT%H%M%SZ')}-{invocation_id[:8]}"


def write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def write_text_atomic(path: Path, text: str, mode: int | None = None) -> None:
    """Write then rename. With `mode` (e.g. 0o600 for config.yaml, which holds x-sensitive values in
    plain text for Snakemake) the file has exactly that mode from its first byte."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    if mode is None:
        tmp.write_text(text, encoding="utf-8")
    else:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        try:
            os.fchmod(fd, mode)
            os.write(fd, text.encode("utf-8"))
        finally:
            os.close(fd)
    os.replace(tmp, path)


def read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def read_run(run_dir: Path) -> dict:
    return read_json(Path(run_dir) / RUN_JSON)


def update_run(run_dir: Path, **fields: Any) -> dict:
    """Merge `fields` into run.json (read, merge, write-rename). Returns the new record."""
    path = Path(run_dir) / RUN_JSON
    record = read_json(path)
    record.update(fields)
    write_json_atomic(path, record)
    return record


class RunLock:
    """An exclusive, non-blocking flock on runs/<id>/.lock held for as long as the object lives."""

    def __init__(self, run_dir: Path):
        self.run_dir = Path(run_dir)
        self._fd: int | None = None

    def acquire(self) -> "RunLock":
        self.run_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.run_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "unknown process"
            os.close(fd)
            raise RunBusy(self.run_dir, holder)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}".encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()


def list_runs(runs_dir: Path) -> list[dict]:
    """Every run record, oldest first; a folder without a readable run.json still shows up."""
    out = []
    if not Path(runs_dir).is_dir():
        return out
    for folder in sorted(p for p in Path(runs_dir).iterdir() if p.is_dir() and not p.name.startswith(".")):
        record = read_run(folder)
        record.setdefault("run_id", folder.name)
        record.setdefault("status", "unknown")
        out.append(record)
    return out


def find_run(runs_dir: Path, ref: str) -> Path:
    """A run folder by exact id, unique prefix, a path, or 'latest'."""
    runs_dir = Path(runs_dir)
    as_path = Path(ref)
    if as_path.is_dir() and (as_path / RUN_JSON).exists():
        return as_path.resolve()
    if not runs_dir.is_dir():
        raise RunNotFound(f"no runs yet: {runs_dir} does not exist")
    names = sorted(p.name for p in runs_dir.iterdir() if p.is_dir() and not p.name.startswith("."))
    if ref == "latest":
        if not names:
            raise RunNotFound(f"no runs in {runs_dir}")
        # by start time: run ids made by hand (plain snakemake) do not sort by time
        return runs_dir / max(names, key=lambda n: (read_run(runs_dir / n).get("started") or "", n))
    if ref in names:
        return runs_dir / ref
    matches = [n for n in names if n.startswith(ref) or n.endswith(ref)]
    if len(matches) == 1:
        return runs_dir / matches[0]
    if not matches:
        raise RunNotFound(f"no run `{ref}` in {runs_dir}; `snakegate runs` lists them")
    raise RunNotFound(f"`{ref}` matches {len(matches)} runs ({', '.join(matches[:5])}…); give more of the id")


def duration_s(record: dict) -> float | None:
    start, end = parse_time(record.get("started")), parse_time(record.get("ended"))
    if start and end:
        return round((end - start).total_seconds(), 3)
    return None
