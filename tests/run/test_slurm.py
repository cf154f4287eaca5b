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
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import slurm_cluster
from registry_copies import REPO
from run_faults import alive, fault_registry, kill_group, lock_is_held, wait_for
from prov_iris import run_ident

PROFILE = "profiles/slurm"
EXAMPLE = "workflows/tabular-profile/examples/basic.yaml"
RULES = ["clean", "load", "plot", "profile"]  # tabular-profile's jobs, one each
RUN_LIMIT_S = 240


@pytest.fixture(scope="module")
def cluster():
    reason = slurm_cluster.why_not_test()
    if reason:
        pytest.skip(reason)
    running = slurm_cluster.up()  # its own folder: munged must reach it as the munge user
    yield running
    running.stop()
    shutil.rmtree(running.dir, ignore_errors=True)


@pytest.fixture
def registry(tmp_path) -> Path:
    """tabular-profile, fails-on-purpose (its second rule raises after `sleep` seconds), the shipped profiles."""
    root = fault_registry(tmp_path / "registry")
    shutil.copytree(REPO / "profiles", root / "profiles")
    return root


def env_for(cluster, partition: bool = True) -> dict:
    """The user's environment: SNAKEGATE_SLURM_PARTITION names the partition (unset: the default one)."""
    env = {k: v for k, v in cluster.env.items() if not k.startswith("SNAKEGATE_")}
    if partition:
        env["SNAKEGATE_SLURM_PARTITION"] = slurm_cluster.PARTITION
    return env


def bounded(cluster, root: Path, argv: list[str], limit: float = RUN_LIMIT_S,
            partition: bool = True) -> subprocess.CompletedProcess:
    """`argv` from the registry root, killed after `limit` s (SIGTERM, then SIGKILL 10 s later)."""
    return subprocess.run(["timeout", "-k", "10", str(int(limit)), *argv], cwd=root,
                          env=env_for(cluster, partition), capture_output=True, text=True)


def snakegate_run(cluster, root: Path, config: str, *extra: str) -> subprocess.CompletedProcess:
    return bounded(cluster, root, [sys.executable, "-m", "snakegate.cli", "run", config, *extra])


def plain_snakemake(cluster, root: Path, config: str, *extra: str, partition: bool = True):
    return bounded(cluster, root, [sys.executable, "-m", "snakemake", "--configfile", config, *extra],
                   partition=partition)


def only_run(root: Path) -> Path:
    runs = [p for p in (root / "runs").iterdir() if p.is_dir()]
    assert len(runs) == 1, runs
    return runs[0]


def outputs(run_dir: Path) -> dict[str, bytes]:
    return {p.relative_to(run_dir).as_posix(): p.read_bytes()
            for p in sorted((run_dir / "results").rglob("*")) if p.is_file()}


def new_jobs(cluster, before: list[int]) -> list[dict]:
    return [j for j in cluster.jobs() if j["id"] not in before]


def prov_jobs(run_dir: Path) -> dict[str, dict]:
    """rule -> the job's activity in prov.json."""
    activities = json.loads((run_dir / "prov.json").read_text())["activity"]
    prefix = f"{run_ident(run_dir)}/job/"
    return {key[len(prefix):]: value for key, value in activities.items() if key.startswith(prefix)}


def prov_run(run_dir: Path) -> dict:
    return json.loads((run_dir / "prov.json").read_text())["activity"][f"{run_ident(run_dir)}"]


