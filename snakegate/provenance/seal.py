"""Seal a finished run's record: the sha256 of every file in its folder, in `runs/<run_id>/seal.json`, and the
seal's own sha256 in the registry's run index (runindex.py), outside the run folder.

A record file edited after the seal — run.json, invocation.json, config.yaml, prov.*, a log, an
output, a staged input, the workflow copy, a job's hash record — no longer hashes as sealed; a
seal.json rewritten to match no longer hashes as the index says. `check()` reports both. Sealing
recalls the digest this process took of a staged input still untouched since (known.py: hashed at staging
and by the end-of-run recheck) instead of reading it again; `check()` always reads every byte. Files that
may appear later without changing what the run was (snakegate report's page, the PROV renderings made
on first request, the folder's lock) are listed apart, never as tampering.

Only reads files, except `seal()`, which writes seal.json and the index entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from snakegate.provenance import known, runindex, runstore

SEAL_JSON = runstore.SEAL_JSON
# never sealed: the folder's lock (it notes who holds it) and snakegate report's page (made and replaced on request)
UNSEALED = frozenset({runstore.LOCK_FILE, runstore.HEARTBEAT_FILE, runstore.RESERVE_FILE, "report.html", SEAL_JSON})
# may appear after the seal: the PROV renderings a big run makes on first request (renderings of prov.json)
LATER = frozenset({"prov.provn", "prov.ttl"})
_BLOCK = 1 << 20
_STAGED = runstore.INPUTS_DIR + "/"


def _digest(path: Path) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        h = hashlib.sha256()
        while block := os.read(fd, _BLOCK):
            h.update(block)
        return h.hexdigest()
    finally:
        os.close(fd)


def folder_files(run_dir: Path, recall: bool = False) -> dict[str, str]:
    """Every entry of the run folder (relative posix path -> sha256, or `symlink:<target>` / `other` for
    what is not a regular file), skipping the seal itself and the reserve. `recall`: a file this process
    hashed and nobody touched since is not read again (sealing; a check reads every byte)."""
    run_dir = Path(run_dir)
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(run_dir):
        dirnames.sort()
        for name in sorted(filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]):
            full = Path(dirpath) / name
            rel = full.relative_to(run_dir).as_posix()
            if rel in UNSEALED:
                continue
            if full.is_symlink():
                out[rel] = f"symlink:{os.readlink(full)}"
                continue
            # a staged input the staging or the end-of-run recheck hashed, untouched since (known.py): recalled
            # (only there: a stat more per file elsewhere would cost a big run more than it saves)
            found = known.recall(full) if recall and rel.startswith(_STAGED) else None
            out[rel] = found[0] if found is not None else (_digest(full) or "other")
    return out


def seal(run_dir: Path, registry_root: Path, at: str | None = None) -> str:
    """Write seal.json for the run folder as it is now and record its sha256 in the run index; returns it."""
    run_dir = Path(run_dir)
    at = at or runstore.utc_now()
    files = folder_files(run_dir, recall=True)
    text = json.dumps({"run_id": run_dir.name, "sealed_at": at, "files": files}, indent=1, sort_keys=True) + "\n"
    runstore.write_text_atomic(run_dir / SEAL_JSON, text)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    runindex.add_seal(registry_root, run_dir.name, digest, at)
    return digest


@dataclass
class SealCheck:
    state: str  # "intact" | "unindexed" (intact, but the run index has no seal for it) | "broken" | "unsealed"
    seal_sha256: str | None = None
    problems: list[str] = field(default_factory=list)  # tampering, one sentence each
    later: list[str] = field(default_factory=list)  # files added after the seal that may be (report, renderings)

    @property
    def ok(self) -> bool:
        return self.state != "broken"


def check(run_dir: Path, registry_root: Path) -> SealCheck:
    """Is the run folder what its seal says, and is the seal the one the run index recorded?"""
    run_dir = Path(run_dir)
    seal_path = run_dir / SEAL_JSON
    indexed = runindex.last_seal(registry_root, run_dir.name)
    try:
        raw = seal_path.read_bytes()
    except FileNotFoundError:
        if indexed:
            return SealCheck("broken", None, [f"{SEAL_JSON} is gone, but the run index recorded a seal "
                                              f"({indexed[:12]}…)"])
        return SealCheck("unsealed")
    except OSError as exc:
        return SealCheck("broken", None, [f"{SEAL_JSON} cannot be read ({exc.strerror or exc})"])
    digest = hashlib.sha256(raw).hexdigest()
    result = SealCheck("intact", digest)
    if indexed is None:
        result.state = "unindexed"  # a run folder brought from another registry, or an index that was removed
    elif indexed != digest:
        result.problems.append(f"{SEAL_JSON} hashes to {digest[:12]}…, but the run index recorded the seal "
                               f"{indexed[:12]}…: the seal was rewritten")
    try:
        sealed = json.loads(raw.decode("utf-8")).get("files")
    except (ValueError, UnicodeDecodeError, AttributeError):
        sealed = None
    if not isinstance(sealed, dict):
        result.problems.append(f"{SEAL_JSON} is damaged")
        result.state = "broken"
        return result
    now = folder_files(run_dir)
    for rel, want in sorted(sealed.items()):
        have = now.get(rel)
        if have is None:
            result.problems.append(f"{rel}: removed after the seal")
        elif have != want:
            result.problems.append(f"{rel}: changed after the seal (sealed {str(want)[:12]}…, now {have[:12]}…)")
    for rel in sorted(set(now) - set(sealed)):
        (result.later if rel in LATER else result.problems).append(
            rel if rel in LATER else f"{rel}: added after the seal")
    if result.problems:
        result.state = "broken"
    return result


def seal_finished(run_dir: Path, registry_root: Path) -> str | None:
    """Seal a run whose record is finished; a seal that cannot be written is said on stderr (the run's status
    stands; `snakegate verify` then calls the run unsealed). Returns the seal's sha256, or None."""
    import sys

    try:
        return seal(run_dir, registry_root)
    except (OSError, runindex.RunIndexError) as exc:
        print(f"snakegate: run {Path(run_dir).name} could not be sealed: {getattr(exc, 'strerror', None) or exc}",
              file=sys.stderr)
        return None
