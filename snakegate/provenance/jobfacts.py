"""Facts a job knows about itself (scheduler job id, node, its own start and end), and the executor of a run.

On a cluster the head only sees a job from outside: Snakemake's metadata gives a
Slurm job the moment the head submitted it and the moment it noticed it had
ended. So each job records itself: when Snakemake, inside the job, re-reads the
top-level Snakefile, `JobRecord.start()` writes
`runs/<run_id>/jobs/<time>-<host>-<pid>.json` with the job's rule and
wildcards (from its `--target-jobs` argument), the scheduler's job id and the node
(Slurm's SLURM_JOB_ID and SLURMD_NODENAME), the process's mode and its start;
at the process's exit the same file gets its end. A Slurm job is two such
processes (the batch step hands the job to an `srun` step); the step that ran
the rule is the one the record keeps.

`attach()` (called by provenance.capture) puts them on the run's jobs: the
job's activity gets its own start and end, `sg:executor`, `sg:schedulerJobId`
and `sg:node`. A job without a record ran inside the head (a local run): its
times are Snakemake's, taken where it ran, and its node the head's host. What
the guard saw of each job (runs/<id>/jobio/, snakegate/run/guard.py: its named
inputs, outputs and logs, its start and end to the microsecond) names each
file's role, and gives a job Snakemake left no record of (one a cancel or a
kill stopped) its start and, when it saw one, its end.
`run_attributes()` gives the run's `sg:executor` and `sg:profile` from run.json
`execution`. Host and node names are left out when the registry's settings say
`record_hostname = false`.

Plain Python only (json, os, socket, time): the writing half runs inside every
cluster job. Reading never raises for a damaged record; it is skipped.
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import time
from pathlib import Path

JOBS_DIR = "jobs"


def job_of(argv: list[str]) -> tuple[str | None, dict]:
    """(rule, wildcards) of the one job a job process was started for (`--target-jobs rule:k=v,...` in its
    arguments, read with Snakemake's own parser); (None, {}) for a group of jobs or any other process."""
    if "--target-jobs" not in argv:
        return None, {}
    specs = []
    for arg in argv[argv.index("--target-jobs") + 1:]:
        if arg.startswith("--"):
            break
        specs.append(arg)
    if len(specs) != 1:
        return None, {}
    try:
        from snakemake.target_jobs import parse_target_jobs_cli_args

        spec = parse_target_jobs_cli_args(specs)[0]
    except Exception:  # noqa: BLE001 - an argument form this Snakemake does not write: no record
        return None, {}
    return spec.rulename, {str(k): str(v) for k, v in dict(spec.wildcards_dict).items()}


def _delegates(argv: list[str]) -> bool:
    """Does this process hand its job to another (Slurm's batch step runs the job in an `srun` step)?"""
    joined = " ".join(argv)
    return "--executor slurm-jobstep" in joined and "SLURM_STEP_ID" not in os.environ


class JobRecord:
    """The record one job process writes about itself (see the module docstring)."""

    def __init__(self, run_dir: Path, argv: list[str], mode: str, record_hostname: bool = True,
                 gate_seconds: tuple[float, float] | None = None, started: float | None = None):
        rule, wildcards = job_of(argv)
        host = socket.gethostname()
        self.data = {
            "rule": rule, "wildcards": wildcards, "mode": mode,
            "scheduler": "slurm" if os.environ.get("SLURM_JOB_ID") else None,
            "scheduler_job_id": os.environ.get("SLURM_JOB_ID"),
            "step": os.environ.get("SLURM_STEP_ID"),
            "node": (os.environ.get("SLURMD_NODENAME") or host) if record_hostname else None,
            "pid": os.getpid(), "delegates": _delegates(argv),
            "start": started if started is not None else time.time(), "end": None,
            # snakegate's own time in this job (imports, the job gate, resources, this record): wall and CPU
            "gate_seconds": round(gate_seconds[0], 6) if gate_seconds else None,
            "gate_cpu_seconds": round(gate_seconds[1], 6) if gate_seconds else None,
        }
        name = f"{int(self.data['start'] * 1000)}-{host if record_hostname else 'host'}-{os.getpid()}.json"
        self.path = Path(run_dir) / JOBS_DIR / name

    def start(self) -> "JobRecord":
        """Write the record now and its end at exit; a record that cannot be written is left out."""
        if self.data["rule"] is None:
            return self
        if self._write():
            atexit.register(self.finish)
        return self

    def finish(self) -> None:
        self.data["end"] = time.time()
        self._write()

    def _write(self) -> bool:
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(self.data, sort_keys=True), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:
            return False
        return True


# ---- reading (provenance.capture) -----------------------------------------------------------------


def _records_in(folder: Path):
    """The readable JSON objects with a `rule` in a folder's *.json files, in file-name order; a damaged one is
    skipped."""
    try:
        files = sorted(folder.glob("*.json"))
    except OSError:
        return
    for path in files:
        try:
            rec = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(rec, dict) and isinstance(rec.get("rule"), str):
            yield rec


def read_records(run_dir: Path) -> dict[tuple, dict]:
    """(rule, sorted wildcards) -> the record of the process that ran that job (the last attempt)."""
    best: dict[tuple, dict] = {}
    for rec in _records_in(Path(run_dir) / JOBS_DIR):
        key = (rec["rule"], tuple(sorted((rec.get("wildcards") or {}).items())))
        old = best.get(key)
        # the step that ran the rule over the batch step that handed it on; a later attempt over an earlier one
        if old is None or (old.get("delegates") and not rec.get("delegates")) or \
                (old.get("delegates") == rec.get("delegates") and (rec.get("start") or 0) >= (old.get("start") or 0)):
            best[key] = rec
    return best


def read_io(run_dir: Path) -> dict[tuple, dict]:
    """(rule, sorted wildcards) -> what the guard saw of that job (runs/<id>/jobio/, the last attempt)."""
    found: dict[tuple, dict] = {}
    # runstore.JOBIO_DIR (this module imports nothing of snakegate)
    for rec in _records_in(Path(run_dir) / "jobio"):
        if not isinstance(rec.get("wildcards") or {}, dict):
            continue
        found[(rec["rule"], tuple(sorted((str(k), str(v)) for k, v in (rec.get("wildcards") or {}).items())))] = rec
    return found


def _io_paths(rec: dict, run_dir: Path) -> dict:
    """{direction: {name: [absolute paths]}} of a jobio record (paths inside the run folder are relative to it)."""
    out = {}
    for direction in ("input", "output", "log"):
        named = rec.get(direction)
        if not isinstance(named, dict):
            continue
        out[direction] = {str(n): [p if os.path.isabs(p) else os.path.normpath(os.path.join(run_dir, p))
                                   for p in paths if isinstance(p, str)]
                          for n, paths in named.items() if isinstance(paths, list)}
    return out


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def executor_of(record: dict) -> str:
    execution = record.get("execution") if isinstance(record.get("execution"), dict) else {}
    options = record.get("options") if isinstance(record.get("options"), dict) else {}
    return execution.get("executor") or options.get("executor") or "local"


def run_attributes(record: dict) -> dict:
    """sg:executor and sg:profile of the run (run.json `execution`, else `options` of snakegate run)."""
    execution = record.get("execution") if isinstance(record.get("execution"), dict) else {}
    options = record.get("options") if isinstance(record.get("options"), dict) else {}
    return {"sg:executor": executor_of(record), "sg:profile": execution.get("profile") or options.get("profile"),
            "sg:profileSha256": execution.get("profile_sha256")}


def attach(jobs: list, run_dir: Path, record: dict, rule_prefix: str, record_hostname: bool = True) -> None:
    """Put each job's own facts on it (`Job.facts`, and its start and end when the job recorded them)."""
    records = read_records(run_dir)
    seen = read_io(run_dir)
    executor = executor_of(record)
    host = socket.gethostname() if record_hostname else None
    for job in jobs:
        wildcards = tuple(sorted((str(k), str(v)) for k, v in (job.wildcards or {}).items()))
        io = seen.get((job.rule, wildcards))
        if io is not None:
            job.io = _io_paths(io, Path(run_dir))
            start, end = _number(io.get("start")), _number(io.get("end"))
            if start is not None and (not job.has_record or job.start is None):
                job.start = start  # Snakemake's log has it to the second only
            if end is not None and (not job.has_record or job.end is None):
                job.end = end
        rec = records.get((rule_prefix + job.rule, tuple(sorted((job.wildcards or {}).items()))))
        facts = {"sg:executor": executor}
        if rec is None:
            if host and executor == "local":
                facts["sg:node"] = host
        else:
            if isinstance(rec.get("start"), (int, float)):
                job.start = rec["start"]
            if isinstance(rec.get("end"), (int, float)):
                job.end = rec["end"]
            if rec.get("scheduler_job_id"):
                facts["sg:schedulerJobId"] = str(rec["scheduler_job_id"])
            if rec.get("node") and record_hostname:
                facts["sg:node"] = str(rec["node"])
        job.facts.update(facts)
