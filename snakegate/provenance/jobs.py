"""Snakemake's own records of the jobs of one run: `.snakemake/metadata/` plus the job blocks of its log.

Snakemake writes one JSON record per output file (keyed by the urlsafe-base64
of the output path) when a job ends, failed jobs included: rule, input, log,
shellcmd, code, params, start and end time. It does not record wildcards or
the job's outputs as a group, so the log's job blocks ("rule X:" followed by
input/output/log/jobid/wildcards lines) supply those, and its "Error in rule"
blocks say which jobs failed. A job that started but left no record (a
cancelled run) is still reported, from its log block.

Only reads files; never writes. Paths are returned as Snakemake wrote them
(relative to the working directory, or absolute).
"""

from __future__ import annotations

import json
import os
import re
import time
from base64 import urlsafe_b64decode, urlsafe_b64encode
from dataclasses import dataclass, field
from pathlib import Path

from snakegate.provenance import snakemakelog

_TIMESTAMP = re.compile(r"^\[(\w{3} \w{3} +\d{1,2} \d{2}:\d{2}:\d{2} \d{4})\]\s*$")
_FIELD = re.compile(r"^\s+(input|output|log|jobid|wildcards):\s*(.*)$")


@dataclass(slots=True)
class Job:
    """One executed (or attempted) job of the run."""

    rule: str  # the workflow's rule name (module prefix removed)
    outputs: list[str]
    inputs: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    start: float | None = None  # epoch seconds
    end: float | None = None
    shellcmd: str | None = None
    code: str | None = None
    params: list[str] = field(default_factory=list)
    wildcards: dict[str, str] = field(default_factory=dict)
    status: str = "succeeded"  # succeeded | failed | incomplete (capture adds cancelled)
    error: str | None = None
    has_record: bool = True  # False when only the log knew about it
    # facts another source knows about this job (a scheduler's job id and node, job-side times):
    # vocabulary attribute name -> value, added to the job's PROV activity as they are
    facts: dict = field(default_factory=dict)
    # {"input"|"output"|"log": {IO name: [paths]}} as the guard saw the job (jobfacts.attach), else None
    io: dict | None = None


@dataclass(slots=True)
class LogJob:
    rule: str
    outputs: list[str] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    jobid: str | None = None
    wildcards: dict[str, str] = field(default_factory=dict)
    stamp: str | None = None  # the "[Mon Jan  1 00:00:00 2026]" text printed before the block

    @property
    def started(self) -> float | None:
        return _log_time(self.stamp) if self.stamp else None


@dataclass
class LogSummary:
    jobs: list[LogJob]
    finished: set[str]  # jobids reported finished
    failed: list[snakemakelog.FailedJob]
    failure_times: dict[str, float]  # jobid -> time of its "Error in rule" block
    planned: dict[str, int]  # rule -> job count from the "Job stats" table


def _split(value: str) -> list[str]:
    if "(check log" in value:
        value = value.replace("(check log file(s) for error details)", "")
    return [v for v in map(str.strip, value.split(", ")) if v]


def _wildcards(value: str) -> dict[str, str]:
    out = {}
    for part in value.split(", "):
        key, sep, val = part.partition("=")
        if sep:
            out[key.strip()] = val.strip()
    return out


def _log_time(text: str) -> float | None:
    """Snakemake prints local time to the second; read it in this machine's time zone."""
    try:
        return time.mktime(time.strptime(" ".join(text.split()), "%a %b %d %H:%M:%S %Y"))
    except ValueError:
        return None


# A job block: an optional "[time]" line, "(local)rule|checkpoint NAME:", then its indented field lines.
_BLOCK = re.compile(r"^(?:\[([^\]\n]+)\]\n)?(?:local)?(?:rule|checkpoint) (\S+?):[ \t]*\n((?:[ \t]+[^\n]*(?:\n|$))*)", re.MULTILINE)
_FINISHED_ALL = re.compile(r"^Finished jobid: (\d+)", re.MULTILINE)
_STATS = re.compile(r"^Job stats:\n(?:.*\n){2}((?:\S+[ \t]+\d+[ \t]*\n)*)", re.MULTILINE)


