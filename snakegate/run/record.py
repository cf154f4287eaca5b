"""What a run's record says when it ends: its status facts, a failure with its real message, a cancel with its signal.

One place for the facts `run.json` gets at the end of a run, whoever ends it:
the top-level Snakefile's handlers (through entry.py, under `snakegate run` and
plain `snakemake` alike), `snakegate run` when Snakemake ended without them, and
`staleruns` when it completes a run nobody finished. Everything is read from
Snakemake's log, the jobs' stderr files (see jobstderr.py) and their logs.

A failure is `{rule, exception, message, log_tail, log}`: the failing rule,
the exception type and message of the job's own error (a Python traceback's
last line, a `run:` block's exception, or the command's exit status with the
last line it printed), the last lines of its stderr or log, and that file's
path relative to the run folder. A cluster executor's logs of the failed job
(e.g. `.snakemake/slurm_logs/...`) are copied into `runs/<id>/cluster-logs/`
and listed with their sha256. With the run's sensitive values (`RunSecrets`), every field returned
is scrubbed of them, and the cluster logs are copied scrubbed and owner-only (their originals scrubbed
in place). Writes nothing else; never starts a process.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

from snakegate.provenance import runstore, snakemakelog
from snakegate.provenance.jobs import LogSummary, read_log
from snakegate.provenance.runrecords import RunSecrets

TAIL_LINES = 20
TAIL_LINE_CHARS = 400
MESSAGE_CHARS = 500
TARGET_RULES = ("snakegate_all",)
# lines that close a failed program's output without saying why (R, bash)
_TRAILERS = ("Execution halted", "Calls:")


def _strip(rule: str, prefix: str) -> str:
    return rule[len(prefix):] if prefix and rule.startswith(prefix) else rule


def _one_line(text: str | None, limit: int = MESSAGE_CHARS) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


# snakemakelog.PROGRESS at the start of any line, after its leading blanks (a line also starts after a lone \r)
_PROGRESS_LINE = re.compile(r"(?:^|\r)[ \t\f\v]*" + snakemakelog.PROGRESS.pattern.removeprefix("^"), re.M)


def summary_of(log_text: str) -> LogSummary:
    return read_log(log_text or "")


def jobs_started(summary: LogSummary, rule_prefix: str) -> list[str]:
    return [_strip(j.rule, rule_prefix) for j in summary.jobs if j.rule not in TARGET_RULES]


def running_jobs(summary: LogSummary, rule_prefix: str) -> list[str]:
    """Rules of the jobs the log shows started and neither finished nor failed (sorted, one per job)."""
    failed = {f.jobid for f in summary.failed if f.jobid}
    return sorted(_strip(j.rule, rule_prefix) for j in summary.jobs
                  if j.rule not in TARGET_RULES and j.jobid not in summary.finished and j.jobid not in failed)


def jobs_finished(summary: LogSummary) -> int:
    """How many jobs Snakemake reported finished (the run's own target rule left out)."""
    targets = {j.jobid for j in summary.jobs if j.rule in TARGET_RULES}
    return len(summary.finished - targets)


def progress(log_text: str) -> dict:
    """The last `N of M steps (x%) done` line: found by one scan of the text, which is never split into lines
    (a 10,000-job log has 130,000 of them: 13 MB of strings held beside Snakemake's DAG)."""
    done = total = None
    for m in _PROGRESS_LINE.finditer(log_text or ""):
        done, total = int(m.group(1)), int(m.group(2))
    return {"done": done or 0, "total": total}


def partial_outputs(run_dir: Path) -> list[str]:
    results = Path(run_dir) / "results"
    if not results.is_dir():
        return []
    return sorted(p.relative_to(run_dir).as_posix() for p in results.rglob("*") if p.is_file())


def drop_empty_stderr(run_dir: Path) -> None:
    """Jobs that printed nothing leave no stderr file behind."""
    base = Path(run_dir) / runstore.STDERR_DIR
    if not base.is_dir():
        return
    for folder, dirs, files in os.walk(base, topdown=False):
        for name in files:
            path = os.path.join(folder, name)
            try:
                if os.path.getsize(path) == 0:
                    os.unlink(path)
            except OSError:
                pass
        try:
            os.rmdir(folder)  # only succeeds when empty
        except OSError:
            pass


# ---- failure --------------------------------------------------------------------------------------
def _tail(path: Path) -> list[str]:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 64 * 1024))
            text = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    return [line.rstrip()[:TAIL_LINE_CHARS] for line in text.splitlines() if line.strip()][-TAIL_LINES * 3:]


