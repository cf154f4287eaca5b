"""Every kind of run of every curated workflow, in real git registries: the material of the Provenance II tests.

The fixtures are session-scoped and imported into tests/conftest.py (a session fixture imported into several
test modules would be made once per module), so each run happens once per pytest session whichever modules use
it; a test module imports only the constants (CURATED, KINDS).

Two registries (`curated_registry`, `second_registry`) hold the same curated workflows and demo data in
different folders, each a git repository. In the first, for each curated workflow and its first example:

- succeeded: `snakegate run`;
- failed: `snakegate run` with every job's shell failing before its command (BASH_ENV sources a file that
  exits 7), so the run stops at the first job of the first rule;
- cancelled: every job's shell sleeps first (BASH_ENV), SIGINT to `snakegate run` once the first job has
  started: a cancel before any job ends;
- interrupted: the same, then `snakegate run` and its Snakemake killed whole (SIGKILL to both process groups),
  completed as interrupted by the next reader (`snakegate runs`); `kill_sent` says when the kill was sent;
- rerun and fork (one --set per workflow, FORK_SETS) of the succeeded run;
- plain: the example under plain `snakemake`.

In the second registry, `second_succeeded`: each first example once more, for comparing outputs across
registry folders. BASH_ENV is Bash's own start-up hook: no job, Snakefile or snakegate code is changed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from registry_copies import REPO, clean_env, git, make_registry, new_run, run_names, snakegate

CURATED = sorted(p.parent.name for p in (REPO / "workflows").glob("*/workflow.yaml")
                 if "trust: curated" in p.read_text())
KINDS = ("succeeded", "failed", "cancelled", "interrupted", "rerun", "fork", "plain")
# one parameter change per workflow for its fork (a value its contract accepts and its example does not use)
FORK_SETS = {
    "classifier-benchmark": "seed=1",
    "pl-power-series": "r2_min=0.8",
    "pump-probe": "seed=1",
    "surrogate-design": "seed=1",
    "tabular-profile": "missing_strategy=fill_mean",
    "variant-annotation": "feature_types=[gene]",
    "variant-calling": "min_mapq=20",
}


def first_example(root: Path, workflow: str) -> Path:
    return sorted((root / "workflows" / workflow / "examples").glob("*.yaml"))[0].relative_to(root)


def curated_copy(root: Path) -> Path:
    """A git registry at `root` with every curated workflow and the demo data."""
    make_registry(root)
    for wf in CURATED:
        if not (root / "workflows" / wf).exists():
            shutil.copytree(REPO / "workflows" / wf, root / "workflows" / wf,
                            ignore=shutil.ignore_patterns(".snakemake", "__pycache__"))
    shutil.copytree(REPO / "data" / "examples", root / "data" / "examples", dirs_exist_ok=True)
    (root / ".gitignore").write_text("/runs/\n.snakemake/\n.snakegate/\n__pycache__/\n")
    git(root, "init", "-q")
    git(root, "config", "user.name", "Ada Tester")
    git(root, "config", "user.email", "ada@example.org")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "curated registry for the provenance tests")
    return root


def bash_env(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def run_with(root: Path, *args, env_extra: dict | None = None, expect: int | None = None) -> Path:
    """`snakegate ARGS` in `root`; the one new run folder."""
    before = run_names(root)
    proc = subprocess.run([sys.executable, "-m", "snakegate.cli", *map(str, args)], cwd=root,
                          env=clean_env(**(env_extra or {})), capture_output=True, text=True, timeout=900)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    if expect is not None:
        assert proc.returncode == expect, proc.stdout[-3000:] + proc.stderr[-3000:]
    return new_run(root, before)


def wait_for(predicate, timeout: float = 180.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


def stuck_run(root: Path, example: Path, sleeper: Path) -> tuple[subprocess.Popen, Path]:
    """`snakegate run EXAMPLE` whose jobs sleep before their command; returns once the first job has started
    (the guard wrote its record, runs/<id>/jobio/)."""
    before = run_names(root)
    proc = subprocess.Popen([sys.executable, "-m", "snakegate.cli", "run", str(example), "--cores", "1"], cwd=root,
                            env=clean_env(BASH_ENV=str(sleeper)), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    assert wait_for(lambda: len(run_names(root) - before) == 1, 120), "no run folder appeared"
    run_dir = new_run(root, before)
    assert wait_for(lambda: any((run_dir / "jobio").glob("*.json"))), "no job started"
    return proc, run_dir


def kill_group(pid: int | None) -> None:
    if pid:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


@pytest.fixture(scope="session")
def curated_registry(tmp_path_factory) -> Path:
    return curated_copy(tmp_path_factory.mktemp("curated-a") / "registry")


@pytest.fixture(scope="session")
def second_registry(tmp_path_factory) -> Path:
    return curated_copy(tmp_path_factory.mktemp("curated-b") / "elsewhere" / "registry")


@pytest.fixture(scope="session")
def job_hooks(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("bash-env")
    return {"fail": bash_env(folder, "fail.sh", "echo 'injected: this job fails before its command' >&2; exit 7\n"),
            "sleep": bash_env(folder, "sleep.sh", "sleep 120\n")}


@pytest.fixture(scope="session")
def succeeded_runs(curated_registry) -> dict[str, Path]:
    return {wf: run_with(curated_registry, "run", first_example(curated_registry, wf), "--cores", "2", expect=0)
            for wf in CURATED}


@pytest.fixture(scope="session")
def second_succeeded(second_registry) -> dict[str, Path]:
    return {wf: run_with(second_registry, "run", first_example(second_registry, wf), "--cores", "2", expect=0)
            for wf in CURATED}


@pytest.fixture(scope="session")
def failed_runs(curated_registry, job_hooks) -> dict[str, Path]:
    return {wf: run_with(curated_registry, "run", first_example(curated_registry, wf), "--cores", "1",
                         env_extra={"BASH_ENV": str(job_hooks["fail"])}, expect=1)
            for wf in CURATED}


@pytest.fixture(scope="session")
def cancelled_runs(curated_registry, job_hooks) -> dict[str, Path]:
    out = {}
    for wf in CURATED:
        proc, run_dir = stuck_run(curated_registry, first_example(curated_registry, wf), job_hooks["sleep"])
        proc.send_signal(signal.SIGINT)
        out_text, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, out_text[-2000:] + err[-2000:]
        out[wf] = run_dir
    return out


@pytest.fixture(scope="session")
def interrupted_runs(curated_registry, job_hooks) -> dict[str, tuple[Path, float]]:
    """workflow -> (run folder, the time the kill was sent)."""
    out = {}
    for wf in CURATED:
        proc, run_dir = stuck_run(curated_registry, first_example(curated_registry, wf), job_hooks["sleep"])
        assert wait_for(lambda run_dir=run_dir: json.loads((run_dir / "run.json").read_text()).get("snakemake_pid"))
        snakemake_pid = json.loads((run_dir / "run.json").read_text())["snakemake_pid"]
        kill_sent = time.time()
        kill_group(proc.pid)
        kill_group(snakemake_pid)
        proc.communicate(timeout=60)
        out[wf] = (run_dir, kill_sent)
    # the next reader finds them and completes them as interrupted
    assert snakegate(curated_registry, "runs").returncode == 0
    for run_dir, _ in out.values():
        assert json.loads((run_dir / "run.json").read_text())["status"] == "interrupted"
    return out


@pytest.fixture(scope="session")
def rerun_runs(curated_registry, succeeded_runs) -> dict[str, Path]:
    return {wf: run_with(curated_registry, "rerun", succeeded_runs[wf].name, "--cores", "2", expect=0)
            for wf in CURATED}


@pytest.fixture(scope="session")
def fork_runs(curated_registry, succeeded_runs) -> dict[str, Path]:
    return {wf: run_with(curated_registry, "fork", succeeded_runs[wf].name, "--set", FORK_SETS[wf], "--cores", "2",
                         expect=0)
            for wf in CURATED}


@pytest.fixture(scope="session")
def plain_runs(curated_registry) -> dict[str, Path]:
    out = {}
    for wf in CURATED:
        before = run_names(curated_registry)
        proc = subprocess.run([sys.executable, "-m", "snakemake", "--configfile",
                               str(first_example(curated_registry, wf)), "--cores", "2"],
                              cwd=curated_registry, env=clean_env(), capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stderr[-3000:]
        out[wf] = new_run(curated_registry, before)
    return out


@pytest.fixture(scope="session")
def runs_of_kind(request, succeeded_runs, failed_runs, cancelled_runs, interrupted_runs, rerun_runs, fork_runs,
                 plain_runs) -> dict[str, dict[str, Path]]:
    """kind -> workflow -> run folder, for every kind of run (KINDS)."""
    return {"succeeded": succeeded_runs, "failed": failed_runs, "cancelled": cancelled_runs,
            "interrupted": {wf: r for wf, (r, _) in interrupted_runs.items()}, "rerun": rerun_runs,
            "fork": fork_runs, "plain": plain_runs}
