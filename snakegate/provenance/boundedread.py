"""Bounded reads of a run's record files: only a regular file is read (a symlink, a FIFO or a device named
run.json is refused without waiting on it), and only up to a limit; a JSON object read from one says what is
wrong with it instead of raising (missing, unreadable, not JSON, not an object).

Reads only; never writes, never follows a symbolic link unless asked.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

MAX_RECORD_BYTES = 64 * 1024 * 1024  # a record file read for a view (run.json, prov.json, ...) is read up to this
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class RecordUnreadable(Exception):
    """A file of a run folder that is not read: not a regular file, too big, or refused by the system."""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file"


def _open_regular(path: Path, follow_symlinks: bool, what: str) -> tuple[int, int]:
    """(descriptor, size) of a regular file, opened without waiting; FileNotFoundError or RecordUnreadable."""
    flags = _READ_FLAGS if not follow_symlinks else _READ_FLAGS & ~getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_symlinks:
            raise RecordUnreadable(f"{what} is a symbolic link, not a file (not followed)") from None
        raise RecordUnreadable(f"{what} cannot be read: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise RecordUnreadable(f"{what} cannot be read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise RecordUnreadable(f"{what} is {_kind(st.st_mode)}, not a regular file (not read)")
    return fd, st.st_size


def _read_upto(fd: int, limit: int, what: str) -> bytes:
    chunks, size = [], 0
    try:
        while size < limit:
            chunk = os.read(fd, min(1 << 20, limit - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise RecordUnreadable(f"{what} cannot be read: {exc.strerror or exc}") from None
    return b"".join(chunks)


def read_head(path: Path, limit: int, *, follow_symlinks: bool = False, what: str | None = None) -> tuple[bytes, bool]:
    """(the first `limit` bytes of a regular file, whether it holds more). Never waits and never reads past the
    limit: a FIFO, a device or a socket (and, unless `follow_symlinks`, a symbolic link) is refused as it is
    opened. FileNotFoundError when there is no such file; RecordUnreadable saying why for anything else."""
    what = what or Path(path).name
    fd, _ = _open_regular(Path(path), follow_symlinks, what)
    try:
        data = _read_upto(fd, limit + 1, what)  # one byte more says whether there is more
    finally:
        os.close(fd)
    return data[:limit], len(data) > limit


def read_tail(path: Path, limit: int, *, follow_symlinks: bool = False, what: str | None = None) -> tuple[bytes, bool]:
    """(the last `limit` bytes of a regular file, whether it holds more before them); refuses as read_head does."""
    what = what or Path(path).name
    fd, size = _open_regular(Path(path), follow_symlinks, what)
    try:
        start = max(0, size - limit)
        try:
            os.lseek(fd, start, os.SEEK_SET)
        except OSError as exc:
            raise RecordUnreadable(f"{what} cannot be read: {exc.strerror or exc}") from None
        data = _read_upto(fd, limit, what)
    finally:
        os.close(fd)
    return data, start > 0


def read_record(path: Path, limit: int = MAX_RECORD_BYTES, what: str | None = None) -> bytes:
    """The whole of a record file that is a regular file of at most `limit` bytes (symbolic links not followed);
    FileNotFoundError when absent, RecordUnreadable saying why otherwise."""
    what = what or Path(path).name
    data, more = read_head(path, limit, what=what)
    if more:
        raise RecordUnreadable(f"{what} is more than {limit:,} bytes, larger than any record snakegate writes "
                               "(not read)")
    return data


def json_object(path: Path, what: str | None = None) -> tuple[dict | None, str | None]:
    """(the JSON object in `path`, None), (None, why not), or (None, None) when there is no such file."""
    what = what or Path(path).name
    try:
        text = read_record(path, what=what)
    except FileNotFoundError:
        return None, None
    except RecordUnreadable as exc:
        return None, str(exc)
    if not text.strip():
        return None, f"{what} is empty"
    try:
        data = json.loads(text)
    except UnicodeDecodeError:
        return None, f"{what} is not UTF-8 text"
    except json.JSONDecodeError as exc:
        return None, f"{what} is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
    except RecursionError:
        return None, f"{what} nests JSON too deep to read"
    if not isinstance(data, dict):
        return None, f"{what} holds a JSON {type(data).__name__}, not an object"
    return data, None


def read_json(path: Path) -> dict:
    """The JSON object a record file holds; {} when it is missing, damaged, not a regular file or too big."""
    data, _ = json_object(path)
    return data or {}


def json_problem(path: Path, what: str | None = None) -> str | None:
    """Why `path` is not a readable JSON object, or None when it is (a missing file is None too)."""
    return json_object(path, what)[1]


def glance_problem(path: Path, what: str | None = None) -> str | None:
    """Why `path` is plainly not a whole JSON object, judged from its kind, size and first and last bytes
    without parsing it; None when it looks whole or is missing. A listing of thousands of runs (each prov.json
    megabytes at 10,000 jobs) reads no PROV document this way; a file damaged inside passes here and is found
    by the views that open it (show-run, verify, export), which parse it whole."""
    what = what or Path(path).name
    try:
        head, more = read_head(path, 64, what=what)
        tail, _ = read_tail(path, 64, what=what) if more else (head, False)
    except FileNotFoundError:
        return None
    except RecordUnreadable as exc:
        return str(exc)
    if not head.strip():
        return f"{what} is empty"
    if not head.lstrip().startswith(b"{") or not tail.rstrip().endswith(b"}"):
        return f"{what} is not a whole JSON object (it does not start with {{ and end with }})"
    return None