def _sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _resolve(path: str, workdir: Path) -> Path:
    p = Path(path)
    return p if p.is_absolute() else Path(workdir) / p


def _shown(path: Path, run_dir: Path, workdir: Path) -> str:
    """A path as the record shows it: relative to the run folder when inside it, else to the working directory."""
    for base in (run_dir, workdir):
        try:
            return Path(os.path.abspath(path)).relative_to(os.path.abspath(base)).as_posix()
        except ValueError:
            continue
    return str(path)


def collect_cluster_logs(run_dir: Path, workdir: Path, logs: list[str], hidden: RunSecrets | None = None) -> list[dict]:
    """Copy a failed job's logs that live outside the run folder (a cluster executor's job logs, e.g.
    .snakemake/slurm_logs/rule_x/123.log) into runs/<id>/cluster-logs/, with their sha256 (of the copy,
    scrubbed of the run's sensitive values; the original is scrubbed where it lies)."""
    hidden = hidden or RunSecrets(None, [])
    out = []
    run_abs = os.path.abspath(run_dir)
    for log in logs:
        source = _resolve(log, workdir)
        if os.path.abspath(source).startswith(run_abs + os.sep) or not source.is_file():
            continue
        rel = Path(_shown(source, run_dir, workdir))
        parts = [p for p in rel.parts if p not in ("..", "/")]
        if parts and parts[0] == ".snakemake":
            parts = parts[1:]
        dest = Path(run_dir) / runstore.CLUSTER_LOGS_DIR / Path(*parts) if parts else Path(run_dir) / source.name
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            if hidden.mode is None:
                shutil.copyfile(source, dest)
            else:
                hidden.file(source)
                hidden.copy(source, dest)
            out.append({"source": _shown(source, run_dir, workdir), "path": dest.relative_to(run_dir).as_posix(),
                        "size": dest.stat().st_size, "sha256": _sha256(dest)})
        except OSError:
            continue
    return out


def _disk_full(folder: Path) -> bool:
    try:
        st = os.statvfs(folder)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 64 * 1024


def _first_line(text: str | None) -> str:
    lines = (text or "").splitlines()
    return lines[0] if lines else ""


def _own_account(failed, tails: list[tuple[Path, list[str]]]) -> tuple[str | None, str | None, tuple | None]:
    """(exception, message, (file, lines) it came from) in the job's own words, or Nones."""
    # a Python traceback in the job's own output is the most exact account
    for path, lines in tails:
        exc, msg = snakemakelog.python_exception(lines)
        if exc:
            return exc, msg, (path, lines)
    # a `run:` block's exception, as Snakemake printed it in its log ...
    if failed.exception and failed.exception != "CalledProcessError":
        return failed.exception, _first_line(failed.exception_message), None
    # ... or as the process Snakemake spawned for it printed it to its stderr
    for path, lines in tails:
        exc, msg = snakemakelog.exception_at_end(lines)
        if exc and exc != "CalledProcessError":
            return exc, _first_line(msg), (path, lines)
    return None, None, None


