"""A run's pulse: while Snakemake's head process lives, it touches runs/<id>/.heartbeat every few seconds.

A run killed whole (SIGKILL, a node that went down) writes nothing when it dies, and a job that prints
nothing leaves no later trace than its start: the last log line can come long before the kill. The
heartbeat bounds the moment of death from above: the process was alive at the file's last mtime and would
have touched it again within `PERIOD_S`, so `died_by()` (last beat + one period, never after the moment
the run was found dead) is not before the kill, and at most a period after it. stale.py records it as the
interrupted run's end.

A daemon thread of the head process, started by the top-level Snakefile's onstart handler (entry.py) and
stopped when the run's end is recorded; it only ever changes that one empty file's mtime.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from snakegate.provenance.runstore import HEARTBEAT_FILE

PERIOD_S = 2.0


class Heartbeat:
    def __init__(self, run_dir: Path, period_s: float = PERIOD_S):
        self.path = Path(run_dir) / HEARTBEAT_FILE
        self.period_s = period_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> "Heartbeat":
        try:
            self.path.touch()
        except OSError:
            return self  # no pulse: a killed run's end falls back on its last sign of life
        self._thread = threading.Thread(target=self._beat, name="snakegate-heartbeat", daemon=True)
        self._thread.start()
        return self

    def _beat(self) -> None:
        while not self._stop.wait(self.period_s):
            try:
                os.utime(self.path)
            except OSError:
                return  # the run folder is gone or read-only: nothing to keep alive

    def stop(self) -> None:
        self._stop.set()


def died_by(run_dir: Path, found_dead_at: float, period_s: float = PERIOD_S) -> float | None:
    """The latest moment the run's head can have died (epoch seconds), or None without a heartbeat file."""
    try:
        last = os.stat(Path(run_dir) / HEARTBEAT_FILE).st_mtime
    except OSError:
        return None
    return min(last + period_s, max(found_dead_at, last))
