"""Shared fixtures: the real registry, a disposable copy of it, the CLI run in-process, and the runs of
every kind the provenance, command and report tests read (prov_runs.py, made once per session).

`tmp_registry` copies workflows/tabular-profile and its demo tables into
tmp_path, so a test may tamper with files (one byte, a symlink, a settings
file) without touching the checkout other tests read.

How the suite runs (in parallel by default, what is `slow`, what starts first) is the plugin suite_runner.py.
"""
import shutil
import sys
from pathlib import Path

import pytest

from curated_kinds import curated_kinds  # noqa: F401  (session: every kind of run, per curated workflow)
from curated_tests import curated_test_run  # noqa: F401  (session fixture: one `snakegate test` of the curated)
from prov_runs import (  # noqa: F401  (session fixtures: defined here, each run is made once per session)
    cancelled_run, failed_run, fork_run, plain_run, prov_registry, rerun_run, succeeded_run,
)
from registry_copies import (  # noqa: F401  (re-exported for fixtures below)
    IGNORE, ROOT, TABULAR, TABULAR_SCHEMA, TABULAR_VERSION, copy_registry,
)
# Real plan runs, made once per session for every folder that reads them (a session fixture imported into
# several modules would be made once per module): the views, the commands, the crate, the chat, MCP.
from plan_runs import plan_fork_run, plan_interrupted_run, plan_registry, plan_run  # noqa: F401
# Runs with verdicts of every kind (passing, failing, unknown, forked, refined, contaminated, tampered), for the
# views, the commands, the chat, MCP and the crate: here, not in each reading module, for the same reason.
from verdict_view_runs import (  # noqa: F401
    contaminated_run, failing_run, forked_run, judged_registry, passing_run, refined_run, tampered_run, unknown_run,
)

pytest_plugins = ["suite_runner", "pytester"]  # pytester: test_suite_runner.py runs small sessions


@pytest.fixture(autouse=True)
def _no_snakegate_env(monkeypatch):
    """A developer's own SNAKEGATE_* settings must never leak into a test."""
    for name in ("SNAKEGATE_REGISTRY", "SNAKEGATE_DATA_ROOTS", "SNAKEGATE_RUNS", "SNAKEGATE_DRAFTS",
                 "SNAKEGATE_LLM_BASE_URL", "SNAKEGATE_LLM_MODEL", "SNAKEGATE_LLM_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def registry_root() -> Path:
    """/work/main's registry: the repository this test file lives in."""
    return ROOT


@pytest.fixture
def tmp_registry(tmp_path) -> Path:
    """A throwaway registry (tabular-profile + data/examples/tabular-*) that tests may tamper with."""
    return copy_registry(tmp_path / "registry")


@pytest.fixture
def cli(capsys):
    """Run `snakegate ARGS` in-process; returns (exit code, stdout, stderr). Usage errors exit via SystemExit."""
    from snakegate.cli import main

    def run(*args):
        capsys.readouterr()
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def snakegate_cmd():
    """The installed console command run in a fresh process (for cross-process and traceback checks)."""
    exe = shutil.which("snakegate")
    return [exe] if exe else [sys.executable, "-m", "snakegate.cli"]


@pytest.fixture
def roc_validator():
    """roc-validator's command (it lives in its own environment; .ci/run provisions it), or a skip saying how."""
    from snakegate.provenance.rocrate import validate as rocval

    cli = rocval.find()
    if cli is None:
        pytest.skip(f"roc-validator is not available; provision it with: {rocval.PROVISION}")
    return cli
