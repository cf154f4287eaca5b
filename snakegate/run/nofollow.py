"""Reading a data root's input for staging without ever following a symbolic link: the gate resolved the path
inside a data root, and what the stager opens must be that file, not wherever a link planted since leads.

Someone who can write to a data root can, between the gate's resolution and the copy, replace the file (or a
folder on its path) by a symlink to a file outside every data root, or by a FIFO that blocks whoever opens it.
`open_file()` walks the resolved path one component at a time with O_NOFOLLOW (folders opened O_PATH: no read
permission needed to pass through them) and opens the file non-blocking, so a link anywhere on the path is
ELOOP/ENOTDIR and a FIFO or device is refused instead of waited on. `copy_folder()` copies a `directory` input
with os.fwalk (which never follows a link and works on descriptors, so a folder swapped mid-walk is not entered)
and refuses a link or a special file anywhere inside: a folder input is copied whole, and a link in it could
lead outside the data roots.

It reads sources and writes only the copy it is given the path of. Linux and other POSIX systems with O_NOFOLLOW.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from snakegate.contract import artifacts

_PATH = getattr(os, "O_PATH", os.O_RDONLY)  # Linux: pass through a folder without read permission
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
_BLOCK = 1 << 20


class NotAFileHere(OSError):
    """The path no longer leads to the regular file (or folder) the gate resolved: a link, a FIFO or a device
    stands there now; or (`problem` set, artifacts.entry_problem's words) a folder input holds one."""

    problem: str | None = None


def _changed(path: Path, what: str) -> NotAFileHere:
    return NotAFileHere(errno.ELOOP, f"{path} {what} since the gate resolved it; a link or a special file is never "
                                     "staged (run again once nothing is writing the data root)")


def open_dir(path: Path) -> int:
    """A descriptor (O_PATH) of the folder at the absolute, resolved `path`, reached without following a link."""
    path = Path(path)
    if not path.is_absolute():
        raise ValueError(f"{path} is not absolute")
    fd = os.open("/", _PATH | os.O_DIRECTORY)
    try:
        for part in path.parts[1:]:
            try:
                nxt = os.open(part, _PATH | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _changed(path, f"has a link or a file at `{part}`") from None
                raise
            os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_file(path: Path) -> int:
    """A read descriptor of the regular file at the absolute, resolved `path`, reached and opened without
    following a link and without blocking on a FIFO; NotAFileHere when anything else stands there now."""
    path = Path(path)
    parent = open_dir(path.parent)
    try:
        return _open_regular(path.name, parent, path)
    finally:
        os.close(parent)


def _open_regular(name: str, dirfd: int, shown: Path) -> int:
    """`name` in the folder `dirfd`, opened as open_file() opens a file (the descriptor back in blocking mode)."""
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=dirfd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO):  # a link; a FIFO with no writer (O_NONBLOCK)
            raise _changed(shown, "became a link or a special file") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _changed(shown, "is no longer a regular file")
    os.set_blocking(fd, True)
    return fd


def copy_folder(source: Path, dest: Path) -> None:
    """Copy the folder `source` (absolute, resolved) to `dest` (which must not exist): every folder and regular
    file, each file read through a descriptor of its own folder with O_NOFOLLOW. A link or a special file
    anywhere inside refuses the whole folder (NotAFileHere naming it); `dest` is then left for the caller to
    remove. Files keep their modification times."""
    top = open_dir(source)
    try:
        os.mkdir(dest, 0o700)
        for dirpath, dirnames, filenames, dirfd in os.fwalk(".", dir_fd=top, follow_symlinks=False):
            here = Path(dest) / dirpath
            for name in sorted(dirnames) + sorted(filenames):
                problem = artifacts.entry_problem((Path(dirpath) / name).as_posix().removeprefix("./"),
                                                  os.lstat(name, dir_fd=dirfd))
                if problem:
                    error = NotAFileHere(errno.ELOOP, f"{source} {problem}")
                    error.problem = problem
                    raise error
            for name in dirnames:
                os.mkdir(here / name, 0o700)
            for name in filenames:
                _copy_entry(name, dirfd, here / name, f"{source}/{dirpath}/{name}")
    finally:
        os.close(top)


def _copy_entry(name: str, dirfd: int, dest: Path, shown: str) -> None:
    src = _open_regular(name, dirfd, Path(shown))
    try:
        st = os.fstat(src)
        out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            while block := os.read(src, _BLOCK):
                view = memoryview(block)
                while view:
                    view = view[os.write(out, view):]
            os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            os.close(out)
    finally:
        os.close(src)
