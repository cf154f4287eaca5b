"""Run a read-only `snakegate` command inside the test process, as `subprocess.run` would return it.

A fresh `python -m snakegate.cli` costs 0.3–0.5 s of CPU in imports alone, and the suite made about six
hundred of them for commands that only read (runs, show-run, report, export, verify, ...). These go through
`snakegate.cli.main` here instead: the same parser, handlers and exit codes, in the registry folder, with the
environment the subprocess would have had, stdout and stderr captured as text. Commands that run Snakemake,
wait on signals, read stdin or start a server (run, rerun, fork, refine, test, check, chat, ask, mcp) keep
their own process, and so does every test that checks the installed console command itself.

An exception a handler does not turn into a message propagates and fails the test (the subprocess would
have printed a traceback, which the callers refuse). A command that hangs past `timeout` ends the worker
with every thread's stack dumped (faulthandler), as the subprocess's timeout would have failed the test.
"""

from __future__ import annotations

import contextlib
import faulthandler
import io
import os
import subprocess
import sys
from pathlib import Path

# The commands that only read the registry and its runs (or write one named output file): safe to run
# in-process, and each one's result does not depend on being a process of its own.
READ_ONLY = frozenset({"runs", "show", "show-run", "report", "export", "verify", "diff", "validate", "list",
                       "search", "prov", "init", "--help"})


def read_only(args) -> bool:
    return bool(args) and str(args[0]) in READ_ONLY


class _Stream(io.TextIOWrapper):
    """A text stream with a `.buffer`, as sys.stdout has (some writers write bytes), that is not a terminal."""

    def __init__(self):
        super().__init__(io.BytesIO(), encoding="utf-8", errors="replace", newline="")

    def text(self) -> str:
        self.flush()
        return self.buffer.getvalue().decode("utf-8", errors="replace")


@contextlib.contextmanager
def _environment(env: dict | None):
    if env is None:
        yield
        return
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def run_cli(args, *, cwd: Path, env: dict | None = None, timeout: float | None = None) -> subprocess.CompletedProcess:
    """`snakegate ARGS` from `cwd` with `env` (None: this process's), in this process."""
    from snakegate.cli import main

    argv = [str(a) for a in args]
    out, err = _Stream(), _Stream()
    here = os.getcwd()
    if timeout:
        faulthandler.dump_traceback_later(timeout, exit=True)
    try:
        with _environment(env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            os.chdir(cwd)
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse's usage errors and --help
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    finally:
        os.chdir(here)
        if timeout:
            faulthandler.cancel_dump_traceback_later()
    return subprocess.CompletedProcess([sys.executable, "-m", "snakegate.cli", *argv], code, out.text(), err.text())