def read_log(text: str) -> LogSummary:
    """The job blocks, finished job ids, failures and planned job count of a Snakemake log."""
    # regular expressions over the whole text: a 10,000-job log has 100,000+ lines
    jobs: list[LogJob] = []
    add = jobs.append
    for stamp, rule, body in _BLOCK.findall(text):
        outputs, inputs, logs, jobid, wildcards = [], [], [], None, {}
        for line in body.splitlines():
            key, _, value = line.lstrip().partition(":")
            if key == "output":
                outputs = _split(value)
            elif key == "input":
                inputs = _split(value)
            elif key == "log":
                logs = _split(value)
            elif key == "jobid":
                jobid = value.strip()
            elif key == "wildcards":
                wildcards = _wildcards(value.strip())
        add(LogJob(rule, outputs, inputs, logs, jobid, wildcards, stamp.strip() or None))
    finished = set(_FINISHED_ALL.findall(text))
    planned: dict[str, int] = {}
    for m in _STATS.finditer(text):  # the last table wins (Snakemake prints one per scheduling pass)
        planned = {}
        for row in m.group(1).splitlines():
            parts = row.split()
            if len(parts) == 2 and parts[0] != "total":
                planned[parts[0]] = planned.get(parts[0], 0) + int(parts[1])
    failure_times: dict[str, float] = {}
    if "Error in rule " not in text:
        return LogSummary(jobs=jobs, finished=finished, failed=[], failure_times={}, planned=planned)
    failed = snakemakelog.failed_jobs(text)
    # the time printed just before each "Error in rule" block
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Error in rule "):
            stamp = next((_TIMESTAMP.match(l) for l in reversed(lines[max(0, i - 3):i]) if _TIMESTAMP.match(l)), None)
            jobid = next((f.group(2).strip() for f in map(_FIELD.match, lines[i + 1:i + 6]) if f and f.group(1) == "jobid"),
                         None)
            if stamp and jobid:
                t = _log_time(stamp.group(1))
                if t is not None:
                    failure_times[jobid] = t
    return LogSummary(jobs=jobs, finished=finished, failed=failed, failure_times=failure_times, planned=planned)


def record_path(metadata_dir: Path | str, key: str, max_len: int = 255) -> str:
    """Where Snakemake's file persistence keeps the record of output `key` (persistence/file.py)."""
    b64 = urlsafe_b64encode(key.encode()).decode()
    if len(b64) < max_len:
        return os.path.join(metadata_dir, b64)
    chunks = [b64[i:i + max_len - 1] for i in range(0, len(b64), max_len - 1)]
    return os.path.join(metadata_dir, *(["@" + c for c in chunks[:-1]] + [chunks[-1]]))


def record_files(metadata_dir: Path | str):
    """(output key, record file) of every record in a metadata folder: record_path read backwards."""
    base = os.fspath(metadata_dir)
    for folder, _dirs, files in os.walk(base):
        parts = os.path.relpath(folder, base).split(os.sep) if folder != base else []
        if any(not p.startswith("@") for p in parts):
            continue  # not a chunk folder of a long key
        head = "".join(p[1:] for p in parts)
        for name in files:
            try:
                key = urlsafe_b64decode(head + name).decode()
            except (ValueError, UnicodeDecodeError):
                continue  # a temp file or something else that is no record
            yield key, os.path.join(folder, name)


def _read_record(metadata_dir: Path | str, key: str, max_len: int) -> dict | None:
    # os-level reads: one record per output file, ten thousand of them in a big run
    try:
        fd = os.open(record_path(metadata_dir, key, max_len), os.O_RDONLY)
    except OSError:
        return None
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        data = json.loads(b"".join(chunks))
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    return data if isinstance(data, dict) else None


def _strip(rule: str, prefix: str) -> str:
    return rule[len(prefix):] if prefix and rule.startswith(prefix) else rule


