"""Stopping a run inside Snakemake: SIGTERM and SIGINT become a clean cancel that is recorded with the signal.

Installed by the top-level Snakefile's onstart handler (through entry.py), so
it works the same under `snakegate run` and plain `snakemake`. On the first
signal it notes the signal's name and the jobs that were running, sends SIGTERM
to every process below Snakemake (the jobs' shells and what they started; a
survivor gets SIGKILL after a grace period), cancels the run's jobs in a Slurm
queue (cluster.cancel_queued_jobs), and raises KeyboardInterrupt, which
Snakemake's scheduler answers by cancelling and then calling onerror: the
handler finds the cancel here and records `cancelled`. A second signal kills
the remaining jobs at once.

Snakemake on its own lets running jobs finish after SIGTERM ("graceful"),
which can take hours; here SIGTERM stops them like Ctrl-C, because whoever
sends it (a user, `timeout`, a batch system) follows it with SIGKILL. Never
signals anything but this process's own descendants and its own cluster jobs.
"""

from __future__ import annotations

import signal
import threading

KILL_AFTER_S = 10.0


class CancelWatch:
    """Signal handlers for one Snakemake run; `signal` and `running_jobs` say what happened."""

    def __init__(self, workflow=None, rule_prefix: str = ""):
        self.workflow = workflow
        self.rule_prefix = rule_prefix
        self.signal: str | None = None
        self.running_jobs: list[str] = []
        self.armed = False  # raise into the scheduler only while jobs run, never inside a handler

    def install(self) -> "CancelWatch":
        if threading.current_thread() is not threading.main_thread():
            return self
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._handle)
        self.armed = True
        return self

    def disarm(self) -> None:
        self.armed = False

    def _handle(self, signum, _frame) -> None:
        if self.signal is not None:
            _signal_descendants(signal.SIGKILL)
            return
        self.signal = signal.Signals(signum).name
        self.running_jobs = running_rules(self.workflow, self.rule_prefix)
        procs = _signal_descendants(signal.SIGTERM)
        if procs:
            threading.Thread(target=_kill_survivors, args=(procs,), daemon=True).start()
        if self.armed:
            from snakegate.run.cluster import cancel_queued_jobs

            cancel_queued_jobs(self.workflow)
            raise KeyboardInterrupt


def running_rules(workflow, rule_prefix: str = "") -> list[str]:
    """The rules of the jobs Snakemake's scheduler is running now, one entry per job, sorted."""
    scheduler = getattr(workflow, "scheduler", None)
    running = getattr(scheduler, "running", None)
    if not running:
        return []
    names = []
    for job in list(running):
        for single in (getattr(job, "jobs", None) or [job]):  # a group job runs several
            name = getattr(getattr(single, "rule", None), "name", None)
            if name and name != "snakegate_all":
                names.append(name[len(rule_prefix):] if rule_prefix and name.startswith(rule_prefix) else name)
    return sorted(names)


def _signal_descendants(sig) -> list:
    import psutil

    try:
        procs = psutil.Process().children(recursive=True)
    except psutil.Error:
        return []
    for proc in procs:
        try:
            proc.send_signal(sig)
        except psutil.Error:
            pass
    return procs


def _kill_survivors(procs) -> None:
    import psutil

    _, alive = psutil.wait_procs(procs, timeout=KILL_AFTER_S)
    for proc in alive:
        try:
            proc.kill()
        except psutil.Error:
            pass
