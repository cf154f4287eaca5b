"""Each job's stderr into its own file in the run folder, for every kind of rule, without editing the workflow.

Snakemake runs every `shell:`, `script:`, `wrapper:` and `notebook:` job
through `snakemake.shell.shell`, which puts a prefix (by default
`set -euo pipefail;`) before the job's command. `install()` extends that prefix
with `exec 2>>FILE`, FILE being `runs/<run_id>/stderr/<rule>[/<wildcards>].log`:
the shell sends its own stderr and that of everything it starts there. The job
is found from its rule function's frame on the calling stack, the same frame
Snakemake itself reads a job's context from. A `run:` job, which Snakemake
spawns into a process of its own, names itself with `--target-jobs`;
`redirect_spawned_job()` sends that whole process's stderr to the job's file at
parse time. (A cluster job step keeps its stderr for the cluster's job log,
which is copied into the run folder when the job fails.)

Without the job's stderr on the terminal the run's record is where to read it;
the handlers name the file of a failed job. Exit status and stdout are never
changed; a shell() call outside a job, and shells that are not POSIX-like, are
left alone. Appends: a job attempted twice in one run folder keeps both, the
last at the end.

A run whose contract has sensitive params (a failing job may print one) gets
owner-only files: `install(..., mode=0o600)` in Snakemake's main process makes
each job's file with that mode before its shell opens it, keeps the stderr
folder 0700, and passes the mode on in LOG_MODE_ENV to the processes
Snakemake starts for jobs (a `run:` job, a cluster job), which read it back.
"""

from __future__ import annotations

import os
import shlex
import sys
import threading
from pathlib import Path

from snakegate.provenance.runstore import STDERR_DIR
from snakegate.provenance.runstore import job_stderr_path as stderr_path

_POSIX_SHELLS = {None, "bash", "sh", "dash", "zsh", "ksh"}
LOG_MODE_ENV = "SNAKEGATE_JOB_LOG_MODE"  # "600": the run's job stderr files are owner-only
_state: dict = {"run_dir": None, "prefix": "", "installed": False, "mode": None}
_lock = threading.Lock()


def _job_context() -> dict | None:
    """The locals of the rule function running this job (shell(), script() and wrappers are called from it)."""
    from snakemake.common import RULEFUNC_CONTEXT_MARKER

    frame = sys._getframe(2)
    for _ in range(60):
        if frame is None:
            return None
        loc = frame.f_locals
        if loc.get(RULEFUNC_CONTEXT_MARKER):
            return loc
        frame = frame.f_back
    return None


def _prefix_for_job(shell_exec) -> str:
    run_dir = _state["run_dir"]
    if run_dir is None:
        return ""
    from snakemake.shell import shell

    if shell._get_executable_name(shell_exec) not in _POSIX_SHELLS or os.name != "posix":
        return ""
    context = _job_context()
    if context is None or not isinstance(context.get("rule"), str):
        return ""
    wildcards = context.get("wildcards")
    try:
        wildcards = dict(wildcards.items()) if wildcards is not None else {}
    except (AttributeError, TypeError):
        wildcards = {}
    path = stderr_path(run_dir, context["rule"], wildcards, _state["prefix"])
    try:
        fd = _make(path, run_dir)
    except OSError:
        return ""  # a job must not fail because its stderr cannot be kept
    if fd is not None:
        os.close(fd)
    return f"exec 2>>{shlex.quote(str(path))}; "


def _make(path: Path, run_dir: Path) -> int | None:
    """The job's file's folder; with an owner-only mode, the file itself (opened for appending, returned)
    so that the shell's `2>>` never creates it readable by others."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _state["mode"]
    if mode is None:
        return None
    try:
        base = Path(run_dir) / STDERR_DIR
        if os.stat(base).st_mode & 0o077:
            os.chmod(base, 0o700)
    except OSError:
        pass  # a folder made by someone else: the files themselves are still owner-only
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, mode)
    os.fchmod(fd, mode)
    return fd


def _mode_from_env() -> int | None:
    return 0o600 if os.environ.get(LOG_MODE_ENV) == "600" else None


def install(run_dir: Path, rule_prefix: str = "", mode: int | None = None) -> None:
    """Send each job's stderr to its file under `run_dir` (idempotent; the latest run_dir wins). `mode`
    0o600: the files are owner-only, here and in every job process started from here; None: as the
    process that started this one said (LOG_MODE_ENV), else as the shell makes them."""
    from snakemake.shell import shell

    with _lock:
        _state["run_dir"] = Path(os.path.abspath(run_dir))
        _state["prefix"] = rule_prefix
        if mode == 0o600:
            os.environ[LOG_MODE_ENV] = "600"
        _state["mode"] = 0o600 if mode == 0o600 else _mode_from_env()
        if _state["installed"]:
            return
        original = shell.__dict__.get("_get_process_prefix")
        if not isinstance(original, classmethod):
            return  # a Snakemake whose shell works differently: keep stderr where it was
        func = original.__func__

        def _get_process_prefix(cls, shell_exec=None):
            base = func(cls, shell_exec)
            try:
                ours = _prefix_for_job(shell_exec)
            except Exception:  # noqa: BLE001 - never break a job over where its stderr goes
                ours = ""
            return ours + base

        shell._get_process_prefix = classmethod(_get_process_prefix)
        _state["installed"] = True


def redirect_spawned_job(run_dir: Path, argv: list[str], rule_prefix: str = "") -> Path | None:
    """In a process Snakemake spawned locally for one job (`--target-jobs rule:k=v --mode subprocess`, a `run:`
    block), send fd 2 to that job's file. A cluster job step keeps its stderr for the cluster's own job log."""
    if "--mode" not in argv or argv[argv.index("--mode") + 1:][:1] != ["subprocess"]:
        return None
    path = target_job_file(run_dir, argv, rule_prefix)
    if path is None:
        return None
    try:
        if _state["mode"] is None:
            _state["mode"] = _mode_from_env()
        fd = _make(path, run_dir)
        if fd is None:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    except OSError:
        return None
    sys.stderr.flush()
    os.dup2(fd, 2)
    os.close(fd)
    return path


def target_job_file(run_dir: Path, argv: list[str], rule_prefix: str = "") -> Path | None:
    """The stderr file of the one job this Snakemake process was started for (`--target-jobs rule:k=v`),
    or None when it runs no single target job (the head, a group job)."""
    if "--target-jobs" not in argv:
        return None
    i = argv.index("--target-jobs")
    specs = []
    for arg in argv[i + 1:]:
        if arg.startswith("--"):
            break
        specs.append(arg)
    if len(specs) != 1:
        return None  # a group job: several jobs share this process; their shells still get their own files
    try:
        from snakemake.target_jobs import parse_target_jobs_cli_args

        spec = parse_target_jobs_cli_args(specs)[0]
        rule, wildcards = spec.rulename, dict(spec.wildcards_dict)
    except Exception:  # noqa: BLE001 - an argument form this Snakemake does not use: leave stderr alone
        return None
    return stderr_path(run_dir, rule, wildcards, rule_prefix)
