"""Where a run executes: the head's executor and profile (run.json `execution`), and each job's own record.

- `execution_facts(workflow)`: on the head, when the first job is about to start
  (onstart): the executor plugin Snakemake runs the jobs with, and the profile it
  was started with (`--profile`, or $SNAKEMAKE_PROFILE, found as Snakemake finds
  it) with the sha256 of its config file. The run's PROV activity carries them
  (provenance/jobfacts.py).
- `default_partition()`: on the head, at parse time: an unset $SNAKEGATE_SLURM_PARTITION (the shipped
  Slurm profile's partition) means the cluster's default partition.
- `job_started(...)`: in a job, at parse time: the job's record of itself
  (scheduler job id, node, start, and its end at exit; provenance/jobfacts.py).
- `cancel_queued_jobs(workflow)`: on the head, on a stop signal (signals.py): every job of
  this run still in the Slurm queue is cancelled by the name the plugin gave them all
  (`slurm_job_name`, which run.json `execution` records).

Reads the process's arguments and environment; writes only the job's record and that one variable;
cancels only the jobs this run submitted.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

PROFILE_ENV = "SNAKEMAKE_PROFILE"
# profiles/slurm takes the partition from here; unset means the cluster's default partition
PARTITION_ENV = "SNAKEGATE_SLURM_PARTITION"


def default_partition() -> None:
    """Make an unset $SNAKEGATE_SLURM_PARTITION empty. Snakemake expands `$VAR` in a profile's
    default-resources and leaves an unset one as its own name, which sbatch would take for a partition;
    empty, the Slurm executor submits to the cluster's default partition. Jobs inherit it."""
    os.environ.setdefault(PARTITION_ENV, "")


SCANCEL_TIMEOUT_S = 10.0  # inside the front end's 20 s grace (run/process.py CANCEL_GRACE_S)


def _slurm_executor(workflow):
    """The head's Slurm executor, or None under any other executor, the jobstep plugin a cluster job runs
    under included (its package name starts the same)."""
    executor = getattr(getattr(workflow, "scheduler", None), "_executor", None)
    if executor is None or type(executor).__module__.split(".")[0] != "snakemake_executor_plugin_slurm":
        return None
    return executor


def slurm_job_name(workflow) -> str | None:
    """On the head: the job name Snakemake's Slurm plugin gives every job of this run (its run id, a fresh UUID
    with the profile's job-name prefix), which `squeue --name` and `scancel --name` select them by; None off
    Slurm."""
    return _job_name(_slurm_executor(workflow))


def _job_name(executor) -> str | None:
    name = getattr(executor, "run_uuid", None)
    return name if isinstance(name, str) and name else None


def cancel_queued_jobs(workflow) -> None:
    """`scancel` every job this run submitted to Slurm, by the job name the Slurm plugin gives all of them
    (slurm_job_name) and this user's id.

    Snakemake's own cancel is not enough: its remote executor takes every job off its list of active jobs
    while it asks Slurm for their states and cancels only the jobs on that list, so a Ctrl-C during a
    status check cancelled nothing and left the job running in the queue for its whole time limit
    (tests/run/test_slurm.py). Any other executor: nothing to do. Never raises: a cancel goes on."""
    executor = _slurm_executor(workflow)
    name = _job_name(executor)
    if name is None:
        return
    argv = ["scancel", f"--name={name}", f"--user={os.getuid()}"]
    if getattr(executor, "_submitted_job_clusters", None):
        argv.append("--clusters=all")  # as the plugin's own cancel does for a multi-cluster submission
    try:
        subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=SCANCEL_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        pass  # no scancel here, or the controller does not answer: Snakemake's own cancel still runs


def _profile_arg(argv: list[str]) -> str | None:
    for i, arg in enumerate(argv):
        if arg == "--profile" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--profile="):
            return arg.split("=", 1)[1]
    return None


def profile_file(argv: list[str] | None = None, environ=None) -> Path | None:
    """The profile config file Snakemake read (by its own lookup), or None without a profile."""
    environ = os.environ if environ is None else environ
    name = _profile_arg(list(sys.argv if argv is None else argv)) or environ.get(PROFILE_ENV)
    if not name or name == "none":
        return None
    try:
        from snakemake.cli import get_profile_dir

        found = get_profile_dir(name)
    except Exception:  # noqa: BLE001 - a record of the profile must never stop a run
        found = None
    return Path(found[1]).resolve() if found else None


def execution_facts(workflow, root: Path) -> dict:
    """{executor, profile, profile_sha256} for run.json `execution` (the profile registry-relative when inside),
    and on Slurm `slurm_job_name`, the name every job of the run has in the queue."""
    plugin = getattr(workflow, "executor_plugin", None)
    executor = getattr(plugin, "name", None) or "local"
    facts: dict = {"executor": executor, "profile": None, "profile_sha256": None}
    name = slurm_job_name(workflow)
    if name is not None:  # what a run killed whole left in the queue is found (and cancelled) by it
        facts["slurm_job_name"] = name
    path = profile_file()
    if path is not None:
        try:
            facts["profile_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            pass
        try:
            facts["profile"] = path.relative_to(Path(root).resolve()).as_posix()
        except ValueError:
            facts["profile"] = str(path)
    return facts


def job_started(run_dir: Path, workflow, gate_seconds: tuple[float, float] | None, record_hostname: bool = True):
    """Write this job's record of itself (provenance/jobfacts.py); its end is written at exit.
    `gate_seconds`: snakegate's own (wall, CPU) seconds in this job so far."""
    from snakegate.provenance.jobfacts import JobRecord

    mode = getattr(getattr(workflow, "exec_mode", None), "name", "REMOTE").lower()
    return JobRecord(run_dir, sys.argv, mode, record_hostname=record_hostname, gate_seconds=gate_seconds).start()
