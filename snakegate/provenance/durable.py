"""Durable writes of a run's record files: write a sibling temp file, fsync it, rename it over the file,
fsync the folder, so that a crash or a full disk leaves the previous complete version, never a truncated one;
and the small reserve file a run sets aside so that its final record can still be written on a full disk.

Writes only the file it is given (and the run folder's reserve); reads nothing else.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

RESERVE_FILE = ".reserve"  # given up on a full disk so the final run.json can still be written
RESERVE_BYTES = 256 * 1024


class RecordWriteError(OSError):
    """A run record file could not be written (full disk, read-only or vanished folder)."""

    def __init__(self, path: Path, cause: OSError):
        super().__init__(cause.errno, f"could not write {path}: {cause.strerror or cause}")
        self.path = Path(path)
        self.cause = cause

    def __str__(self) -> str:
        return self.strerror


def _write_durably(path: Path, payload: bytes, mode: int | None = None) -> None:
    """Write a sibling temp file, fsync it, rename it over `path`, fsync the folder."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644 if mode is None else mode)
        try:
            if mode is not None:
                os.fchmod(fd, mode)  # exactly this mode, whatever the umask
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # the rename itself must survive a crash too
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def _write(path: Path, payload: bytes, mode: int | None = None, use_reserve: bool = True) -> None:
    """_write_durably; on a full disk give up the run folder's reserve once and retry (for the record's
    own files, not for copies of logs)."""
    try:
        _write_durably(path, payload, mode)
        return
    except OSError as exc:
        first = exc
    reserve = Path(path).parent / RESERVE_FILE
    if use_reserve and first.errno in (errno.ENOSPC, errno.EDQUOT) and reserve.is_file():
        try:
            reserve.unlink()
            _write_durably(path, payload, mode)
            return
        except OSError as exc:
            first = exc
    raise RecordWriteError(path, first) from None


def write_json_atomic(path: Path, data: Any) -> None:
    _write(path, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8"))


def write_text_atomic(path: Path, text: str, mode: int | None = None) -> None:
    """Durable write-then-rename. With `mode` (e.g. 0o600 for config.yaml, which holds x-sensitive values in
    plain text for Snakemake) the file has exactly that mode from its first byte."""
    _write(path, text.encode("utf-8"), mode)


def copy_atomic(source: Path, dest: Path) -> None:
    """Copy a file whole or not at all (a full disk must not leave half a log behind)."""
    with open(source, "rb") as fh:
        _write(Path(dest), fh.read(), use_reserve=False)


def make_reserve(run_dir: Path) -> None:
    """Set aside RESERVE_BYTES in the run folder (best effort: a disk already full has none to give)."""
    path = Path(run_dir) / RESERVE_FILE
    if path.exists():
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        return
    try:
        os.write(fd, b"\0" * RESERVE_BYTES)  # real blocks: a sparse file would free nothing
        os.fsync(fd)
    except OSError:
        os.close(fd)
        fd = -1
        path.unlink(missing_ok=True)
    finally:
        if fd >= 0:
            os.close(fd)


def drop_reserve(run_dir: Path) -> None:
    try:
        (Path(run_dir) / RESERVE_FILE).unlink()
    except OSError:
        pass
