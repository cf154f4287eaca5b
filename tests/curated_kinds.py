"""Every kind of run of every curated workflow, in real git registries: the material of the Provenance II tests.

`curated_kinds` is a session fixture parametrized by workflow and imported into tests/conftest.py (a session
fixture imported into several test modules would be made once per module), so each workflow's runs happen once
per pytest session whichever modules read them; a test module imports only the constants (CURATED, KINDS) and
asks for a workflow with `@pytest.mark.parametrize("curated_kinds", [...], indirect=True)`. Each workflow has
its own registry, so tests/suite_runner.py groups its runs and their readers on one worker and the seven
workflows on as many workers as there are.

Each workflow's registry holds every curated workflow and the demo data, in a git repository. In it, for the
workflow's first example:

- succeeded: `snakegate run`;
- failed: `snakegate run` with every job's shell failing before its command (BASH_ENV sources a file that
  exits 7), so the run stops at the first job of the first rule;
- cancelled: every job's shell sleeps first (BASH_ENV), SIGINT to `snakegate run` once the first job has
  started: a cancel before any job ends;
- interrupted: the same, then `snakegate run` and its Snakemake killed whole (SIGKILL to both process groups),
  completed as interrupted by the next reader (`snakegate runs`); `kill_sent` says when the kill was sent;
- rerun and fork (one --set per workflow, FORK_SETS) of the succeeded run.

In a second registry in another folder, made the same way:
- plain: the example under plain `snakemake`. It is also `second`, the run the outputs are compared with across
  registry folders (the same invocation made in another folder, by the other front door), so one run serves
  both instead of a second `snakegate run` of the same invocation. `registry_of(kind)` is the folder a kind's
  run was made in.

BASH_ENV is Bash's own start-up hook: no job, Snakefile or snakegate code is changed.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from registry_copies import REPO, clean_env, git, make_registry, new_run, run_names, snakegate
from snakegate.provenance.runlock import lock_is_held

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


def job_hooks(folder: Path) -> dict[str, Path]:
    """BASH_ENV files that make every job's shell fail, or sleep, before its command."""
    folder.mkdir(parents=True, exist_ok=True)
    return {"fail": bash_env(folder, "fail.sh", "echo 'injected: this job fails before its command' >&2; exit 7\n"),
            "sleep": bash_env(folder, "sleep.sh", "sleep 120\n")}


@dataclass(frozen=True)
class KindRuns:
    """One curated workflow's runs of every kind (KINDS): the plain one in a second registry folder (`second`), the
    others in a git registry of its own (`registry`)."""

    workflow: str
    registry: Path
    runs: dict[str, Path]  # kind -> run folder
    kill_sent: float  # when the interrupted run's kill was sent
    second: Path  # the plain run, made in the second registry

    def registry_of(self, kind: str) -> Path:
        """The registry folder the run of `kind` was made in (its runs/ holds it)."""
        return self.runs[kind].parent.parent


def cancelled(root: Path, example: Path, sleeper: Path) -> Path:
    proc, run_dir = stuck_run(root, example, sleeper)
    proc.send_signal(signal.SIGINT)
    out_text, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, out_text[-2000:] + err[-2000:]
    return run_dir


def interrupted(root: Path, example: Path, sleeper: Path) -> tuple[Path, float]:
    proc, run_dir = stuck_run(root, example, sleeper)
    assert wait_for(lambda: json.loads((run_dir / "run.json").read_text()).get("snakemake_pid"))
    snakemake_pid = json.loads((run_dir / "run.json").read_text())["snakemake_pid"]
    kill_sent = time.time()
    kill_group(proc.pid)
    kill_group(snakemake_pid)
    proc.communicate(timeout=60)
    # SIGKILL reaches a group's processes one by one: the machine is down once none is left holding the folder
    assert wait_for(lambda: not lock_is_held(run_dir), 30)
    # the next reader finds it and completes it as interrupted
    assert snakegate(root, "runs").returncode == 0
    assert json.loads((run_dir / "run.json").read_text())["status"] == "interrupted"
    return run_dir, kill_sent


def plain(root: Path, example: Path) -> Path:
    before = run_names(root)
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--configfile", str(example), "--cores", "2"],
                          cwd=root, env=clean_env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return new_run(root, before)


@pytest.fixture(scope="session", params=CURATED)
def curated_kinds(request, tmp_path_factory) -> KindRuns:
    """Every kind of run of one curated workflow (the param), made once per session. One registry per workflow,
    so tests/suite_runner.py can give each workflow's runs and the tests reading them a worker of their own
    (parametrize a test with `indirect=["curated_kinds"]`) instead of making all 63 runs one after another."""
    wf = request.param
    if wf in _made:  # pytest compares a param by identity: an equal name from another module's list is "another"
        return _made[wf]
    base = tmp_path_factory.mktemp(f"curated-{wf}")
    root, hooks = curated_copy(base / "registry"), job_hooks(base / "bash-env")
    example = first_example(root, wf)
    runs = {"succeeded": run_with(root, "run", example, "--cores", "2", expect=0)}
    runs["failed"] = run_with(root, "run", example, "--cores", "1", env_extra={"BASH_ENV": str(hooks["fail"])},
                              expect=1)
    runs["cancelled"] = cancelled(root, example, hooks["sleep"])
    runs["interrupted"], kill_sent = interrupted(root, example, hooks["sleep"])
    runs["rerun"] = run_with(root, "rerun", runs["succeeded"].name, "--cores", "2", expect=0)
    runs["fork"] = run_with(root, "fork", runs["succeeded"].name, "--set", FORK_SETS[wf], "--cores", "2", expect=0)
    second = curated_copy(tmp_path_factory.mktemp(f"curated-{wf}-b") / "elsewhere" / "registry")
    runs["plain"] = plain(second, first_example(second, wf))
    _made[wf] = KindRuns(wf, root, runs, kill_sent, runs["plain"])
    return _made[wf]


_made: dict[str, KindRuns] = {}  # workflow -> its runs, made once per test process