def failure_facts(run_dir: Path, workdir: Path, summary: LogSummary, rule_prefix: str,
                  hidden: RunSecrets | None = None) -> dict | None:
    """{rule, exception, message, log_tail, log, jobid, cluster_logs} of the first job that failed, or None."""
    if not summary.failed:
        return None
    failed = summary.failed[0]
    block = next((j for j in summary.jobs if failed.jobid and j.jobid == failed.jobid and j.rule == failed.rule), None)
    wildcards = block.wildcards if block else {}
    run_dir, workdir = Path(run_dir), Path(workdir)
    cluster_logs = collect_cluster_logs(run_dir, workdir, failed.log, hidden)
    candidates = [runstore.job_stderr_path(run_dir, failed.rule, wildcards, rule_prefix)]
    candidates += [_resolve(p, workdir) for p in failed.log]
    candidates += [run_dir / c["path"] for c in cluster_logs]
    tails = [(path, _tail(path)) for path in candidates if path.is_file()]
    tails = [(path, lines) for path, lines in tails if lines]

    exception, message, source = _own_account(failed, tails)
    if source is None and tails:
        source = tails[0]
    if exception is None:
        exception = (f"non-zero exit status {failed.exit_status}" if failed.exit_status is not None
                     else failed.exception or "error")
        said = [line for line in (source[1] if source else []) if not line.strip().startswith(_TRAILERS)]
        # Snakemake's own "Command '...' returned non-zero exit status N." adds nothing to the exception
        message = said[-1].strip() if said else (failed.message or "the job printed nothing to say why")
    if _disk_full(run_dir):
        message = f"{message}; the run folder's disk is full"  # maybe why, and why its own words may be missing
    tail = source[1][-TAIL_LINES:] if source else \
        [l[:TAIL_LINE_CHARS] for l in (failed.exception_message or "").splitlines()][-TAIL_LINES:]
    return {
        "rule": _strip(failed.rule, rule_prefix), "jobid": failed.jobid, "wildcards": dict(wildcards) or None,
        "exception": exception, "message": _one_line(message), "log_tail": tail,
        "log": _shown(source[0], run_dir, workdir) if source else None,
        "cluster_logs": cluster_logs or None,
    }


def failure_fields(failure: dict | None, failed_logs: list[str] | None = None) -> dict:
    """run.json fields for a failure: `failure`, the one-line `error`, and `failed_rule`/`failed_log`."""
    if not failure:
        return {}
    return {"failure": {k: v for k, v in failure.items() if v is not None},
            "error": _one_line(f"{failure['exception']}: {failure['message']}" if failure.get("message")
                               else failure["exception"]),
            "failed_rule": failure["rule"], "failed_log": failed_logs or []}


def closing_fields(run_dir: Path, workdir: Path, status: str, log_text: str, rule_prefix: str,
                   cancelled_by: str | None = None, running: list[str] | None = None,
                   hidden: RunSecrets | None = None) -> dict:
    """The facts of a run's end that do not depend on who ends it (status, timings and outputs aside),
    scrubbed of the run's sensitive values (`hidden`): a failing job's last lines may print one."""
    summary = summary_of(log_text)
    fields: dict = {"jobs_executed": jobs_started(summary, rule_prefix), "progress": progress(log_text),
                    "jobs_finished": jobs_finished(summary)}
    if status != "succeeded":
        fields["partial_outputs"] = partial_outputs(run_dir)
    if status == "failed":
        failure = failure_facts(run_dir, workdir, summary, rule_prefix, hidden)
        first = summary.failed[0] if summary.failed else None
        fields.update(failure_fields(failure, first.log if first else None))
    if status in ("cancelled", "interrupted"):
        fields["running_jobs"] = sorted(running) if running is not None else running_jobs(summary, rule_prefix)
    if status == "cancelled":
        fields["cancelled_by"] = cancelled_by
    return hidden.data(fields) if hidden else fields


def last_words(log_text: str) -> str:
    """One line for a Snakemake that stopped outside any job: the exception it printed last, else its last lines."""
    lines = [line for line in (log_text or "").splitlines() if line.strip()]
    tail = lines[-40:]
    for end in range(len(tail), 0, -1):
        exc, message = snakemakelog.exception_at_end(tail[:end])
        if exc and exc != "WorkflowError" or (exc and message and "did not complete successfully" not in message):
            first = (message or "").splitlines()
            return _one_line(f"{exc}: {first[0]}" if first else exc)
    return _one_line(" | ".join(lines[-8:]))


def read_text(path: str | os.PathLike | None) -> str:
    if not path:
        return ""
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
