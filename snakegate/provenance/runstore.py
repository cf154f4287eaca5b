"""The run store: `runs/<run_id>/` folders are the source of truth; nothing else is.

A run folder holds config.yaml (what Snakemake got), invocation.json (the
canonical invocation), run.json (status, timings, progress, failure), the
workflow's outputs and logs, snakemake.log, and the PROV files. Every write is
write, fsync, rename, fsync of the folder, so a crash or a full disk leaves the
previous complete version, never a truncated one; run.json's `stage` says how
far the run got. A small reserve file set aside when a run starts is given up
to let the final record be written on a full disk. A run folder is locked
(flock) while something executes in it.

Reading never raises for a damaged record and never reads one unbounded:
record files are read only when they are regular files (a symlink, a FIFO or
a device named run.json is refused without waiting on it) and only up to
`MAX_RECORD_BYTES`; `load_run` says what is wrong with a record (unreadable,
not JSON, a field of the wrong kind such as `started: "yesterday"`), so one
bad folder never hides or crashes the others. Nothing here starts processes.

The bounded reads are in boundedread.py, the durable writes and the reserve in durable.py, the
lock in runlock.py; their names are importable from here.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import uuid
from pathlib import Path
from typing import Any

# the bounded reads, the durable writes and the lock live in their own modules; their names stay importable
# from here, where the rest of snakegate reads and writes run records
from snakegate.provenance.boundedread import (MAX_RECORD_BYTES, RecordUnreadable, glance_problem,  # noqa: F401
                                              json_object, json_problem, read_head, read_json, read_record,
                                              read_tail)
from snakegate.provenance.durable import (RESERVE_BYTES, RESERVE_FILE, RecordWriteError, copy_atomic,  # noqa: F401
                                          drop_reserve, make_reserve, write_json_atomic, write_text_atomic)
from snakegate.provenance.runlock import LOCK_FILE, RunBusy, RunLock, lock_holder, lock_is_held  # noqa: F401

RUN_JSON = "run.json"
CONFIG_YAML = "config.yaml"
CONFIG_MODE = 0o600  # config.yaml holds x-sensitive values in plain text: owner only
INVOCATION_JSON = "invocation.json"
SNAKEMAKE_LOG = "snakemake.log"
ORIGIN_JSON = "origin.json"
STDERR_DIR = "stderr"  # each job's stderr, one file per job (see snakegate/run/jobstderr.py)
CLUSTER_LOGS_DIR = "cluster-logs"  # a cluster executor's logs of failed jobs, copied in
CONSOLE_LOG = "console.log"  # everything Snakemake printed, written by Snakemake itself under `snakegate run`
PROV_JSON = "prov.json"
INPUTS_DIR = "inputs"  # the run's staged copies of its gated inputs (snakegate/run/stage.py)
INPUTS_JSON = "inputs.json"  # what was staged where, with the staged bytes' sha256
HASHES_DIR = "hashes"  # each job output's sha256, recorded when its job ended (snakegate/run/guard.py)
JOBIO_DIR = "jobio"  # each job's named inputs, outputs and logs and its own start and end, as the guard saw them
SOURCE_JSON = "source.json"  # where the workflow copy came from: its git commit and tree (snakegate/run/pinning.py)
SEAL_JSON = "seal.json"  # the sha256 of every file of the finished run (snakegate/provenance/seal.py)
HEARTBEAT_FILE = ".heartbeat"  # touched while Snakemake's head lives (snakegate/run/heartbeat.py)
DAMAGED_SUFFIX = ".damaged"
# Set by `snakegate run` for its Snakemake child, which runs under the lock it inherits.
LOCK_HELD_ENV = "SNAKEGATE_RUN_LOCK_HELD"

STATUSES = ("running", "succeeded", "failed", "cancelled", "interrupted", "incomplete")
UNREADABLE = "unreadable"  # listed for a folder whose run.json or prov.json cannot be read
RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # as snakegate/schemas/invocation.schema.json


class RunNotFound(Exception):
    pass


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_time(text: Any) -> _dt.datetime | None:
    """An ISO 8601 time as recorded (UTC, `Z`), as an aware datetime; None for anything else (never raises)."""
    if not isinstance(text, str) or not text:
        return None
    try:
        when = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=_dt.timezone.utc)


def is_safe_run_id(run_id: str) -> bool:
    """A run id that names one folder directly under runs/ (no `..`, no `/`)."""
    return bool(RUN_ID_PATTERN.fullmatch(run_id)) and set(run_id) != {"."}


def output_record_path(run_dir: Path | str, rel: str) -> Path:
    """Where the record of the job output at `rel` (relative to the run folder) is kept: hashes/<sha1>.json."""
    return Path(run_dir) / HASHES_DIR / (hashlib.sha1(rel.encode("utf-8")).hexdigest() + ".json")


def read_output_record(run_dir: Path | str, rel: str) -> dict | None:
    """{path, sha256, size, job} as the job that made `rel` recorded it, or None."""
    data = read_json(output_record_path(run_dir, rel))
    return data if data.get("path") == rel else None


def jobio_record_path(run_dir: Path | str, rule: str, wildcards: dict | None) -> Path:
    """Where the guard keeps what it saw of one job (runs/<id>/jobio/<sha1 of rule and wildcards>.json)."""
    key = json.dumps([rule, sorted((str(k), str(v)) for k, v in (wildcards or {}).items())])
    return Path(run_dir) / JOBIO_DIR / (hashlib.sha1(key.encode("utf-8")).hexdigest() + ".json")


def job_stderr_path(run_dir: Path | str, rule: str, wildcards: dict | None, rule_prefix: str = "") -> Path:
    """Where a job's stderr is kept: runs/<run_id>/stderr/<rule>.log, or <rule>/<k=v,...>.log with wildcards."""
    if rule_prefix and rule.startswith(rule_prefix):
        rule = rule[len(rule_prefix):]
    base = Path(run_dir) / STDERR_DIR
    if not wildcards:
        return base / f"{_safe_name(rule)}.log"
    name = _safe_name(",".join(f"{k}={v}" for k, v in sorted((str(k), str(v)) for k, v in wildcards.items())))
    if len(name) > 200:  # stay well inside NAME_MAX with the suffix
        name = name[:150] + "-" + hashlib.sha256(name.encode()).hexdigest()[:16]
    return base / _safe_name(rule) / f"{name}.log"


