"""Reading Snakemake's own log: progress lines and the blocks that describe failed jobs.

Snakemake prints the same text to stderr and to .snakemake/log/*.snakemake.log,
so `snakegate run` (following Snakemake's output) and the Snakefile's handlers
(from the log file) read failures the same way. For each "Error in rule X:"
block this finds the exception Snakemake printed just before it ("RuleException:"
then "<Type> in file ..., line N:" and the message), so a caller can tell a
command that exited non-zero (CalledProcessError) from a Python exception in a
`run:` block. Only reads text; never opens or writes files except
`read_failed_jobs`, which reads one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

PROGRESS = re.compile(r"^(\d+) of (\d+) steps \((?:\d+(?:\.\d+)?)%\) done")
RULE_START = re.compile(r"^(?:local)?(?:rule|checkpoint) (\S+?):\s*$")
ERROR_IN_RULE = re.compile(r"^Error in rule (\S+?):\s*$")
FIELD = re.compile(r"^\s+(jobid|input|output|log|message|shell|conda-env|container):\s*(.*)$")
# "CalledProcessError in file "/x/Snakefile", line 23:" or "MissingOutputException in rule a in file ..., line 3:"
EXCEPTION_HEADER = re.compile(r"^([A-Za-z_]\w*)(?: in rule \S+)?(?: in file \"(.*)\", line (\d+))?(:|\.)$")
EXIT_STATUS = re.compile(r"returned non-zero exit status (-?\d+)")
_TIMESTAMP = re.compile(r"^\[\w{3} \w{3} +\d{1,2} \d{2}:\d{2}:\d{2} \d{4}\]$")
_BOUNDARY = re.compile(r"^(?:(?:local)?(?:rule|checkpoint) \S+:|Finished jobid: |Error in rule |\d+ of \d+ steps )")
# the end-of-run summary a spawned job's own Snakemake prints; never the cause
_NOISE = ("At least one job did not complete successfully.", "Exiting because a job execution failed")


@dataclass
class FailedJob:
    rule: str
    jobid: str | None = None
    input: list[str] = field(default_factory=list)
    output: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    message: str | None = None
    error: str | None = None  # one line: the exception Snakemake printed before the block, with its message
    exception: str | None = None  # its type name, e.g. CalledProcessError, RuntimeError
    exception_message: str | None = None  # its message (several lines joined by newlines)
    exit_status: int | None = None  # for a command that exited non-zero


def _split(value: str) -> list[str]:
    value = value.replace("(check log file(s) for error details)", "").strip()
    return [v.strip() for v in value.split(",") if v.strip()]


def _exception_above(lines: list[str], i: int) -> tuple[str | None, str | None]:
    """(type, message) of the exception Snakemake printed in the lines just above line i."""
    start = i - 1
    while start >= 0 and i - start < 80 and not _BOUNDARY.match(lines[start]):
        start -= 1
    block = lines[start + 1:i]
    # the last "RuleException:" wins; without one, the last header that is not the end-of-run summary
    heads = [k for k, l in enumerate(block) if l.strip() == "RuleException:"]
    candidates = [k + 1 for k in heads] if heads else [k for k, l in enumerate(block) if EXCEPTION_HEADER.match(l)]
    for k in reversed(candidates):
        if k >= len(block):
            continue
        m = EXCEPTION_HEADER.match(block[k])
        if not m:
            continue
        message = []
        for line in block[k + 1:]:
            if line.startswith("  File ") or _TIMESTAMP.match(line.strip()) or line.strip() == "RuleException:":
                break
            if line.strip():
                message.append(line.rstrip())
        text = "\n".join(message)
        if any(n in text for n in _NOISE):
            continue
        return m.group(1), text or None
    return None, None


def failed_jobs(text: str) -> list[FailedJob]:
    """Every 'Error in rule X:' block, in order, with its fields and the exception that preceded it."""
    lines = text.splitlines()
    out: list[FailedJob] = []
    for i, line in enumerate(lines):
        m = ERROR_IN_RULE.match(line.strip("\x1b[0m").strip())
        if not m:
            continue
        job = FailedJob(rule=m.group(1))
        job.exception, job.exception_message = _exception_above(lines, i)
        if job.exception:
            first = (job.exception_message or "").splitlines()[0] if job.exception_message else ""
            job.error = f"{job.exception}: {first}" if first else job.exception
            if status := EXIT_STATUS.search(job.exception_message or ""):
                job.exit_status = int(status.group(1))
        for follow in lines[i + 1:i + 40]:
            fm = FIELD.match(follow)
            if not fm:
                if follow.strip() and not follow.startswith(" "):
                    break
                continue
            key, value = fm.group(1), fm.group(2)
            if key == "jobid":
                job.jobid = value.strip()
            elif key in ("input", "output", "log"):
                setattr(job, key, _split(value))
            elif key == "message" and value.strip() != "None":
                job.message = value.strip()
        out.append(job)
    return out


def read_failed_jobs(log_path: str | Path | None) -> list[FailedJob]:
    if not log_path or not Path(log_path).is_file():
        return []
    return failed_jobs(Path(log_path).read_text(encoding="utf-8", errors="replace"))


def exception_at_end(lines: list[str]) -> tuple[str | None, str | None]:
    """(type, message) of a Snakemake exception block ("RuleException:", "<Type> in file ...:") at the
    end of `lines`, e.g. what a spawned `run:` job printed to its stderr before it exited."""
    return _exception_above(lines, len(lines))


PY_TRACEBACK = "Traceback (most recent call last):"
_PY_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*)(?::[ \t]?(.*))?$")


def python_exception(lines: list[str]) -> tuple[str | None, str | None]:
    """(type, message) of the last Python traceback in `lines` (a job's stderr), or (None, None)."""
    start = max((k for k, l in enumerate(lines) if l.startswith(PY_TRACEBACK)), default=None)
    if start is None:
        return None, None
    for k in range(start + 1, len(lines)):
        line = lines[k]
        if not line.strip() or line.startswith((" ", "\t")) or line.startswith(("^", "~")):
            continue  # frames, source lines, caret markers
        m = _PY_EXCEPTION.match(line.rstrip())
        if not m:
            return None, line.strip()
        return m.group(1), (m.group(2) or "").strip()  # a message's further lines stay in the log tail
    return None, None
