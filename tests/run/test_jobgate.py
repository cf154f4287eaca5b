"""The gate inside a job: Snakemake re-reads the top-level Snakefile in every job, and the job is held to its run.

A two-rule workflow of `run:` blocks makes Snakemake spawn a process per job
(as a cluster does), so a plain local run exercises the job side. Then a job is
started by hand exactly as Snakemake starts one (`--target-jobs ... --mode
remote`) against the finished run folder, with its config unchanged or
tampered with, as a user (or an attacker) could do on a cluster node.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from registry_copies import make_registry
from spawned_workflow import SPAWNED
from prov_iris import run_ident

@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(registry, run config, run folder) of a finished local run of `spawned`, made once: a test that
    changes one of its files puts it back."""
    tmp_path = tmp_path_factory.mktemp("jobgate")
    root = make_registry(tmp_path / "registry", {"spawned": SPAWNED})
    config = tmp_path / "run.yaml"
    config.write_text("workflow: spawned\nparams:\n  table: data/examples/tabular-penguins.csv\n")
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--configfile", str(config), "--cores", "1"],
                          cwd=root, capture_output=True, text=True, timeout=300, env=_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run_dir,) = (root / "runs").iterdir()
    return root, config, run_dir


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNAKEGATE_")}
    env.update(extra)
    return env


def job(root: Path, config: Path, run_id: str | None, rule: str = "wf_second",
        timeout: float = 300) -> subprocess.CompletedProcess:
    """One job, started the way Snakemake starts a job on a cluster node, with the head's environment."""
    env = _env(SNAKEGATE_JOB_RUN=run_id) if run_id else _env()
    return subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(root / "Snakefile"),
                           "--configfiles", str(config), "--target-jobs", f"{rule}:", "--mode", "remote",
                           "--cores", "1", "--force", "--nolock", "--no-hooks"],
                          cwd=root, capture_output=True, text=True, timeout=timeout, env=env)


def records(run_dir: Path) -> list[dict]:
    """The records the run's own jobs wrote (jobs started by hand below write `remote` ones)."""
    recs = [json.loads(p.read_text()) for p in sorted((run_dir / "jobs").glob("*.json"))]
    return [r for r in recs if r["mode"] == "subprocess"]


def test_each_spawned_job_passes_the_light_gate_and_records_itself(finished):
    _root, _config, run_dir = finished
    assert json.loads((run_dir / "run.json").read_text())["status"] == "succeeded"
    recs = {r["rule"]: r for r in records(run_dir)}
    assert set(recs) == {"wf_first", "wf_second"}
    for rec in recs.values():
        assert rec["mode"] == "subprocess" and rec["pid"] != os.getpid()
        assert rec["start"] <= rec["end"]
        assert rec["gate_seconds"] > 0 and rec["gate_cpu_seconds"] > 0


def test_the_prov_record_has_each_jobs_own_times_and_the_executor(finished):
    _root, _config, run_dir = finished
    prov = json.loads((run_dir / "prov.json").read_text())
    activities = prov["activity"]
    run = activities[f"{run_ident(run_dir)}"]
    assert run["sg:executor"] == "local"
    recs = {r["rule"]: r for r in records(run_dir)}
    job = activities[f"{run_ident(run_dir)}/job/second"]
    assert job["sg:executor"] == "local"
    from snakegate.provenance.jobs import epoch_text

    assert job["prov:startTime"] == epoch_text(recs["wf_second"]["start"])
    assert job["prov:endTime"] == epoch_text(recs["wf_second"]["end"])
    assert job["sg:node"] == recs["wf_second"]["node"] == socket.gethostname()  # where the job itself ran


def test_a_job_of_the_run_is_accepted(finished):
    root, config, run_dir = finished
    proc = job(root, config, run_dir.name)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (run_dir / "results" / "second.txt").read_text() == "HELLO\n"


def test_a_job_never_re_reads_the_inputs_the_head_already_hashed(finished):
    """The job side neither hashes the run's data inputs again nor falls back to the full gate (which
    would): with the gated table swapped for a FIFO nobody writes, reading it would block forever, and the
    job still runs and finishes."""
    root, config, run_dir = finished
    table = root / "data" / "examples" / "tabular-penguins.csv"
    kept = table.read_bytes()
    table.unlink()
    os.mkfifo(table)
    try:
        proc = job(root, config, run_dir.name, timeout=120)
    finally:
        table.unlink()
        table.write_bytes(kept)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (run_dir / "results" / "second.txt").read_text() == "HELLO\n"


