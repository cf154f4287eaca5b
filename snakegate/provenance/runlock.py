"""The run folder's lock: an exclusive, non-blocking flock on runs/<id>/.lock held while something executes in
the folder, with who holds it written into the file for whoever finds it busy.

Touches only the lock file; starts nothing.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

LOCK_FILE = ".lock"


class RunBusy(Exception):
    def __init__(self, run_dir: Path, holder: str):
        super().__init__(f"run folder {run_dir} is busy: another process ({holder}) is executing it")
        self.run_dir = run_dir
        self.holder = holder


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
        self._fd = fd
        try:
            self.note_holder(f"pid {os.getpid()}")
        except OSError:
            pass  # who holds it is a courtesy; a full disk must not stop the lock
        return self

    @property
    def fd(self) -> int | None:
        return self._fd

    def note_holder(self, text: str) -> None:
        """Say in the lock file who holds the lock now (shown to whoever finds it busy)."""
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, text.encode(), 0)

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def close_shared(self) -> None:
        """Close this process's descriptor without unlocking: a child that inherited it keeps the lock
        until it exits (LOCK_UN would release it for every descriptor of the open file)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()


def lock_is_held(run_dir: Path) -> bool:
    """True while some process holds the run folder's lock (tried without blocking, released at once)."""
    path = Path(run_dir) / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing drops a lock taken here
    return False


def lock_holder(run_dir: Path) -> str:
    try:
        return (Path(run_dir) / LOCK_FILE).read_text(errors="replace").strip() or "unknown process"
    except OSError:
        return "unknown process"
