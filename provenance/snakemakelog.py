"""Reading Snakemake's own log: progress lines and the blocks that describe failed jobs.

Snakemake prints the same text to stderr and to .snakemake/log/*.snakemake.log,
so `snakegate run` (streaming) and the Snakefile's onerror handler (from the
file) read failures the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

PROGRESS = re.compile(r"^(\d+) of (\d+) steps \((?:\d+(?:\.\d+)?)%\) done")
RULE_START = re.compile(r"^(?:local)?(?:rule|checkpoint) (\S+?):\s*$")
ERROR_IN_RULE = re.compile(r"^Error in rule (\S+?):\s*$")
FIELD = re.compile(r"^\s+(jobid|input|output|log|message|shell|conda-env|container):\s*(.*)$")


@dataclass
class FailedJob:
    rule: str
    jobid: str | None = None
    input: list[str] = field(default_factory=list)
    output: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    message: str | None = None
    error: str | None = None  # the exception line Snakemake printed before the block


def _split(value: str) -> list[str]:
    value = value.replace("(check log file(s) for error details)", "").strip()
    return [v.strip() for v in value.split(",") if v.strip()]


def failed_jobs(text: str) -> list[FailedJob]:
    """Every 'Error in rule X:' block, in order, with its fields and the error that preceded it."""
    lines = text.splitlines()
    out: list[FailedJob] = []
    for i, line in enumerate(lines):
        m = ERROR_IN_RULE.match(line.strip("\x1b[0m").strip())
        if not m:
            continue
        job = FailedJob(rule=m.group(1))
        # the exception text sits in the few lines above the block
        above = [l.strip() for l in lines[max(0, i - 6):i] if l.strip() and not l.startswith("[")]
        errs = [l for l in above if ("Error" in l or "Exception" in l or "returned non-zero" in l)]
        if errs:
            job.error = " ".join(errs[-2:])
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