def test_a_job_whose_config_claims_another_invocation_is_refused(finished, tmp_path):
    root, config, run_dir = finished
    output = run_dir / "results" / "second.txt"
    before = output.stat().st_mtime_ns
    tampered = tmp_path / "tampered.yaml"
    tampered.write_text(config.read_text() + "invocation_id: '" + "0" * 64 + "'\n")
    proc = job(root, tampered, run_dir.name)
    assert proc.returncode != 0
    assert "invocation_id [invocation_mismatch]: the run config's `invocation_id` is 000000000000…" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert output.stat().st_mtime_ns == before  # the job never ran


def test_a_job_whose_config_changed_a_param_is_refused(finished, tmp_path):
    root, config, run_dir = finished
    tampered = tmp_path / "tampered.yaml"
    tampered.write_text(config.read_text() + "  label: goodbye\n")
    proc = job(root, tampered, run_dir.name)
    assert proc.returncode != 0
    assert "params.label [invocation_mismatch]: param `label` differs from the value run" in proc.stderr


def test_a_job_whose_run_record_names_another_invocation_is_refused(finished):
    root, config, run_dir = finished
    record = run_dir / "invocation.json"
    original = record.read_text()
    data = json.loads(original)
    data["invocation_id"] = "f" * 64
    record.write_text(json.dumps(data))
    try:
        proc = job(root, config, run_dir.name)
    finally:
        record.write_text(original)
    assert proc.returncode != 0
    assert "has a config.yaml that is not invocation ffffffffffff…" in proc.stderr


def test_a_job_never_takes_the_registrys_changed_defaults(finished):
    root, config, run_dir = finished
    schema_file = root / "workflows" / "spawned" / "schema.json"
    original = schema_file.read_text()
    schema = json.loads(original)
    schema["properties"]["label"]["default"] = "changed"
    schema_file.write_text(json.dumps(schema))
    try:
        proc = job(root, config, run_dir.name, rule="wf_first")
    finally:
        schema_file.write_text(original)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (run_dir / "results" / "first.txt").read_text() == "hello\n"  # the value the run was gated with


def test_a_job_that_cannot_name_its_run_falls_back_to_the_full_gate(finished, tmp_path):
    root, config, run_dir = finished
    proc = job(root, config, None)  # no run_id in the config, and the head's variable did not reach it
    assert proc.returncode == 0, proc.stderr[-3000:]
    tampered = tmp_path / "tampered.yaml"
    tampered.write_text(config.read_text() + "  label: goodbye\n")
    proc = job(root, tampered, None)
    assert proc.returncode != 0
    assert "[invocation_mismatch]" in proc.stderr


def test_a_job_refuses_a_run_folder_config_whose_params_were_changed_after_the_gate(finished):
    root, config, run_dir = finished
    explicit = run_dir / "config.yaml"
    original = explicit.read_text()
    explicit.write_text(original.replace("label: hello", "label: changed"))
    try:
        proc = job(root, config, run_dir.name, rule="wf_first")
    finally:
        explicit.write_text(original)
    assert proc.returncode != 0
    assert "params [invocation_mismatch]" in proc.stderr and "whose params are not those of invocation" in proc.stderr


def test_a_job_refuses_a_workflow_copy_changed_after_the_gate(finished):
    root, config, run_dir = finished
    snakefile = run_dir / "workflow" / "Snakefile"
    original = snakefile.read_text()
    snakefile.chmod(0o644)
    snakefile.write_text(original + "\n# changed on the cluster\n")
    try:
        proc = job(root, config, run_dir.name)
    finally:
        snakefile.write_text(original)
        snakefile.chmod(0o444)
    assert proc.returncode != 0
    assert "workflow [invocation_mismatch]" in proc.stderr and "no longer has the content hash" in proc.stderr


def test_jobs_of_a_run_with_a_sensitive_param_pass_by_its_keyed_hash(tmp_path):
    from registry_copies import TOKEN_PARAM

    secret = dict(SPAWNED)
    schema = json.loads(secret["schema.json"])
    schema["properties"]["token"] = TOKEN_PARAM
    secret["schema.json"] = json.dumps(schema)
    secret["Snakefile"] = secret["Snakefile"].replace('label=config["label"],',
                                                      'label=config["label"],\n                token=config["token"],')
    root = make_registry(tmp_path / "registry", {"spawned": secret})
    config = tmp_path / "run.yaml"
    config.write_text("workflow: spawned\nparams:\n  table: data/examples/tabular-penguins.csv\n"
                      "  token: s3cret-token-value\n")
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--configfile", str(config), "--cores", "1"],
                          cwd=root, capture_output=True, text=True, timeout=300, env=_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run_dir,) = (root / "runs").iterdir()
    assert "hmac-sha256:" in (run_dir / "invocation.json").read_text()  # the record holds its keyed hash
    assert {r["rule"] for r in records(run_dir)} == {"wf_first", "wf_second"}  # both jobs passed the job gate
