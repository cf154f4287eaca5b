"""A sensitive value a job prints stays out of everything a run leaves at rest (issue 22 §6).

A throw-away git registry with one-rule workflows whose contract marks `token` x-sensitive and whose job
gets it through params: and prints it: on stderr, on stdout, into its log file, and (with
--printshellcmds) in the shell command Snakemake shows. Real `snakegate run` and plain `snakemake`,
failing, succeeding, cancelled with SIGTERM and killed whole, then completed by `snakegate runs`.
Afterwards the secret's bytes are in no file of the run folder but config.yaml (which Snakemake needs)
and in no file under .snakemake/ (its job metadata and logs); the run's logs are owner-only; and the
records still tell the truth (the failure, the job's command as its keyed hash, the PROV record built
from Snakemake's scrubbed metadata).
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from registry_copies import clean_env, make_registry, new_run, one_rule_workflow, run_names, snakegate, token_workflow
from run_faults import files_under, kill_group, prov_jobs, start_plain_snakemake, start_snakegate_run, wait_for
from snakegate.provenance import secrets
from snakegate.provenance.runlock import lock_is_held

SECRET = "tok-51a7e2c9-at-rest"
WORKFLOWS = {
    "leaky-note": token_workflow(
        "leaky-note", "Leaky note", "Fails, printing its token everywhere a job can.",
        "echo token {params.token} >&2; echo says {params.token}; echo logged {params.token} > {log}; exit 3",
        log=True),
    "loud-note": token_workflow(
        "loud-note", "Loud note", "Succeeds, printing its token on stderr.",
        "echo token {params.token} >&2; echo {params.label} > {output.note}"),
    "slow-secret": token_workflow(
        "slow-secret", "Slow secret", "Prints its token, then waits a minute.",
        "echo token {params.token} >&2; echo says {params.token}; sleep 60; echo {params.label} > {output.note}"),
    "plain-note": one_rule_workflow("plain-note", "Plain note", "Nothing sensitive; fails saying so.",
                                    "echo nothing to hide >&2; exit 3"),
}


@pytest.fixture
def registry(tmp_path) -> Path:
    return make_registry(tmp_path / "registry", WORKFLOWS, with_git=True)


def config(root: Path, workflow: str, **params) -> Path:
    path = root / f"{workflow}.yaml"
    lines = [f"workflow: {workflow}", "params:"] + [f"  {k}: {v}" for k, v in params.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def plain_snakemake(root: Path, cfg: Path, *extra) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "snakemake", "--configfile", str(cfg), "--cores", "1", *extra],
                          cwd=root, env=clean_env(), capture_output=True, text=True, timeout=600)


def holding_secret(root: Path, run_dir: Path) -> list[str]:
    """Every file of the run folder (config.yaml aside) and of .snakemake/ whose bytes hold the secret."""
    found = []
    for base in (run_dir, root / ".snakemake"):
        for path in sorted(base.rglob("*")):
            if path.is_file() and not path.is_symlink() and path != run_dir / "config.yaml" \
                    and SECRET.encode() in path.read_bytes():
                found.append(path.relative_to(root).as_posix())
    return found


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def assert_logs_owner_only(run_dir: Path) -> None:
    assert mode(run_dir / "config.yaml") == 0o600
    assert mode(run_dir / "snakemake.log") == 0o600
    if (run_dir / "console.log").exists():
        assert mode(run_dir / "console.log") == 0o600
    stderr = [p for p in (run_dir / "stderr").rglob("*") if p.is_file()]
    assert stderr, "the job's stderr file is missing"
    assert mode(run_dir / "stderr") == 0o700 and {mode(p) for p in stderr} == {0o600}


def mark(root: Path) -> str:
    """What the secret is replaced by: its keyed hash under the registry's key, shortened."""
    return secrets.scrub(SECRET, [SECRET], secrets.existing_key(root))


def job_of(run_dir: Path, rule: str) -> dict:
    (job,) = [a for a in prov_jobs(run_dir).values() if a["sg:rule"] == rule]
    return job