def test_snakegate_run_through_slurm_matches_the_local_run_with_exactly_its_jobs(cluster, registry, tmp_path):
    """Outputs byte for byte those of a local run, exactly the workflow's jobs in the queue, the contract's
    resources and the cluster in the record; and this with the registry's workflow code edited while the jobs
    are queued and running: they run the run's gated copy."""
    local = snakegate_run(cluster, registry, EXAMPLE, "--cores", "2")
    assert local.returncode == 0, local.stdout + local.stderr
    local_dir = only_run(registry)
    expected = outputs(local_dir)
    local_jobs = prov_jobs(local_dir)
    shutil.move(local_dir, tmp_path / "local-run")

    before = cluster.job_ids()
    proc = subprocess.Popen(["timeout", "-k", "10", str(RUN_LIMIT_S), sys.executable, "-m", "snakegate.cli", "run",
                             EXAMPLE, "--profile", PROFILE], cwd=registry, env=env_for(cluster),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + RUN_LIMIT_S
    while not new_jobs(cluster, before) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert new_jobs(cluster, before) and proc.poll() is None  # a job is queued and the run is going
    # the registry's workflow is edited under the run, into code that would fail
    wf = registry / "workflows" / "tabular-profile"
    for code in [wf / "Snakefile", *sorted((wf / "scripts").glob("*.py"))]:
        code.write_text('raise SystemExit("edited during the run")\n' + code.read_text())
    out, err = proc.communicate(timeout=RUN_LIMIT_S + 20)
    assert proc.returncode == 0, out + err
    run_dir = only_run(registry)
    assert json.loads((run_dir / "run.json").read_text())["status"] == "succeeded"
    assert outputs(run_dir) == expected  # byte for byte: the jobs ran the gated copy, not the edited registry
    jobs = new_jobs(cluster, before)
    assert sorted(j["comment"].removeprefix("rule_wf_") for j in jobs) == RULES, jobs
    assert all(j["state"] == "COMPLETED" for j in jobs), jobs
    assert cluster.active_job_ids() == []
    # the contract's resources reached sbatch: tabular-profile declares 1000 MB and 10 minutes per rule
    assert {(j["memory"], j["time_limit"]) for j in jobs} == {("1000M", "10:00")}, jobs

    # the cluster in the record: executor and profile, each job's scheduler id, node and its own times
    run = prov_run(run_dir)
    assert run["sg:executor"] == "slurm" and run["sg:profile"] == "profiles/slurm/config.yaml"
    # and the name all its jobs carry in the queue, which finds (and cancels) them
    execution = json.loads((run_dir / "run.json").read_text())["execution"]
    assert {j["name"] for j in jobs} == {execution["slurm_job_name"]}, (execution, jobs)
    by_rule = {j["comment"].removeprefix("rule_wf_"): j for j in jobs}
    for rule, activity in prov_jobs(run_dir).items():
        assert activity["sg:executor"] == "slurm"
        assert activity["sg:schedulerJobId"] == str(by_rule[rule]["id"])
        assert activity["sg:node"] == by_rule[rule]["node"]
        assert activity["prov:startTime"] < activity["prov:endTime"]
    assert all(a["sg:executor"] == "local" for a in local_jobs.values())


def test_an_invalid_config_is_refused_on_both_paths_before_any_job_reaches_the_queue(cluster, registry, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("workflow: tabular-profile\nparams:\n  dataset_file: data/examples/tabular-penguins.csv\n"
                   "  drop_duplicates: sometimes\n")
    before = cluster.job_ids()
    via_snakegate = snakegate_run(cluster, registry, str(bad), "--profile", PROFILE)
    via_snakemake = plain_snakemake(cluster, registry, str(bad), "--profile", PROFILE)
    assert via_snakegate.returncode == 1 and "params.drop_duplicates [type]" in via_snakegate.stdout + via_snakegate.stderr
    assert via_snakemake.returncode != 0 and "params.drop_duplicates [type]" in via_snakemake.stderr
    assert "gate refused" in via_snakemake.stderr
    assert cluster.job_ids() == before  # no job reached the queue
    assert not (registry / "runs").exists() or not any((registry / "runs").iterdir())


def test_a_failing_rule_on_slurm_is_failed_with_the_jobs_own_error_text(cluster, registry, tmp_path):
    config = tmp_path / "fail.yaml"
    config.write_text("workflow: fails-on-purpose\nparams:\n  table: data/examples/tabular-penguins.csv\n")
    proc = snakegate_run(cluster, registry, str(config), "--profile", PROFILE)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    run_dir = only_run(registry)
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "failed" and record["failure"]["rule"] == "boom"
    assert "target_properties ['Cr'] are also listed in feature_columns" in record["error"], record
    # the scheduler's log of the failed job, copied into the run folder and hashed
    (copied,) = record["failure"]["cluster_logs"]
    assert (run_dir / copied["path"]).is_file()
    run = prov_run(run_dir)
    assert run["sg:status"] == "failed" and "target_properties ['Cr']" in run["schema:error"]
    boom = prov_jobs(run_dir)["boom"]
    assert boom["sg:status"] == "failed" and boom["sg:executor"] == "slurm" and boom["sg:schedulerJobId"]
    prov_text = (run_dir / "prov.json").read_text()
    assert copied["sha256"] in prov_text  # the copied log is a file entity of the record, by its hash
    assert cluster.active_job_ids() == []


def start_a_sleeping_job(cluster, registry, tmp_path, env: dict,
                         kill_after_s: int = 10) -> tuple[subprocess.Popen, list[int]]:
    """`snakegate run` of fails-on-purpose through Slurm, returned once its sleeping job runs on the node.
    `timeout` forwards a signal to it and SIGKILLs it `kill_after_s` later if it has not ended."""
    config = tmp_path / "slow.yaml"
    config.write_text("workflow: fails-on-purpose\nparams:\n  table: data/examples/tabular-penguins.csv\n"
                      "  sleep: 600\n")
    before = cluster.job_ids()
    front = subprocess.Popen(["timeout", "-k", str(kill_after_s), str(RUN_LIMIT_S), sys.executable, "-m",
                              "snakegate.cli", "run", str(config), "--profile", PROFILE], cwd=registry, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + RUN_LIMIT_S - 30
        while time.monotonic() < deadline:
            running = [j for j in new_jobs(cluster, before)
                       if j["comment"] == "rule_wf_boom" and j["state"] == "RUNNING"]
            if running:
                return front, before
            assert front.poll() is None, front.communicate()
            time.sleep(1)
        pytest.fail("the sleeping job never ran on the cluster")
    except BaseException:
        front.kill()
        raise


def interrupt(front: subprocess.Popen) -> tuple[str, str]:
    """SIGINT to the front end, what Ctrl-C in the terminal sends; its output once it has exited."""
    try:
        front.send_signal(signal.SIGINT)
        return front.communicate(timeout=RUN_LIMIT_S)
    finally:
        if front.poll() is None:
            front.kill()


def assert_cancelled_with_nothing_left_in_the_queue(cluster, registry, front, before, out: str, err: str) -> None:
    assert front.returncode == 130, out + err
    # nothing left in the queue: the cancelled job may still be COMPLETING (Slurm's own clean-up of the killed
    # step) for a moment on a busy machine; it must be gone within seconds, not hang there
    wait_for(lambda: not cluster.active_job_ids(), 30, poll=0.5)
    assert cluster.active_job_ids() == [], new_jobs(cluster, before)
    (boom,) = [j for j in new_jobs(cluster, before) if j["comment"] == "rule_wf_boom"]
    assert boom["state"] == "CANCELLED", boom
    record = json.loads((only_run(registry) / "run.json").read_text())
    assert record["status"] == "cancelled" and record["cancelled_by"] == "SIGINT"


def test_sigint_while_a_job_runs_cancels_it_in_the_queue_and_records_cancelled(cluster, registry, tmp_path):
    front, before = start_a_sleeping_job(cluster, registry, tmp_path, env_for(cluster))
    time.sleep(2)  # the job is inside its sleep
    out, err = interrupt(front)
    assert_cancelled_with_nothing_left_in_the_queue(cluster, registry, front, before, out, err)


def test_sigint_during_the_plugins_status_check_still_cancels_the_job_in_the_queue(cluster, registry, tmp_path):
    """Snakemake's remote executor takes every job out of its list of active jobs while it asks Slurm
    for their states, and cancels only the jobs on that list: a Ctrl-C in that moment left the job
    running in the queue for its whole time limit. The status check is made slow here (an `squeue`
    that waits 4 s first, and says so in a file) so the signal lands inside it every time.
    Snakemake then waits for its status thread's retries before it ends; the front end's grace
    (run/process.py CANCEL_GRACE_S, 20 s) ends that, so `timeout` gets 60 s before its SIGKILL."""
    real = shutil.which("squeue", path=cluster.env.get("PATH"))
    checking = tmp_path / "status-check-running"
    slow = tmp_path / "slow-bin"
    slow.mkdir()
    (slow / "squeue").write_text(f'#!/bin/sh\ntouch "{checking}"\nsleep 4\n"{real}" "$@"\nrc=$?\n'
                                 f'rm -f "{checking}"\nexit $rc\n')
    (slow / "squeue").chmod(0o755)
    env = env_for(cluster)
    env["PATH"] = f"{slow}:{env.get('PATH', '')}"
    front, before = start_a_sleeping_job(cluster, registry, tmp_path, env, kill_after_s=60)
    checking.unlink(missing_ok=True)  # a check that began before the job ran
    assert wait_for(checking.exists, 60, poll=0.1), "the plugin never checked the job's state again"
    out, err = interrupt(front)
    assert_cancelled_with_nothing_left_in_the_queue(cluster, registry, front, before, out, err)


def test_a_slurm_run_killed_whole_says_how_to_find_and_cancel_the_jobs_it_left_in_the_queue(cluster, registry,
                                                                                            tmp_path):
    """A head killed with SIGKILL (a login node going down) cancels nothing: no handler runs. `show-run` finds
    the run interrupted and says where its jobs are, truthfully (the job is still running), and the scancel it
    prints empties the queue."""
    front, before = start_a_sleeping_job(cluster, registry, tmp_path, env_for(cluster))
    try:
        left_in_queue_by_a_killed_head(cluster, registry, front, before, tmp_path)
    finally:  # a job this test leaves behind would sleep on into the module's next tests
        for job in new_jobs(cluster, before):
            cluster.run("scancel", str(job["id"]), check=False)


def left_in_queue_by_a_killed_head(cluster, registry, front, before, tmp_path) -> None:
    run = only_run(registry)
    snakemake_pid = json.loads((run / "run.json").read_text())["snakemake_pid"]
    kill_group(front.pid)  # `timeout` leads the front end's process group
    kill_group(snakemake_pid)  # Snakemake has a session of its own
    front.communicate(timeout=30)
    assert wait_for(lambda: not alive(snakemake_pid) and not lock_is_held(run), 30)
    (boom,) = [j for j in new_jobs(cluster, before) if j["comment"] == "rule_wf_boom"]
    assert boom["id"] in cluster.active_job_ids()  # nobody cancelled it

    shown = subprocess.run([sys.executable, "-m", "snakegate.cli", "show-run", run.name], cwd=registry,
                           env=env_for(cluster), capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "interrupted" in shown.stdout, shown.stdout
    commands = dict(re.findall(r"^  (see them|cancel them) +(\S.*?)\s*$", shown.stdout, re.MULTILINE))
    assert commands == {"see them": f"squeue --name={boom['name']}",
                        "cancel them": f"scancel --name={boom['name']}"}, shown.stdout  # each whole on its line
    page = tmp_path / "report.html"
    made = subprocess.run([sys.executable, "-m", "snakegate.cli", "report", run.name, "-o", str(page)],
                          cwd=registry, env=env_for(cluster), capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stdout + made.stderr
    assert f"cancel them with `scancel --name={boom['name']}`" in page.read_text()  # the run's page says it too
    cluster.run(*shlex.split(commands["cancel them"]))  # the command as printed
    assert wait_for(lambda: cluster.active_job_ids() == [], 30), new_jobs(cluster, before)


def test_plain_snakemake_with_the_slurm_profile_succeeds_in_the_default_partition(cluster, registry):
    before = cluster.job_ids()
    proc = plain_snakemake(cluster, registry, EXAMPLE, "--profile", PROFILE, partition=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run_dir = only_run(registry)
    assert json.loads((run_dir / "run.json").read_text())["status"] == "succeeded"
    assert sorted(j["comment"].removeprefix("rule_wf_") for j in new_jobs(cluster, before)) == RULES


TWO_STEP_PLAN = """\
plan: twice
steps:
  first:
    workflow: tabular-profile
    params: {dataset_file: data/examples/tabular-penguins.csv, missing_strategy: fill_median}
  second:
    workflow: tabular-profile
    params: {dataset_file: {from: first, output: cleaned}, drop_duplicates: false}
"""


def test_a_plan_run_on_slurm_matches_the_local_one_with_each_steps_jobs_in_the_queue(cluster, registry, tmp_path):
    """A plan composed of two steps runs through the shipped profile as one DAG: every step's jobs reach the
    queue (as wf_<step>__<rule>), and every step's outputs are byte for byte those of the local run."""
    (registry / "plan.yaml").write_text(TWO_STEP_PLAN)
    local = snakegate_run(cluster, registry, "plan.yaml", "--cores", "2")
    assert local.returncode == 0, local.stdout + local.stderr
    local_dir = only_run(registry)
    expected = {p.relative_to(local_dir).as_posix(): p.read_bytes()
                for p in sorted((local_dir / "steps").rglob("results/*")) if p.is_file()}
    shutil.move(local_dir, tmp_path / "local-plan")
    before = cluster.job_ids()
    proc = snakegate_run(cluster, registry, "plan.yaml", "--profile", PROFILE)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run_dir = only_run(registry)
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "succeeded" and record["kind"] == "plan"
    got = {p.relative_to(run_dir).as_posix(): p.read_bytes()
           for p in sorted((run_dir / "steps").rglob("results/*")) if p.is_file()}
    assert got == expected and "steps/second/results/profile.json" in got
    jobs = new_jobs(cluster, before)
    assert sorted(j["comment"].removeprefix("rule_wf_") for j in jobs) == \
        sorted(f"{step}__{rule}" for step in ("first", "second") for rule in RULES), jobs
