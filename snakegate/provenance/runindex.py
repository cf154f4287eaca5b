"""The registry's run index: what each run was pinned to when it started, and the seal of its record when
it ended, kept outside the run folders (`<registry>/.snakegate/runs/<run_id>.json`, 0600 in a 0700 folder).

Someone who can write a run folder (a shared group folder, a job's own code) but not the registry's
private `.snakegate/` cannot make a job accept another invocation (the job gate compares the run's
`invocation.json` with the pin here) nor edit a finished record unseen (`snakegate verify` compares the
record's seal with the one here). Someone who can write both can do both: the seal's hash, printed by
`show-run` and `verify`, is what to keep elsewhere for that.

Plain Python and JSON only (read inside every cluster job). Writes only its own files, atomically.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from snakegate.provenance.private import private_path

INDEX_DIR = (".snakegate", "runs")


class RunIndexError(Exception):
    """The index cannot be written, or already pins the run to another invocation."""


def index_dir(registry_root: Path) -> Path:
    return Path(registry_root).joinpath(*INDEX_DIR)


def _path(registry_root: Path, run_id: str) -> Path:
    return index_dir(registry_root) / f"{run_id}.json"


def read(registry_root: Path, run_id: str) -> dict | None:
    """The run's entry ({run_id, invocation_id, seals: [...]}), or None when the index has none."""
    try:
        with open(_path(registry_root, run_id), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write(registry_root: Path, run_id: str, data: dict) -> None:
    folder = index_dir(registry_root)
    try:
        private_path(folder)
        tmp = folder / f".{run_id}.json.tmp-{os.getpid()}-{os.urandom(4).hex()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, (json.dumps(data, indent=1, sort_keys=True) + "\n").encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, _path(registry_root, run_id))
    except OSError as exc:
        raise RunIndexError(f"cannot write the run index in {folder}: {exc.strerror or exc}") from None


def pin(registry_root: Path, run_id: str, invocation_id: str) -> None:
    """Record that run `run_id` runs invocation `invocation_id`; refuse a run already pinned to another."""
    entry = read(registry_root, run_id)
    if entry is not None:
        if entry.get("invocation_id") != invocation_id:
            raise RunIndexError(f"the run index already pins run {run_id} to invocation "
                              f"{str(entry.get('invocation_id'))[:12]}…")
        return
    _write(registry_root, run_id, {"run_id": run_id, "invocation_id": invocation_id, "seals": []})


def pinned(registry_root: Path, run_id: str) -> str | None:
    entry = read(registry_root, run_id)
    value = entry.get("invocation_id") if entry else None
    return value if isinstance(value, str) else None


def add_seal(registry_root: Path, run_id: str, seal_sha256: str, at: str) -> None:
    """Append the seal of the run's record (a run completed later, e.g. found interrupted, is sealed again)."""
    entry = read(registry_root, run_id) or {"run_id": run_id, "invocation_id": None, "seals": []}
    seals = [s for s in entry.get("seals") or [] if isinstance(s, dict)]
    if not seals or seals[-1].get("sha256") != seal_sha256:
        seals.append({"sha256": seal_sha256, "at": at})
    entry["seals"] = seals
    _write(registry_root, run_id, entry)


def last_seal(registry_root: Path, run_id: str) -> str | None:
    entry = read(registry_root, run_id)
    seals = [s for s in (entry or {}).get("seals") or [] if isinstance(s, dict) and isinstance(s.get("sha256"), str)]
    return seals[-1]["sha256"] if seals else None
