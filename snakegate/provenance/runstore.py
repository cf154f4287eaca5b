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
"""

from __future__ import annotations

import datetime as _dt
import errno
import fcntl
import hashlib
import json
import os
import re
import stat
import uuid
from pathlib import Path
from typing import Any

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
LOCK_FILE = ".lock"
HEARTBEAT_FILE = ".heartbeat"  # touched while Snakemake's head lives (snakegate/run/heartbeat.py)
RESERVE_FILE = ".reserve"  # given up on a full disk so the final run.json can still be written
RESERVE_BYTES = 256 * 1024
DAMAGED_SUFFIX = ".damaged"
# Set by `snakegate run` for its Snakemake child, which runs under the lock it inherits.
LOCK_HELD_ENV = "SNAKEGATE_RUN_LOCK_HELD"

STATUSES = ("running", "succeeded", "failed", "cancelled", "interrupted", "incomplete")
UNREADABLE = "unreadable"  # listed for a folder whose run.json or prov.json cannot be read
RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # as snakegate/schemas/invocation.schema.json
MAX_RECORD_BYTES = 64 * 1024 * 1024  # a record file read for a view (run.json, prov.json, ...) is read up to this
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class RunBusy(Exception):
    def __init__(self, run_dir: Path, holder: str):
        super().__init__(f"run folder {run_dir} is busy: another process ({holder}) is executing it")
        self.run_dir = run_dir
        self.holder = holder


class RunNotFound(Exception):
    pass


class RecordUnreadable(Exception):
    """A file of a run folder that is not read: not a regular file, too big, or refused by the system."""


class RecordWriteError(OSError):
    """A run record file could not be written (full disk, read-only or vanished folder)."""

    def __init__(self, path: Path, cause: OSError):
        super().__init__(cause.errno, f"could not write {path}: {cause.strerror or cause}")
        self.path = Path(path)
        self.cause = cause

    def __str__(self) -> str:
        return self.strerror


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


# ---- reading, bounded ----------------------------------------------------------------------------
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


def _json_object(path: Path, what: str | None = None) -> tuple[dict | None, str | None]:
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
    data, _ = _json_object(path)
    return data or {}


def json_problem(path: Path, what: str | None = None) -> str | None:
    """Why `path` is not a readable JSON object, or None when it is (a missing file is None too)."""
    return _json_object(path, what)[1]


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
    record, problem = _json_object(Path(run_dir) / RUN_JSON)
    return record if record is not None and record_problem(record) is None else {}


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


def load_run(run_dir: Path, whole: bool = True) -> tuple[dict, str | None]:
    """(run.json's record, None), or ({}, why run.json cannot be shown), or (record, why another record file of the
    run — prov.json, invocation.json — cannot be read). A missing run.json is a problem too. `whole=False` (for
    listings) only glances at prov.json and invocation.json (glance_problem) instead of parsing them."""
    run_dir = Path(run_dir)
    record, problem = _json_object(run_dir / RUN_JSON)
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