def _safe_name(text: str) -> str:
    text = text.replace("%", "%25").replace("/", "%2F").replace("\0", "")
    return "%2E" + text[1:] if text.startswith(".") else text


def new_run_id(invocation_id: str, now: _dt.datetime | None = None) -> str:
    """UTC timestamp + the first 8 hex of the invocation id: sortable and traceable to the invocation."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    return f"{now.strftime('%Y%m%dT%H%M%SZ')}-{invocation_id[:8]}"


# What the views read from run.json, by the kind of value snakegate writes there (null is always allowed). A record
# holding anything else was not written by snakegate as it stands: it is listed as damaged, never shown or summed.
_TEXT = ("run_id", "run_uuid", "workflow", "version", "status", "stage", "invocation_id", "parent_run", "rerun_of",
         "parent_invocation_id", "error", "error_code", "source", "failed_rule", "cancelled_by", "workdir",
         "snakemake_log", "console_log", "provenance_error", "record_problem")
_TIMES = ("started", "ended", "interrupted_detected_at")
_NUMBERS = ("duration_s", "exit_code", "snakemake_pid", "jobs_finished")
_LISTS = ("running_jobs", "missing_outputs", "jobs_executed", "partial_outputs")
_OBJECT_LISTS = ("outputs", "input_changed")
_OBJECTS = ("failure", "origin", "progress", "fork_changes", "execution", "options", "refinement", "recovery_of")


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def record_problem(record: dict) -> str | None:
    """Why run.json's record cannot be shown as a run (a field of the wrong kind), or None when it can."""
    def wrong(key: str, kind: str) -> str:
        return f"{RUN_JSON} has `{key}`: {_shown(record[key])}, which is not {kind}"

    for key in _TEXT:
        if record.get(key) is not None and not isinstance(record[key], str):
            return wrong(key, "text")
    for key in _TIMES:
        if record.get(key) is not None and parse_time(record[key]) is None:
            return wrong(key, "a time (ISO 8601, e.g. 2026-11-24T14:00:00Z)")
    for key in _NUMBERS:
        value = record.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            return wrong(key, "a number")
    for key in _LISTS + _OBJECT_LISTS:
        value = record.get(key)
        if value is not None and (not isinstance(value, list)
                                  or (key in _OBJECT_LISTS and not all(isinstance(v, dict) for v in value))):
            return wrong(key, "a list of objects" if key in _OBJECT_LISTS else "a list")
    for key in _OBJECTS:
        if record.get(key) is not None and not isinstance(record[key], dict):
            return wrong(key, "an object")
    logs = record.get("failed_log")
    if logs is not None and not isinstance(logs, str) and not (isinstance(logs, list)
                                                                and all(isinstance(x, str) for x in logs)):
        return wrong("failed_log", "a path or a list of paths")
    if record.get("status") is not None and record["status"] not in STATUSES:
        return wrong("status", f"a run status ({', '.join(STATUSES)})")
    if record.get("run_id") is not None and not is_safe_run_id(record["run_id"]):
        return wrong("run_id", "a run id (letters, digits, `.`, `_`, `-`)")
    return None


