"""The Snakemake child of a run, as a process: start it detached, follow its output, signal and escalate.

Owns only process control (sessions, signals, the cancel watch, following a growing console file); it never
reads or writes a run's record.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable


def follow(path: Path, proc: subprocess.Popen, on_line: Callable[[str], None], poll_s: float = 0.1) -> None:
    """Feed each line Snakemake writes to `path` to `on_line` until the process has exited and all is read."""
    with open(path, "rb") as fh:
        pending = b""
        while True:
            chunk = fh.read(1 << 16)
            if chunk:
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    on_line(line.decode("utf-8", errors="replace") + "\n")
                continue
            if proc.poll() is not None:
                break  # exited, and everything it wrote has been read
            time.sleep(poll_s)
        if pending:
            on_line(pending.decode("utf-8", errors="replace"))


def child_setup() -> None:
    """Own session and process group (no terminal hangup reaches it; a cancel reaches its jobs) and
    default SIGINT: a shell that starts `snakegate run &` ignores SIGINT, which Snakemake would inherit."""
    os.setsid()
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def send_signal(proc: subprocess.Popen, sig) -> None:
    try:
        os.kill(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def signal_group(proc: subprocess.Popen, sig: signal.Signals) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


CANCEL_GRACE_S = (20.0, 10.0)  # signal -> wait -> the signal again (jobs SIGKILLed) -> wait -> SIGKILL all


def escalate_later(proc: subprocess.Popen, signum) -> None:
    def escalate():
        for step, wait in enumerate(CANCEL_GRACE_S):
            try:
                proc.wait(timeout=wait)
                return
            except subprocess.TimeoutExpired:
                if step == 0:
                    send_signal(proc, signum)
                else:
                    signal_group(proc, signal.SIGKILL)

    threading.Thread(target=escalate, daemon=True).start()


def cancel_when_set(cancel: threading.Event, proc: subprocess.Popen, stop: Callable[[], None]) -> None:
    """Watch `cancel` while Snakemake runs; once set, stop the run exactly as a SIGINT to the front end would."""
    def watch():
        while proc.poll() is None:
            if cancel.wait(0.2):
                stop()
                return

    threading.Thread(target=watch, name="snakegate-cancel-watch", daemon=True).start()


def in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()
