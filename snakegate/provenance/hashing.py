"""Content hashes: canonical JSON, files and workflow folders (shared by the gate and provenance).

Pure helpers with no state except an in-process cache of file digests keyed on
(path, size, mtime, ctime, inode), so a warm gate does not re-read large inputs. The change time is in
the key because nobody can set it back: a file rewritten in place with its size and mtime restored
(`touch -r`) is read again.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

# Folder entries that are produced by running or importing, never authored.
IGNORED_NAMES = frozenset({"__pycache__", ".snakemake", ".pytest_cache", ".DS_Store"})
# A workflow's test cases (test/: inputs and expected outputs for `snakegate test`) are not part of
# what runs: the workflow's content hash and the copy a run executes both leave them out, so the
# copy in a run folder hashes the same as the registry folder it came from.
WORKFLOW_EXCLUDED = frozenset({"test"})

_file_cache: dict[tuple[str, int, int, int, int], str] = {}


def canonical_json(obj: Any) -> str:
    """The one serialisation that ids are computed over: sorted keys, no spaces, UTF-8."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_file(path: str | os.PathLike, *, use_cache: bool = True) -> str:
    """The file's sha256. `use_cache=False` always reads the bytes: for checks that must see a file
    rewritten in place with its size and mtime restored (the input re-check before `succeeded`)."""
    path = Path(path)
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    cached = _file_cache.get(key) if use_cache else None
    if cached is not None:
        return cached
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    value = digest.hexdigest()
    # A file written in the last two seconds may be rewritten within the same mtime tick on
    # coarse-clock filesystems, keeping its key: only settled files are cached.
    if time.time() - st.st_mtime > 2.0:
        _file_cache[key] = value
    return value


def folder_files(folder: Path, exclude_top: frozenset[str] = frozenset()) -> list[Path]:
    """Every authored file under `folder`, sorted, skipping caches, Snakemake state and the
    top-level entries named in `exclude_top`."""
    folder = Path(folder)
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        top = Path(dirpath) == folder
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_NAMES and not (top and d in exclude_top))
        for name in sorted(filenames):
            if name in IGNORED_NAMES or name.endswith(".pyc") or (top and name in exclude_top):
                continue
            out.append(Path(dirpath) / name)
    return out


def folder_hash(folder: str | os.PathLike, exclude_top: frozenset[str] = frozenset(), *,
                use_cache: bool = True) -> str:
    """sha256 over the sorted (relative path, file sha256) list of a folder."""
    folder = Path(folder)
    entries = [[p.relative_to(folder).as_posix(), sha256_file(p, use_cache=use_cache)]
               for p in folder_files(folder, exclude_top)]
    return sha256_text(canonical_json(entries))


def workflow_files(folder: str | os.PathLike) -> list[Path]:
    """The files of a workflow folder that a run executes: everything authored except test/."""
    return folder_files(Path(folder), WORKFLOW_EXCLUDED)


def workflow_hash(folder: str | os.PathLike) -> str:
    """A workflow's content hash: folder_hash without test/."""
    return folder_hash(folder, WORKFLOW_EXCLUDED)