@pytest.mark.parametrize("path", ["snakegate run", "snakemake"])
def test_a_failing_job_that_prints_its_secret_leaves_it_in_config_yaml_only(registry, path):
    cfg = config(registry, "leaky-note", token=SECRET)
    before = run_names(registry)
    proc = snakegate(registry, "run", cfg) if path == "snakegate run" else plain_snakemake(registry, cfg)
    assert proc.returncode != 0
    run_dir = new_run(registry, before)
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "failed" and record["failed_rule"] == "note"

    assert holding_secret(registry, run_dir) == []
    assert SECRET in (run_dir / "config.yaml").read_text()  # Snakemake needs it
    assert_logs_owner_only(run_dir)
    # the records still say what happened, the secret named by its keyed hash
    assert record["error"] == f"non-zero exit status 3: token {mark(registry)}"
    assert (run_dir / "stderr" / "note.log").read_text() == f"token {mark(registry)}\n"
    assert (run_dir / "logs" / "note.log").read_text() == f"logged {mark(registry)}\n"
    job = job_of(run_dir, "note")  # rebuilt from Snakemake's metadata, scrubbed in place
    assert job["sg:status"] == "failed" and mark(registry) in job["sg:shellCommand"]
    if path == "snakegate run":
        assert SECRET not in proc.stdout + proc.stderr  # its summary comes from the scrubbed record
        assert f"says {mark(registry)}" in (run_dir / "console.log").read_text()


def test_a_succeeding_job_shown_with_printshellcmds_leaves_no_secret_behind(registry):
    cfg = config(registry, "loud-note", token=SECRET, label="hello")
    before = run_names(registry)
    proc = plain_snakemake(registry, cfg, "--printshellcmds")
    assert proc.returncode == 0, proc.stderr
    assert SECRET in proc.stderr  # the terminal of the person who ran it: Snakemake's own printing
    run_dir = new_run(registry, before)
    assert json.loads((run_dir / "run.json").read_text())["status"] == "succeeded"
    assert holding_secret(registry, run_dir) == []
    assert_logs_owner_only(run_dir)
    job = job_of(run_dir, "note")
    assert job["sg:status"] == "succeeded" and mark(registry) in job["sg:shellCommand"]
    assert (run_dir / "results" / "note.txt").read_text() == "hello\n"  # outputs are never touched


def test_a_cancelled_run_leaves_no_secret_behind(registry):
    cfg = config(registry, "slow-secret", token=SECRET)
    front = start_snakegate_run(registry, cfg)
    assert wait_for(lambda: any(p.stat().st_size for p in files_under(registry, "*/stderr/note.log")), 90), \
        "the job never printed"
    os.kill(front.pid, signal.SIGTERM)
    out, err = front.communicate(timeout=120)
    (run_dir,) = [p for p in (registry / "runs").iterdir()]
    assert json.loads((run_dir / "run.json").read_text())["status"] == "cancelled"
    assert SECRET not in out + err
    assert holding_secret(registry, run_dir) == []
    assert_logs_owner_only(run_dir)


def test_a_run_killed_whole_is_scrubbed_when_it_is_completed_as_interrupted(registry):
    cfg = config(registry, "slow-secret", token=SECRET)
    front = start_plain_snakemake(registry, cfg, "--printshellcmds")  # the command is in Snakemake's log
    assert wait_for(lambda: any(p.stat().st_size for p in files_under(registry, "*/stderr/note.log")), 90), \
        "the job never printed"
    kill_group(front.pid)  # every process of the run dies at once: nothing gets to scrub anything
    front.communicate(timeout=30)
    (run_dir,) = [p for p in (registry / "runs").iterdir()]
    assert wait_for(lambda: not lock_is_held(run_dir), 30)  # SIGKILL reaches the group's processes one by one
    assert SECRET.encode() in (run_dir / "stderr" / "note.log").read_bytes()  # owner-only meanwhile
    assert_logs_owner_only_while_running(run_dir)

    listed = snakegate(registry, "runs", "--json")
    assert [r["status"] for r in json.loads(listed.stdout)["runs"]] == ["interrupted"]
    assert holding_secret(registry, run_dir) == []
    assert_logs_owner_only(run_dir)


def assert_logs_owner_only_while_running(run_dir: Path) -> None:
    assert mode(run_dir / "stderr") == 0o700 and mode(run_dir / "stderr" / "note.log") == 0o600


def test_a_run_without_sensitive_params_keeps_its_logs_readable(registry):
    cfg = config(registry, "plain-note")
    before = run_names(registry)
    proc = snakegate(registry, "run", cfg)
    assert proc.returncode != 0
    run_dir = new_run(registry, before)
    umask = os.umask(0)
    os.umask(umask)
    assert mode(run_dir / "console.log") == 0o644 & ~umask
    assert mode(run_dir / "stderr" / "note.log") == 0o644 & ~umask
    assert "nothing to hide" in json.loads((run_dir / "run.json").read_text())["error"]
