"""Runs on a real Slurm: the shipped profile, the gate on both paths, failures and cancels, as a user sees them.

A one-node cluster (munged, slurmctld, slurmd) is started once for this module by
tests/slurm_cluster.py and stopped by PID at the end. Every command is the one the
README's "Running on a cluster" section shows, run from a throw-away registry with
the real Snakemake and snakemake-executor-plugin-slurm. Where Slurm cannot be
started (not root, not installed) the module is skipped with the reason.

Snakemake ignores SIGTERM while jobs run, so every run is bounded by `timeout -k`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import slurm_cluster
from registry_copies import REPO, make_registry

PROFILE = "profiles/slurm"
EXAMPLE = "workflows/tabular-profile/examples/basic.yaml"
RULES = ["clean", "load", "plot", "profile"]  # tabular-profile's jobs, one each
RUN_LIMIT_S = 240


@pytest.fixture(scope="module")
def cluster():
    reason = slurm_cluster.why_not()
    if reason:
        pytest.skip(f"no Slurm here: {reason}")
    if shutil.which("timeout") is None:
        pytest.skip("no Slurm tests without coreutils' timeout (every run is bounded by it)")
    try:
        import snakemake_executor_plugin_slurm  # noqa: F401
    except ImportError:
        pytest.skip('the Slurm executor plugin is not installed: pip install -e ".[test]"')
    running = slurm_cluster.up()  # its own folder: munged must reach it as the munge user
    yield running
    running.stop()
    shutil.rmtree(running.dir, ignore_errors=True)


@pytest.fixture
def registry(tmp_path) -> Path:
    root = make_registry(tmp_path / "registry")
    shutil.copytree(REPO / "profiles", root / "profiles")
    return root


def env_for(cluster) -> dict:
    env = {k: v for k, v in cluster.env.items() if not k.startswith("SNAKEGATE_")}
    env["SNAKEGATE_SLURM_PARTITION"] = slurm_cluster.PARTITION
    return env


def bounded(cluster, root: Path, argv: list[str], limit: float = RUN_LIMIT_S) -> subprocess.CompletedProcess:
    """`argv` from the registry root, killed after `limit` s (SIGTERM, then SIGKILL 10 s later)."""
    return subprocess.run(["timeout", "-k", "10", str(int(limit)), *argv], cwd=root, env=env_for(cluster),
                          capture_output=True, text=True)


def snakegate_run(cluster, root: Path, config: str, *extra: str) -> subprocess.CompletedProcess:
    return bounded(cluster, root, [sys.executable, "-m", "snakegate.cli", "run", config, *extra])


def plain_snakemake(cluster, root: Path, config: str, *extra: str) -> subprocess.CompletedProcess:
    return bounded(cluster, root, [sys.executable, "-m", "snakemake", "--configfile", config, *extra])


def only_run(root: Path) -> Path:
    runs = [p for p in (root / "runs").iterdir() if p.is_dir()]
    assert len(runs) == 1, runs
    return runs[0]


def outputs(run_dir: Path) -> dict[str, bytes]:
    return {p.relative_to(run_dir).as_posix(): p.read_bytes()
            for p in sorted((run_dir / "results").rglob("*")) if p.is_file()}


def new_jobs(cluster, before: list[int]) -> list[dict]:
    return [j for j in cluster.jobs() if j["id"] not in before]


def test_snakegate_run_through_slurm_matches_the_local_run_with_exactly_its_jobs(cluster, registry, tmp_path):
    local = snakegate_run(cluster, registry, EXAMPLE, "--cores", "2")
    assert local.returncode == 0, local.stdout + local.stderr
    local_dir = only_run(registry)
    expected = outputs(local_dir)
    shutil.move(local_dir, tmp_path / "local-run")

    before = cluster.job_ids()
    proc = snakegate_run(cluster, registry, EXAMPLE, "--profile", PROFILE)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run_dir = only_run(registry)
    assert json.loads((run_dir / "run.json").read_text())["status"] == "succeeded"
    assert outputs(run_dir) == expected  # byte for byte
    jobs = new_jobs(cluster, before)
    assert sorted(j["comment"].removeprefix("rule_wf_") for j in jobs) == RULES, jobs
    assert all(j["state"] == "COMPLETED" for j in jobs), jobs
    assert cluster.active_job_ids() == []


def test_plain_snakemake_with_the_slurm_profile_succeeds(cluster, registry):
    before = cluster.job_ids()
    proc = plain_snakemake(cluster, registry, EXAMPLE, "--profile", PROFILE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run_dir = only_run(registry)
    assert json.loads((run_dir / "run.json").read_text())["status"] == "succeeded"
    assert sorted(j["comment"].removeprefix("rule_wf_") for j in new_jobs(cluster, before)) == RULES