def read_jobs(workdir: Path, candidate_outputs: list[str], log_text: str, rule_prefix: str = "",
              skip_rules: tuple[str, ...] = ("snakegate_all",)) -> tuple[list[Job], LogSummary]:
    """Every job that made (or tried to make) one of `candidate_outputs` or appears in the log.

    `candidate_outputs` are output keys as Snakemake spells them (paths relative to `workdir` or
    absolute); the log's job blocks add the outputs of every job it started.
    """
    summary = read_log(log_text or "")
    metadata_dir = os.path.join(workdir, ".snakemake", "metadata")
    try:
        max_len = os.pathconf(metadata_dir, "PC_NAME_MAX") if os.path.isdir(metadata_dir) else 255
    except (OSError, ValueError):
        max_len = 255
    max_len = max_len or 255

    log_by_output: dict[str, LogJob] = {}
    keys: list[str] = []
    seen: set[str] = set()
    for lj in summary.jobs:
        if lj.rule in skip_rules:
            continue
        for out in lj.outputs:
            log_by_output[out] = lj
            if out not in seen:
                seen.add(out)
                keys.append(out)
    for key in candidate_outputs:
        if key not in seen:
            seen.add(key)
            keys.append(key)

    groups: dict[tuple, Job] = {}
    have_record: set[str] = set()
    known_logs: set[str] = {lg for lj in summary.jobs for lg in lj.logs}
    if os.path.isdir(metadata_dir):
        for key in keys:
            if key in known_logs:
                continue
            rec = _read_record(metadata_dir, key, max_len)
            if not rec or not rec.get("rule") or rec["rule"] in skip_rules:
                continue
            have_record.add(key)
            known_logs.update(rec.get("log") or ())
            # one job, one group: the log block that listed this output, else Snakemake's job hash
            # (each output's record has its own start time, so that cannot tell jobs apart)
            block = log_by_output.get(key)
            gkey = ("block", id(block)) if block is not None else (rec.get("rule"), rec.get("job_hash"))
            job = groups.get(gkey)
            if job is None:
                job = groups[gkey] = Job(
                    rule=_strip(rec["rule"], rule_prefix), outputs=[], inputs=list(rec.get("input") or []),
                    logs=list(rec.get("log") or []), start=rec.get("starttime"), end=rec.get("endtime"),
                    shellcmd=rec.get("shellcmd"), code=rec.get("code"), params=list(rec.get("params") or []),
                    status="incomplete" if rec.get("incomplete") else "succeeded")
            job.outputs.append(key)
            if rec.get("starttime") and (job.start is None or rec["starttime"] < job.start):
                job.start = rec["starttime"]
            if rec.get("endtime") and (job.end is None or rec["endtime"] > job.end):
                job.end = rec["endtime"]

    jobs = list(groups.values())
    # jobs the log started that left no record (killed, or the record store is elsewhere)
    for lj in summary.jobs:
        if lj.rule in skip_rules or not lj.outputs or lj.outputs[0] in have_record \
                or any(o in have_record for o in lj.outputs):
            continue
        have_record.update(lj.outputs)
        jobs.append(Job(rule=_strip(lj.rule, rule_prefix), outputs=list(lj.outputs), inputs=list(lj.inputs),
                        logs=list(lj.logs), start=lj.started, status="incomplete", has_record=False))

    finished = summary.finished
    by_output: dict[str, Job] = {}
    for job in jobs:
        for o in job.outputs:
            by_output[o] = job
        lj = log_by_output.get(job.outputs[0]) if job.outputs else None
        if lj is None:
            lj = next((log_by_output[o] for o in job.outputs if o in log_by_output), None)
        if lj is not None:
            job.wildcards = lj.wildcards
        if lj is not None and lj.jobid in finished:
            job.status = "succeeded"  # Snakemake said so, even if a temp() output is gone by now
        elif not all(os.path.exists(o if os.path.isabs(o) else os.path.join(workdir, o)) for o in job.outputs):
            job.status = "incomplete"  # started, never finished (cancelled, killed)
    for failed in summary.failed:
        job = next((by_output[o] for o in failed.output if o in by_output), None)
        if job is None:
            job = Job(rule=_strip(failed.rule, rule_prefix), outputs=list(failed.output), inputs=list(failed.input),
                      logs=list(failed.log), has_record=False)
            jobs.append(job)
            for o in job.outputs:
                by_output[o] = job
        job.status = "failed"
        job.error = failed.error or failed.message or "the job failed (see its log)"
        if failed.jobid and failed.jobid in summary.failure_times:
            job.end = job.end or summary.failure_times[failed.jobid]
            if not job.has_record:
                job.end = summary.failure_times[failed.jobid]
        if not job.logs and failed.log:
            job.logs = list(failed.log)
    for job in jobs:
        if job.start is not None and job.end is not None and job.end < job.start:
            job.end = job.start  # mtime-based end times can precede a recorded start by clock skew
    return jobs, summary


def epoch_text(value: float | None) -> str | None:
    """The xsd:dateTime text of an epoch time in UTC to the millisecond, in datetime.isoformat()'s form."""
    if value is None:
        return None
    seconds, millis = divmod(round(float(value) * 1000), 1000)
    base = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    return f"{base}.{millis:03d}000+00:00" if millis else f"{base}+00:00"
