"""Content hashes: canonical JSON, files and workflow folders (shared by the gate and provenance).

Pure helpers with no state except an in-process cache of file digests keyed on
(path, size, mtime, inode), so a warm gate does not re-read large inputs.
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

_file_cache: dict[tuple[str, int, int, int], str] = {}


def canonical_json(obj: Any) -> str:
    """The one serialisation that ids are computed over: sorted keys, no spaces, UTF-8."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_file(path: str | os.PathLike) -> str:
    path = Path(path)
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ino)
    cached = _file_cache.get(key)
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


def folder_files(folder: Path) -> list[Path]:
    """Every authored file under `folder`, sorted, skipping caches and Snakemake state."""
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_NAMES)
        for name in sorted(filenames):
            if name in IGNORED_NAMES or name.endswith(".pyc"):
                continue
            out.append(Path(dirpath) / name)
    return out


def folder_hash(folder: str | os.PathLike) -> str:
    """sha256 over the sorted (relative path, file sha256) list of a folder."""
    folder = Path(folder)
    entries = [[p.relative_to(folder).as_posix(), sha256_file(p)] for p in folder_files(folder)]
    return sha256_text(canonical_json(entries))
