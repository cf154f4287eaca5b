"""Hash when written, check when read: every job's outputs are hashed when the job ends, and every file a
job is about to read from the run folder is hashed and compared with what its producer (or the staging)
recorded, before the job runs.

`install()` wraps the run function of each of the workflow's rules (the function Snakemake calls for a
job, in whatever process runs it: a thread of the head, a spawned process, a cluster node), so it
needs no executor of its own and no change to the workflow:

- before the job: each input inside the run folder must hash to its record — a staged input to
  inputs.json (snakegate.run.stage), an intermediate to the record its producing job wrote. A file
  with no record, or other bytes, stops the job with a message naming the file, the producer and both
  hashes (and the job's own stderr file says it too, where the run's record reads a failure from).
- after the job: each output and log (a folder as the sorted list of its files' hashes) is hashed and recorded
  in `runs/<run_id>/hashes/<sha1 of its path>.json` as {path, sha256, size, job}: the job's own record,
  written atomically, one small file per output so that a cluster job needs no shared lock.
- around the job: what the job is (`runs/<run_id>/jobio/<sha1 of rule and wildcards>.json`: its rule,
  wildcards, named inputs, outputs and logs, and its own start, written before the job runs, then its end
  and whether it raised), so its PROV record names each file's role exactly and a job a cancel or a kill
  stopped still has its start to the microsecond (Snakemake's log prints whole seconds). Paths only, never
  params: a sensitive value never reaches these records.

`final_check()` hashes every recorded output and staged input again when the run ends: a file changed
after its last reader is a failed run too. A change racing a job's own read within the moment between
the check and the read is caught here only if it stays; docs/design.md's threat model says so.
Reads and hashes files; writes only under runs/<run_id>/hashes/ and jobio/, and the job's stderr file.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import time
from pathlib import Path

from snakegate.provenance import known
from snakegate.provenance.runstore import HASHES_DIR, jobio_record_path, output_record_path as record_path, \
    read_output_record as read_record

_TIMESTAMP = ".snakemake_timestamp"  # Snakemake marks a directory() output with it after the job
_EMPTY = hashlib.sha256(b"").hexdigest()
_BLOCK = 1 << 20


try:  # inside Snakemake (always, when a job runs): its own error type, which it prints as a message
    from snakemake.exceptions import WorkflowError as _JobError
except ImportError:  # pragma: no cover - the module is only used inside Snakemake
    _JobError = Exception


class GuardRefused(_JobError):
    """A job's input is not what its producer (or the staging) recorded; the message says which and why."""


