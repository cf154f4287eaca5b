"""Digests this process already computed, reused while the file is provably untouched since.

A file's digest is kept under its identity and change stamps, `(st_dev, st_ino, st_size, st_mtime_ns,
st_ctime_ns)`: any write, truncate, chmod, rename over it or utime gives a new ctime, which nobody but root
(setting the clock) can set back, so a file whose stamps are unchanged holds the bytes that were hashed. A digest
is kept only when the file's stamps were the same before and after it was hashed (the staging's copy: on
the descriptor it wrote, after its last change of mode and time). The staging (snakegate.run.stage)
remembers each copy it wrote and hashed and the source it read; the job guard (snakegate.run.guard) and the
end-of-run recheck remember each file they hashed. The guard's check before a job, the PROV capture
(runfiles.py) and the seal (seal.py) then recall instead of reading the file again. That makes a staged input
one read of its source per run at staging (after the gate's) and one of its copy at the end, instead of one
per job that reads it and one per record that names it. The same stamps (`stamp()`) tell the gate
(snakegate.gate.reads) that an input it checked was not changed before it hashed it.

The front end stages, Snakemake's process runs the jobs: `export()` hands the staged copies' and sources'
entries to Snakemake in its environment (set by the front end when it starts Snakemake, which a writer of
the run folder cannot change), and `inherit()` takes them in. Nothing is read from, or written to, a file.

What it never replaces: the checks at the end of a run (stage.recheck, guard.final_check) hash every byte
again, so a change made within one timestamp tick of the last hashing (a filesystem with coarse
timestamps) is still caught before the run may be recorded `succeeded`. A record that recalls (the seal,
PROV) names the bytes that were hashed; were the file changed within that tick, `snakegate verify`, which
reads every byte, finds it changed after the seal.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

ENV = "SNAKEGATE_KNOWN_DIGESTS"
EXPORT_LIMIT = 100_000  # characters: under the kernel's 128 KiB for one environment string (MAX_ARG_STRLEN)

# (dev, ino, size, mtime_ns, ctime_ns) -> (sha256, size)
_known: dict[tuple[int, int, int, int, int], tuple[str, int]] = {}
_inherited = False


def stamp(st: os.stat_result) -> tuple[int, int, int, int, int]:
    """A file's identity and change stamps: equal before and after a read means nothing touched it meanwhile."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def remember(before: os.stat_result, after: os.stat_result, sha256: str, size: int) -> None:
    """Keep `sha256` for a regular file hashed between the two stats of it (taken on the descriptor that was
    hashed or written, or on its path): only when nothing touched it in between."""
    if stat.S_ISREG(after.st_mode) and stamp(before) == stamp(after) and after.st_size == size:
        _known[stamp(after)] = (sha256, size)


def recall(path: str | os.PathLike) -> tuple[str, int] | None:
    """(sha256, size) of the regular file at `path` when it is untouched since it was hashed; else None."""
    inherit()
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return _known.get(stamp(st))


def export(paths) -> str:
    """The known digests of `paths` as they are now, for ENV of a process this one starts, in the order given
    and no longer than EXPORT_LIMIT characters: what does not fit is left out (it only costs reads), as the
    kernel refuses to start a process with one environment string over 128 KiB."""
    out, length = [], 2
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        found = _known.get(stamp(st)) if stat.S_ISREG(st.st_mode) else None
        if found is None:
            continue
        entry = [*stamp(st), *found]
        length += len(json.dumps(entry, separators=(",", ":"))) + 1
        if length > EXPORT_LIMIT:
            break
        out.append(entry)
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


def staged_paths(run_dir: Path, entries: dict, root: Path | None = None) -> list[Path]:
    """The staged copies of a run's inputs.json entries (snakegate.run.staged.read_manifest), then, given the
    registry root, the files they were staged from (the PROV capture records those without reading them)."""
    valid = [e for e in (entries or {}).values() if isinstance(e, dict) and isinstance(e.get("path"), str)]
    copies = [Path(run_dir) / e["path"] for e in valid]
    sources = [Path(root) / e["source"] for e in valid if root is not None and isinstance(e.get("source"), str)]
    return copies + sources
