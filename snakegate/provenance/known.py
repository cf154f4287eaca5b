"""Digests this process already computed, reused while the file is provably untouched since.

A file's digest is kept under its identity and change stamps, `(st_dev, st_ino, st_size, st_mtime_ns,
st_ctime_ns)`: any write, truncate, chmod, rename over it or utime gives a new ctime, which nobody but root
(setting the clock) can set back, so a file whose stamps are unchanged holds the bytes that were hashed. A digest
is kept only when the file's stamps were the same before and after it was hashed (the staging's copy: on
the descriptor it wrote, after its last change of mode and time). The staging (snakegate.run.stage)
remembers each copy it wrote and hashed; the job guard (snakegate.run.guard) remembers each file it hashed; the guard's check before a job then recalls instead of reading the file
again. That makes a staged input one read per run instead of one per job that reads it.

The front end stages, Snakemake's process runs the jobs: `export()` hands the staged copies' entries to
Snakemake in its environment (set by the front end when it starts Snakemake, which a writer of the run
folder cannot change), and `inherit()` takes them in. Nothing is read from, or written to, a file.

What it never replaces: the checks at the end of a run (stage.recheck, guard.final_check) hash every byte
again, so a change made within one timestamp tick of the last hashing (a filesystem with coarse
timestamps) is still caught before the run may be recorded `succeeded`.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

ENV = "SNAKEGATE_KNOWN_DIGESTS"

# (dev, ino, size, mtime_ns, ctime_ns) -> (sha256, size)
_known: dict[tuple[int, int, int, int, int], tuple[str, int]] = {}
_inherited = False


def _stamp(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def remember(before: os.stat_result, after: os.stat_result, sha256: str, size: int) -> None:
    """Keep `sha256` for a regular file hashed between the two stats of it (taken on the descriptor that was
    hashed or written, or on its path): only when nothing touched it in between."""
    if stat.S_ISREG(after.st_mode) and _stamp(before) == _stamp(after) and after.st_size == size:
        _known[_stamp(after)] = (sha256, size)


def recall(path: str | os.PathLike) -> tuple[str, int] | None:
    """(sha256, size) of the regular file at `path` when it is untouched since it was hashed; else None."""
    inherit()
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return _known.get(_stamp(st))


def export(paths) -> str:
    """The known digests of `paths` as they are now, for ENV of a process this one starts."""
    out = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        found = _known.get(_stamp(st)) if stat.S_ISREG(st.st_mode) else None
        if found is not None:
            out.append([*_stamp(st), *found])
    return json.dumps(out, separators=(",", ":"))


def inherit() -> None:
    """Take in what the starting process exported (once; a malformed value is ignored: it only costs reads)."""
    global _inherited
    if _inherited:
        return
    _inherited = True
    try:
        entries = json.loads(os.environ.get(ENV) or "[]")
        for dev, ino, size, mtime, ctime, sha256, nbytes in entries:
            if all(isinstance(v, int) for v in (dev, ino, size, mtime, ctime, nbytes)) and isinstance(sha256, str):
                _known[(dev, ino, size, mtime, ctime)] = (sha256, nbytes)
    except (ValueError, TypeError):
        pass


def staged_paths(run_dir: Path, entries: dict) -> list[Path]:
    """The staged copies of a run's inputs.json entries (snakegate.run.staged.read_manifest)."""
    return [Path(run_dir) / e["path"] for e in (entries or {}).values()
            if isinstance(e, dict) and isinstance(e.get("path"), str)]