def write_record(run_dir: Path, rel: str, digest: str, size: int, job: str) -> None:
    path = record_path(run_dir, rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{os.urandom(4).hex()}")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump({"path": rel, "sha256": digest, "size": size, "job": job}, fh, sort_keys=True)
    os.replace(tmp, path)


def digest(path: Path) -> tuple[str, int] | None:
    """(sha256, size) of a regular file, or of a folder as the sorted (name, sha256) list of its files;
    None for anything else (missing, a FIFO, a socket: never opened, so never blocks)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        # as hashing.folder_hash hashes a folder (so a staged folder input compares with its gated hash),
        # without the timestamp Snakemake adds to a directory() output after its job
        from snakegate.provenance.hashing import canonical_json, folder_files, sha256_file, sha256_text

        folder = Path(path)
        try:
            files = [p for p in folder_files(folder) if not (p.name == _TIMESTAMP and p.parent == folder)]
            entries = [[p.relative_to(folder).as_posix(), sha256_file(p, use_cache=False)] for p in files]
            size = sum(p.stat().st_size for p in files)
        except OSError:
            return None
        return sha256_text(canonical_json(entries)), size
    if not stat.S_ISREG(st.st_mode):
        return None
    h, size = hashlib.sha256(), 0
    try:
        with open(path, "rb") as fh:
            while block := fh.read(_BLOCK):
                h.update(block)
                size += len(block)
    except OSError:
        return None
    return h.hexdigest(), size


def _digest_known(path: Path) -> tuple[str, int] | None:
    """digest(), or the digest this process already has for the file while it is untouched since
    (snakegate.provenance.known): a staged input read by many jobs is hashed once, at staging."""
    found = known.recall(path)
    if found is not None:
        return found
    try:
        before = os.stat(path)
    except OSError:
        return None
    got = digest(path)
    if got is not None:
        try:
            known.remember(before, os.stat(path), *got)
        except OSError:
            pass
    return got


def _inside(path: str, run_dir: str) -> str | None:
    """`path` (as the job names it) relative to the run folder when it lies inside it, else None."""
    full = os.path.normpath(os.path.abspath(path))
    if full.startswith(run_dir + os.sep):
        return full[len(run_dir) + 1:]
    real = os.path.realpath(path)  # a shadow directory links its inputs from the run folder
    if real.startswith(run_dir + os.sep):
        return real[len(run_dir) + 1:]
    return None


def _files(namedlist) -> list[str]:
    out = []
    for item in namedlist or ():
        if isinstance(item, (list, tuple)):
            out.extend(str(x) for x in item)
        else:
            out.append(str(item))
    return out


def _named(namedlist, run_dir: str) -> dict[str, list[str]]:
    """{IO name: [paths]} of a job's named inputs, outputs or logs; a path inside the run folder relative to
    it, any other as Snakemake gives it. Unnamed items are left out (the record then falls back on guessing)."""
    out = {}
    try:
        items = list(namedlist.items()) if namedlist is not None else []
    except (AttributeError, TypeError):
        return out
    for name, value in items:
        paths = [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]
        out[str(name)] = [_inside(p, run_dir) or p for p in paths]
    return out


def _wildcards(wildcards) -> dict[str, str]:
    try:
        return {str(k): str(v) for k, v in dict(wildcards.items()).items()} if wildcards is not None else {}
    except (AttributeError, TypeError):
        return {}


def job_label(rule: str, wildcards, rule_prefix: str) -> str:
    name = rule[len(rule_prefix):] if rule_prefix and rule.startswith(rule_prefix) else rule
    try:
        pairs = dict(wildcards.items()) if wildcards is not None else {}
    except (AttributeError, TypeError):
        pairs = {}
    return name + (f" ({', '.join(f'{k}={v}' for k, v in sorted(pairs.items()))})" if pairs else "")


class Guard:
    """The checks of one run, shared by the jobs of one process."""

    def __init__(self, run_dir: Path, staged_entries: dict | None, rule_prefix: str = "wf_"):
        self.run_dir = os.path.normpath(os.path.abspath(run_dir))
        self.rule_prefix = rule_prefix
        # staged copy (relative to the run folder) -> (sha256, input key)
        self.staged = {e["path"]: (e["sha256"], key) for key, e in sorted((staged_entries or {}).items())
                       if isinstance(e, dict) and isinstance(e.get("path"), str)}

    def expected(self, rel: str) -> tuple[str | None, str]:
        """(recorded sha256, who recorded it) for a file of the run folder; (None, why) without a record."""
        if rel in self.staged:
            digest_, key = self.staged[rel]
            return digest_, f"the staging of {key}"
        if rel.split("/", 1)[0] == "workflow":
            return "", "the run's workflow copy"  # pinned by its content hash, checked by the job gate
        record = read_record(Path(self.run_dir), rel)
        if record is None:
            return None, "no job of this run"
        return record.get("sha256"), f"job {record.get('job')}"

    def check_inputs(self, inputs, job: str) -> None:
        problems = []
        for path in _files(inputs):
            rel = _inside(path, self.run_dir)
            if rel is None:
                continue
            want, producer = self.expected(rel)
            if want == "":
                continue
            have = _digest_known(Path(self.run_dir) / rel)
            if want is None:
                problems.append(f"{rel} has no record in this run (no job of the run made it, or its record "
                                "is gone)")
            elif have is None:
                problems.append(f"{rel}, made by {producer}, is gone or not a regular file")
            elif have[0] != want:
                problems.append(f"{rel} was changed after {producer} wrote it (recorded sha256 {want[:12]}…, now "
                                f"{have[0][:12]}…)")
        if problems:
            raise GuardRefused(f"snakegate refused to run job {job}: its input "
                               + "; ".join(problems) + ". The run's files are checked before each job reads them")

    def record_outputs(self, outputs, job: str) -> None:
        for item in outputs or ():
            path = str(item)
            rel = _inside(path, self.run_dir)
            if rel is None:
                continue
            got = _digest_known(Path(self.run_dir) / rel)
            if got is None and _flagged(item, "touch"):
                got = (_EMPTY, 0)  # Snakemake makes the empty file once the job is done
            if got is not None:
                write_record(Path(self.run_dir), rel, got[0], got[1], job)

    def record_job(self, rule_name: str, wildcards, input, output, log) -> dict:
        """Write the job's IO record (see the module doc) with its start; returns it for `end_job`."""
        rule = rule_name[len(self.rule_prefix):] if self.rule_prefix and rule_name.startswith(self.rule_prefix) \
            else rule_name
        record = {"rule": rule, "wildcards": _wildcards(wildcards), "input": _named(input, self.run_dir),
                  "output": _named(output, self.run_dir), "log": _named(log, self.run_dir),
                  "start": time.time(), "end": None, "ok": None}
        self._write_job(record)
        return record

    def end_job(self, record: dict, ok: bool) -> None:
        self._write_job({**record, "end": time.time(), "ok": ok})

    def _write_job(self, record: dict) -> None:
        path = jobio_record_path(self.run_dir, record["rule"], record["wildcards"])
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{os.urandom(4).hex()}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(record, fh, sort_keys=True)
            os.replace(tmp, path)
        except OSError:  # a record that cannot be written leaves the job to Snakemake's own record
            try:
                os.unlink(tmp)
            except OSError:
                pass

    def wrap(self, func, rule_name: str):
        guard = self

        # Snakemake calls it as run(input, output, params, wildcards, threads, resources, log, rule, ...)
        def guarded(input, output, params, wildcards, threads, resources, log, *rest, **kwargs):
            job = job_label(rule_name, wildcards, guard.rule_prefix)
            io = guard.record_job(rule_name, wildcards, input, output, log)
            try:
                guard.check_inputs(input, job)
            except GuardRefused as refusal:
                guard._say(rule_name, wildcards, str(refusal))
                guard.end_job(io, False)
                raise
            try:
                result = func(input, output, params, wildcards, threads, resources, log, *rest, **kwargs)
            except BaseException:
                guard.end_job(io, False)  # a failure, or the signal of a cancel: its end, to the microsecond
                raise
            guard.record_outputs(output, job)
            guard.record_outputs(log, job)  # a log the job rewrote must not keep a reused copy's record
            guard.end_job(io, True)
            return result

        guarded.__name__ = getattr(func, "__name__", "guarded")
        guarded.__wrapped__ = func
        guarded.snakegate_guard = True
        return guarded

    def _say(self, rule: str, wildcards, message: str) -> None:
        """The refusal on the process's stderr and in the job's stderr file, where run.json's failure reads it."""
        print(message, file=sys.stderr, flush=True)
        try:
            from snakegate.provenance.runstore import job_stderr_path

            pairs = dict(wildcards.items()) if wildcards is not None else {}
            path = job_stderr_path(Path(self.run_dir), rule, pairs, self.rule_prefix)
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(message + "\n")
        except Exception:  # noqa: BLE001 - the refusal itself stands
            pass


def _flagged(item, flag: str) -> bool:
    flags = getattr(item, "flags", None)
    return isinstance(flags, dict) and flag in flags


def install(workflow, run_dir: Path, staged_entries: dict | None, rule_prefix: str = "wf_") -> Guard:
    """Wrap the run function of every rule of the included workflow (idempotent)."""
    guard = Guard(run_dir, staged_entries, rule_prefix)
    for rule in workflow.rules:
        func = getattr(rule, "run_func", None)
        if func is None or not rule.name.startswith(rule_prefix) or getattr(func, "snakegate_guard", False):
            continue
        rule.run_func = guard.wrap(func, rule.name)
    return guard


def final_check(run_dir: Path) -> list[dict]:
    """Every output a job recorded, hashed again: one entry per file whose bytes are no longer the recorded
    ones {path, job, recorded_sha256, current_sha256}. A recorded file that is gone is left to the
    declared-outputs check (Snakemake deletes temp() files once read)."""
    changed = []
    folder = Path(run_dir) / HASHES_DIR
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return changed
    for name in names:
        if not name.endswith(".json") or name.startswith("."):
            continue
        try:
            with open(folder / name, encoding="utf-8") as fh:
                record = json.load(fh)
        except (OSError, ValueError):
            changed.append({"path": f"{HASHES_DIR}/{name}", "job": None, "recorded_sha256": None,
                            "current_sha256": None, "reason": "a job's record of its outputs is damaged"})
            continue
        rel = record.get("path") if isinstance(record, dict) else None
        if not isinstance(rel, str) or record_path(run_dir, rel).name != name:
            changed.append({"path": f"{HASHES_DIR}/{name}", "job": None, "recorded_sha256": None,
                            "current_sha256": None, "reason": "a job's record of its outputs is damaged"})
            continue
        target = Path(run_dir) / rel
        if not os.path.lexists(target):
            continue
        have = digest(target)
        if have is None or have[0] != record.get("sha256"):
            changed.append({"path": rel, "job": record.get("job"), "recorded_sha256": record.get("sha256"),
                            "current_sha256": have[0] if have else None,
                            "reason": f"was changed after job {record.get('job')} wrote it"})
    return changed


def changed_text(changed: list[dict]) -> str:
    parts = [f"{c['path']} {c['reason']} (recorded sha256 {str(c.get('recorded_sha256'))[:12]}…, now "
             f"{(c.get('current_sha256') or 'unreadable')[:12]})" for c in changed]
    return "output_changed: a file of the run changed after the job that made it: " + "; ".join(parts)