def read_run(run_dir: Path) -> dict:
    """run.json's record; {} when it cannot be read or is damaged (`load_run` says why)."""
    record, problem = json_object(Path(run_dir) / RUN_JSON)
    return record if record is not None and record_problem(record) is None else {}


def load_run(run_dir: Path, whole: bool = True) -> tuple[dict, str | None]:
    """(run.json's record, None), or ({}, why run.json cannot be shown), or (record, why another record file of the
    run — prov.json, invocation.json — cannot be read). A missing run.json is a problem too. `whole=False` (for
    listings) only glances at prov.json and invocation.json (glance_problem) instead of parsing them."""
    run_dir = Path(run_dir)
    record, problem = json_object(run_dir / RUN_JSON)
    if record is None:
        return {}, problem or f"{RUN_JSON} is missing"
    problem = record_problem(record)
    if problem:
        return {}, problem
    other = json_problem if whole else glance_problem
    return record, other(run_dir / PROV_JSON) or other(run_dir / INVOCATION_JSON)


def update_run(run_dir: Path, **fields: Any) -> dict:
    """Merge `fields` into run.json (read, merge, write-rename). Returns the new record.

    A damaged run.json is kept beside it (run.json.damaged), never silently dropped."""
    path = Path(run_dir) / RUN_JSON
    if path.exists() and json_problem(path):
        try:
            os.replace(path, path.with_name(RUN_JSON + DAMAGED_SUFFIX))
        except OSError:
            pass
    record = read_json(path)
    record.update(fields)
    # the run's globally unique identity (its PROV IRI, provenance/capture.py), minted when its record is first
    # written: a run id names a folder, and two clones can make the same one
    record.setdefault("run_uuid", str(uuid.uuid4()))
    write_json_atomic(path, record)
    return record


def run_folders(runs_dir: Path) -> list[Path]:
    runs_dir = Path(runs_dir)
    if not runs_dir.is_dir():
        return []
    return sorted(p for p in runs_dir.iterdir() if p.is_dir() and not p.name.startswith("."))


def list_runs(runs_dir: Path) -> list[dict]:
    """Every run record, by folder name; a folder whose record cannot be read is listed as
    `unreadable` with the reason, never dropped and never a crash."""
    out = []
    for folder in run_folders(runs_dir):
        record, problem = load_run(folder, whole=False)
        if problem:
            record = {**record, "status": UNREADABLE, "unreadable": problem}
        record["run_id"] = record.get("run_id") or folder.name
        record.setdefault("status", "unknown")
        out.append(record)
    return out


def find_run(runs_dir: Path, ref: str) -> Path:
    """A run folder by exact id, unique prefix, a path, or 'latest'."""
    runs_dir = Path(runs_dir)
    as_path = Path(ref)
    if as_path.is_dir() and (as_path / RUN_JSON).exists():
        return as_path.resolve()
    if not runs_dir.is_dir():
        raise RunNotFound(f"no runs yet: {runs_dir} does not exist")
    names = sorted(p.name for p in runs_dir.iterdir() if p.is_dir() and not p.name.startswith("."))
    if ref == "latest":
        if not names:
            raise RunNotFound(f"no runs in {runs_dir}")
        # by start time: run ids made by hand (plain snakemake) do not sort by time
        return runs_dir / max(names, key=lambda n: (str(read_run(runs_dir / n).get("started") or ""), n))
    if ref in names:
        return runs_dir / ref
    matches = [n for n in names if n.startswith(ref) or n.endswith(ref)]
    if len(matches) == 1:
        return runs_dir / matches[0]
    if not matches:
        raise RunNotFound(f"no run `{ref}` in {runs_dir}; `snakegate runs` lists them")
    raise RunNotFound(f"`{ref}` matches {len(matches)} runs ({', '.join(matches[:5])}…); give more of the id")


def duration_s(record: dict) -> float | None:
    """Seconds from `started` to `ended`; None when either is missing or not a time."""
    start, end = parse_time(record.get("started")), parse_time(record.get("ended"))
    if start and end:
        return round((end - start).total_seconds(), 3)
    return None
