"""Every run leaves a true record under real faults: a dead front end, kill -9, SIGTERM/SIGINT, a failing job,
a full disk, an unwritable folder, a damaged record (issue 12: 1-5, 8).

Real `snakegate run` and real `snakemake` processes, real signals sent by PID,
real tmpfs mounts (skipped with a message where mounting is not allowed).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from inprocess_cli import read_only, run_cli
from run_faults import (
    PYTHON, alive, env_for, fault_registry, files_under, fill, finished_jobs, kill_group, processes_in, prov_jobs,
    record_of, run_dirs, start_plain_snakemake, start_snakegate_run, wait_for, write_config,
)
from snakegate.provenance.runlock import lock_is_held


@pytest.fixture
def registry(tmp_path) -> Path:
    return fault_registry(tmp_path / "registry")


def sg(root: Path, *args, env=None) -> subprocess.CompletedProcess:
    if read_only(args):  # in-process: inprocess_cli.py says why
        proc = run_cli(args, cwd=root, env=env or env_for(root), timeout=300)
        assert not own_traceback(proc.stdout + proc.stderr), proc.stderr
        return proc
    proc = subprocess.run([PYTHON, "-m", "snakegate.cli", *map(str, args)], cwd=root, env=env or env_for(root),
                          capture_output=True, text=True, timeout=300)
    assert not own_traceback(proc.stdout + proc.stderr), proc.stderr
    return proc


def own_traceback(text: str) -> bool:
    """A traceback of snakegate itself (a job's traceback, quoted as `| Traceback`, is the record's content)."""
    return any(line.startswith("Traceback") for line in text.splitlines())


def the_run(root: Path) -> Path:
    runs = run_dirs(root)
    assert len(runs) == 1, runs
    return runs[0]


def finished_record(run_dir: Path, timeout: float = 120) -> dict:
    record = wait_for(lambda: (r := record_of(run_dir)).get("stage") == "finished" and r, timeout)
    assert record, f"the run never recorded an end: {record_of(run_dir)}"
    return record


def assert_nothing_left(run_dir: Path, record: dict) -> None:
    """No process of the run is alive (Snakemake, its jobs), and nobody holds the run folder."""
    from snakegate.provenance.runstore import lock_is_held

    assert wait_for(lambda: not alive(record.get("snakemake_pid")), 30), "Snakemake is still running"
    assert wait_for(lambda: not processes_in(run_dir), 30), processes_in(run_dir)
    assert not lock_is_held(run_dir)


# ---- 12.1 the front end dies, the run goes on and records itself -------------------------------------------
@pytest.mark.parametrize("how", ["SIGKILL", "SIGHUP", "timeout -s KILL"])
def test_the_run_goes_on_and_records_itself_when_the_front_end_dies(registry, tmp_path, how):
    cfg = write_config(tmp_path / "slow.yaml", "slow-steps", n=3, sleep=3)
    if how == "timeout -s KILL":
        front = start_snakegate_run(registry, cfg, prefix=["timeout", "-s", "KILL", "7"])
    else:
        front = start_snakegate_run(registry, cfg)
    assert wait_for(lambda: files_under(registry, "*/stderr/step/*.log"), 60), "no step ever started"
    if how != "timeout -s KILL":
        os.kill(front.pid, getattr(signal, how))
    front.communicate(timeout=60)
    assert front.returncode != 0  # the front end is gone (killed), not finished
    run_dir = the_run(registry)
    record = finished_record(run_dir)
    assert record["status"] == "succeeded", record
    assert (run_dir / "results" / "done.txt").read_text().split() == ["0", "1", "2"]
    assert len(prov_jobs(run_dir)) == 4  # three steps and the gather, all in the PROV record
    assert record["jobs_finished"] == 4
    assert_nothing_left(run_dir, record)
    listed = json.loads(sg(registry, "runs", "--json").stdout)["runs"]
    assert [(r["status"], r.get("note")) for r in listed] == [("succeeded", None)]


# ---- 12.2 stale runs are found and completed ---------------------------------------------------------------
@pytest.mark.parametrize("path", ["snakegate run", "snakemake"])
def test_a_run_killed_whole_is_found_interrupted_with_every_finished_job_in_its_record(registry, tmp_path, path):
    cfg = write_config(tmp_path / "slow.yaml", "slow-steps", n=4, sleep=2)
    if path == "snakegate run":
        front = start_snakegate_run(registry, cfg)
    else:
        front = start_plain_snakemake(registry, cfg)
    # two steps finished as Snakemake's log says it, not as their files say: a step's file is written before
    # Snakemake logs the step finished, and a kill between the two left one file more than the record counts
    assert wait_for(lambda: logged_finished(registry) >= 2, 90), "two steps never finished"
    run_dir = the_run(registry)
    snakemake_pid = record_of(run_dir)["snakemake_pid"]
    # a node that goes down: every process of the run dies at once, nothing gets to write a word
    kill_group(front.pid)
    kill_group(snakemake_pid)
    front.communicate(timeout=30)
    assert wait_for(lambda: not alive(snakemake_pid) and not processes_in(run_dir) and not lock_is_held(run_dir), 30)
    assert record_of(run_dir)["status"] == "running"  # what the record said when everything died

    listed = json.loads(sg(registry, "runs", "--json").stdout)["runs"]
    assert [r["status"] for r in listed] == ["interrupted"]
    record = record_of(run_dir)
    assert record["status"] == "interrupted" and record["interrupted_detected_at"]
    assert "no process held its run folder" in record["error"]
    # trace completeness 1.0: every job Snakemake finished is a succeeded job in the PROV record
    log = (run_dir / "snakemake.log").read_text()
    done = finished_jobs(log)
    assert done >= 2
    succeeded = [a for a in prov_jobs(run_dir).values() if a["sg:status"] == "succeeded"]
    assert len(succeeded) == done == record["jobs_finished"]
    assert len(list((run_dir / "results" / "parts").glob("*.txt"))) == done

    shown = sg(registry, "show-run", run_dir.name)
    assert shown.returncode == 0 and "interrupted" in shown.stdout and "interrupted_detected_at" in shown.stdout
    # found once: a second reader sees the completed record and changes nothing
    before = (run_dir / "run.json").read_bytes()
    sg(registry, "runs")
    assert (run_dir / "run.json").read_bytes() == before


def logged_finished(registry: Path) -> int:
    """The steps Snakemake has logged finished so far in the registry's one run: its live log, the one run.json
    names (the run folder's own copy is written when the run ends); 0 before there is one."""
    try:
        log = json.loads(files_under(registry, "*/run.json")[0].read_text(encoding="utf-8"))["snakemake_log"]
        return finished_jobs((registry / log).read_text(encoding="utf-8", errors="replace"))
    except (IndexError, KeyError, TypeError, ValueError, OSError):
        return 0


def test_a_running_run_is_not_mistaken_for_a_stale_one(registry, tmp_path):
    cfg = write_config(tmp_path / "slow.yaml", "slow-steps", n=2, sleep=4)
    front = start_snakegate_run(registry, cfg)
    assert wait_for(lambda: files_under(registry, "*/stderr/step/*.log"), 60)
    listed = json.loads(sg(registry, "runs", "--json").stdout)["runs"]
    assert [r["status"] for r in listed] == ["running"]
    front.communicate(timeout=120)
    assert front.returncode == 0
    assert record_of(the_run(registry))["status"] == "succeeded"


# ---- 12.3 stopping is `cancelled`, with the signal and the running jobs ------------------------------------
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
@pytest.mark.parametrize("path", ["snakegate run", "snakemake"])
def test_a_stop_signal_is_recorded_cancelled_with_the_signal_and_the_running_jobs(registry, tmp_path, sig, path):
    cfg = write_config(tmp_path / "slow.yaml", "fails-on-purpose", sleep=60)
    front = start_snakegate_run(registry, cfg) if path == "snakegate run" else start_plain_snakemake(registry, cfg)
    assert wait_for(lambda: files_under(registry, "*/results/copy.csv"), 60), "the first job never finished"
    run_dir = the_run(registry)
    time.sleep(1.5)  # boom is sleeping now
    started = time.monotonic()
    os.kill(front.pid, sig)
    out, err = front.communicate(timeout=60)
    assert time.monotonic() - started < 30, "the cancel took too long"
    assert not own_traceback(out)
    record = finished_record(run_dir, 10)
    assert record["status"] == "cancelled", record
    assert record["cancelled_by"] == sig.name
    assert record["running_jobs"] == ["boom"]
    assert "results/copy.csv" in record["partial_outputs"]
    jobs = {a["sg:rule"]: a["sg:status"] for a in prov_jobs(run_dir).values()}
    assert jobs == {"copy": "succeeded", "boom": "cancelled"}
    if path == "snakegate run":
        assert front.returncode == 130 and "cancelled by " + sig.name in out
    assert_nothing_left(run_dir, record)


# ---- 12.4 the real failure message -------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["snakegate run", "snakemake"])
def test_a_failed_job_is_recorded_with_its_exception_message_and_the_tail_of_its_stderr(registry, tmp_path, path):
    cfg = write_config(tmp_path / "fail.yaml", "fails-on-purpose")
    proc = start_snakegate_run(registry, cfg) if path == "snakegate run" else start_plain_snakemake(registry, cfg)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1
    run_dir = the_run(registry)
    record = record_of(run_dir)
    message = "target_properties ['Cr'] are also listed in feature_columns"
    failure = record["failure"]
    assert (failure["rule"], failure["exception"], failure["message"]) == ("boom", "RuntimeError", message)
    assert failure["log_tail"][-1] == f"RuntimeError: {message}"
    assert any(line.startswith("Traceback") for line in failure["log_tail"])
    assert failure["log"] == "stderr/boom.log"
    assert f"RuntimeError: {message}" in (run_dir / failure["log"]).read_text()
    assert record["error"] == f"RuntimeError: {message}"
    assert "CalledProcessError" not in record["error"]
    # the job's PROV activity carries the same facts
    boom = next(a for a in prov_jobs(run_dir).values() if a["sg:rule"] == "boom")
    assert boom["sg:status"] == "failed" and boom["schema:error"] == record["error"]
    assert boom["sg:failureException"] == "RuntimeError" and message in boom["sg:logTail"]
    shown = " ".join(sg(registry, "show-run", run_dir.name).stdout.split())  # read as a user does: wrapped at 80
    assert f"RuntimeError: {message}" in shown and "stderr/boom.log" in shown
    # and the person at the terminal is told, on both paths
    said = " ".join((out if path == "snakegate run" else err).split())  # the run's summary wraps at 80
    assert f"RuntimeError: {message}" in said


@pytest.mark.parametrize("path", ["snakegate run", "snakemake"])
def test_each_jobs_stderr_lands_in_its_own_file_in_the_run_folder(registry, tmp_path, path):
    cfg = write_config(tmp_path / "ok.yaml", "slow-steps", n=2)
    proc = start_snakegate_run(registry, cfg) if path == "snakegate run" else start_plain_snakemake(registry, cfg)
    proc.communicate(timeout=120)
    assert proc.returncode == 0
    run_dir = the_run(registry)
    for i in (0, 1):
        assert (run_dir / "stderr" / "step" / f"i={i}.log").read_text() == f"step {i} starts\n"
    assert not (run_dir / "stderr" / "gather.log").exists()  # a job that printed nothing leaves no file
    doc = json.loads((run_dir / "prov.json").read_text())
    made = {a["prov:entity"] for a in doc["wasGeneratedBy"].values()}
    paths = {str(doc["entity"][e].get("prov:location")) for e in made if e in doc["entity"]}
    assert any(p.endswith("stderr/step/i=0.log") for p in paths), paths  # the job generated its stderr file


@pytest.mark.parametrize("path", ["snakegate run", "snakemake"])
def test_a_run_block_exception_is_the_recorded_failure(registry, tmp_path, path):
    cfg = write_config(tmp_path / "think.yaml", "run-block-fails")
    proc = start_snakegate_run(registry, cfg) if path == "snakegate run" else start_plain_snakemake(registry, cfg)
    proc.communicate(timeout=120)
    assert proc.returncode == 1
    failure = record_of(the_run(registry))["failure"]
    assert failure["rule"] == "think" and failure["exception"] == "ValueError"
    assert failure["message"].endswith("the table has no 'idea' column")


def test_a_failed_jobs_cluster_log_is_copied_into_the_run_folder_with_its_hash(tmp_path):
    """The hook for cluster executors: a failed job's log outside the run folder (the Slurm plugin's
    .snakemake/slurm_logs/...) is copied in, hashed, and read for the failure message."""
    import hashlib

    from snakegate.run import record as runrecord

    workdir = tmp_path / "registry"
    run_dir = workdir / "runs" / "r1"
    run_dir.mkdir(parents=True)
    slurm_log = workdir / ".snakemake" / "slurm_logs" / "rule_wf_boom" / "4242.log"
    slurm_log.parent.mkdir(parents=True)
    slurm_log.write_text("Traceback (most recent call last):\n  File \"boom.py\", line 3\n"
                         "MemoryError: the node ran out of memory\n")
    log = ("[Tue Nov 24 02:37:08 2026]\nrule wf_boom:\n    output: runs/r1/results/never.txt\n    jobid: 1\n"
           "[Tue Nov 24 02:38:08 2026]\nError in rule wf_boom:\n    message: SLURM-job '4242' failed, SLURM status is: "
           "'OUT_OF_MEMORY'\n    jobid: 1\n    output: runs/r1/results/never.txt\n"
           "    log: .snakemake/slurm_logs/rule_wf_boom/4242.log (check log file(s) for error details)\n")
    failure = runrecord.failure_facts(run_dir, workdir, runrecord.summary_of(log), "wf_")
    copy = run_dir / "cluster-logs" / "slurm_logs" / "rule_wf_boom" / "4242.log"
    assert copy.read_bytes() == slurm_log.read_bytes()
    assert failure["cluster_logs"] == [{
        "source": ".snakemake/slurm_logs/rule_wf_boom/4242.log", "path": "cluster-logs/slurm_logs/rule_wf_boom/4242.log",
        "size": copy.stat().st_size, "sha256": hashlib.sha256(copy.read_bytes()).hexdigest()}]
    assert (failure["exception"], failure["message"]) == ("MemoryError", "the node ran out of memory")


# ---- 12.5 a full disk or an unwritable folder is a message, not a traceback --------------------------------
@pytest.fixture
def small_tmpfs(tmp_path):
    """A 2 MiB tmpfs (root only); skipped with the reason where it cannot be mounted."""
    mount = tmp_path / "small-disk"
    mount.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({proc.stderr.strip() or 'mount failed'}): the full-disk "
                    "behaviour is tested where `mount -t tmpfs` is allowed (root)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_a_full_disk_before_the_run_is_a_message_naming_the_folder(registry, small_tmpfs, tmp_path):
    runs = small_tmpfs / "runs"
    runs.mkdir()
    fill(small_tmpfs)
    cfg = write_config(tmp_path / "ok.yaml", "slow-steps", n=1)
    proc = sg(registry, "run", cfg, env=env_for(registry, SNAKEGATE_RUNS=str(runs)))
    assert proc.returncode == 2
    assert "No space left on device" in proc.stderr and str(runs) in proc.stderr and "nothing was run" in proc.stderr
    assert not any(runs.iterdir())  # no half-made run folder


def test_a_disk_that_fills_during_the_run_is_recorded_failed_in_a_whole_record(registry, small_tmpfs, tmp_path):
    runs = small_tmpfs / "runs"
    runs.mkdir()
    cfg = write_config(tmp_path / "ok.yaml", "slow-steps", n=2, sleep=3)
    env = env_for(registry, SNAKEGATE_RUNS=str(runs))
    front = start_snakegate_run(registry, cfg, env=env)
    # the disk fills while the second step sleeps: its output cannot be written
    assert wait_for(lambda: list(runs.glob("*/results/parts/*.txt")), 60), "the first step never finished"
    fill(small_tmpfs)
    out, err = front.communicate(timeout=120)
    assert not own_traceback(out + err)
    run_dir = next(runs.iterdir())
    record = json.loads((run_dir / "run.json").read_text())  # whole, parseable JSON: never truncated
    assert (record["status"], record["stage"], front.returncode) == ("failed", "finished", 1), record
    assert record["failure"]["rule"] == "step"
    assert "the run folder's disk is full" in record["error"]
    assert "failed rule step" in out
    (small_tmpfs / "filler").unlink(missing_ok=True)
    listed = json.loads(sg(registry, "runs", "--json", env=env).stdout)["runs"]
    assert [r["status"] for r in listed] == ["failed"]
    if not (run_dir / "prov.json").exists():
        assert "no PROV record" in listed[0]["note"]


def test_an_unwritable_runs_folder_is_a_message_naming_it(registry, small_tmpfs, tmp_path):
    runs = small_tmpfs / "runs"
    runs.mkdir()
    subprocess.run(["mount", "-o", "remount,ro", str(small_tmpfs)], check=True)
    cfg = write_config(tmp_path / "ok.yaml", "slow-steps", n=1)
    proc = sg(registry, "run", cfg, env=env_for(registry, SNAKEGATE_RUNS=str(runs)))
    assert proc.returncode == 2
    assert "Read-only file system" in proc.stderr and str(runs) in proc.stderr


def test_a_stale_run_whose_record_cannot_be_completed_says_so_and_changes_nothing(registry, small_tmpfs, tmp_path):
    runs = small_tmpfs / "runs"
    run_dir = runs / "20260101T000000Z-deadbeef"
    run_dir.mkdir(parents=True)
    stale = {"run_id": run_dir.name, "workflow": "slow-steps", "status": "running", "stage": "jobs-running",
             "started": "2026-01-01T00:00:00.000Z"}
    (run_dir / "run.json").write_text(json.dumps(stale))
    subprocess.run(["mount", "-o", "remount,ro", str(small_tmpfs)], check=True)
    env = env_for(registry, SNAKEGATE_RUNS=str(runs))
    listed = sg(registry, "runs", "--json", env=env)
    assert listed.returncode == 0
    row = json.loads(listed.stdout)["runs"][0]
    assert row["status"] == "interrupted" and "could not be completed" in row["note"]
    assert "Read-only file system" in row["note"]
    shown = sg(registry, "show-run", run_dir.name, env=env)
    assert shown.returncode == 0 and "could not be completed" in " ".join(shown.stdout.split())
    assert json.loads((run_dir / "run.json").read_text()) == stale


# ---- 12.8 one damaged record never hides the others --------------------------------------------------------
def test_a_damaged_record_is_listed_unreadable_and_never_hides_the_others(registry, tmp_path):
    cfg = write_config(tmp_path / "ok.yaml", "slow-steps", n=1)
    for _ in range(3):
        assert sg(registry, "run", cfg).returncode == 0
    good, bad_run, bad_prov = run_dirs(registry)
    text = (bad_run / "run.json").read_text()
    (bad_run / "run.json").write_text(text[: len(text) // 2])  # truncated mid-write
    (bad_prov / "prov.json").write_text("{\"entity\": [1, 2")
    proc = sg(registry, "runs")
    assert proc.returncode == 0
    lines: dict[str, str] = {}  # a run's row and the note lines indented below it
    for line in proc.stdout.splitlines():
        if line.startswith(" "):
            lines[key] += " " + line.strip()
        else:
            key = line.split()[0]
            lines[key] = line
    assert "succeeded" in lines[good.name]
    assert "unreadable" in lines[bad_run.name] and "run.json is not valid JSON" in lines[bad_run.name]
    # the listing glances at prov.json (kind, size, first and last bytes); show-run below parses it whole
    assert "unreadable" in lines[bad_prov.name] and "prov.json is not a whole JSON object" in lines[bad_prov.name]
    rows = {r["run_id"]: r for r in json.loads(sg(registry, "runs", "--json").stdout)["runs"]}
    assert rows[bad_run.name]["status"] == "unreadable" and "run.json" in rows[bad_run.name]["note"]
    for damaged in (bad_run, bad_prov):
        shown = sg(registry, "show-run", damaged.name)
        assert shown.returncode == 1
        assert "cannot be read" in shown.stderr and str(damaged) in shown.stderr
    assert sg(registry, "show-run", good.name).returncode == 0
