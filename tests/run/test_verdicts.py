"""Issue 25 §1: every finished run gets a verdict in run.json, however it ended and whoever ended it.

Real `snakegate run` and plain `snakemake` runs of a tiny workflow with three checks (tests/verdict_runs.py),
real signals sent by PID for a killed run, a real plan of two steps; the record is read from run.json and
proved by `snakegate verify` (the seal covers the verdict).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from run_faults import (
    PYTHON, alive, env_for, files_under, kill_group, processes_in, record_of, run_dirs, start_plain_snakemake,
    start_snakegate_run, wait_for,
)
from snakegate.provenance.runlock import lock_is_held
from registry_copies import IGNORE, REPO
from verdict_runs import SCORED, checks_of, scored_config, scored_registry


@pytest.fixture
def registry(tmp_path) -> Path:
    return scored_registry(tmp_path / "registry")


def sg(root: Path, *args) -> subprocess.CompletedProcess:
    proc = subprocess.run([PYTHON, "-m", "snakegate.cli", *map(str, args)], cwd=root, env=env_for(root),
                          capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def the_run(root: Path) -> Path:
    (run_dir,) = run_dirs(root)
    return run_dir


def test_a_succeeded_run_records_a_passing_verdict_with_each_checks_measured_value(registry, tmp_path):
    proc = sg(registry, "run", scored_config(tmp_path / "c.yaml", score=0.75))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = record_of(the_run(registry))
    assert record["status"] == "succeeded" and record["verdict"]["status"] == "pass"
    checks = checks_of(record)
    assert list(checks) == ["score", "values_mean", "summarized"]  # workflow.yaml's order
    assert checks["score"] == {
        "name": "score", "status": "pass", "value": 0.75, "test": ">=", "threshold": 0.5, "threshold_param": "floor",
        "says": "The score is below the floor; raise score.", "params": ["score"], "output": "metrics",
        "measure": "/score"}
    assert (checks["values_mean"]["value"], checks["values_mean"]["measure"]) == (2.0, "mean(v)")
    assert checks["summarized"]["value"] == 3


def test_a_value_below_its_param_threshold_fails_the_run_verdict_and_the_seal_covers_it(registry, tmp_path):
    proc = sg(registry, "run", scored_config(tmp_path / "c.yaml", score=0.3, floor=0.4))
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the run succeeded; its verdict is another matter
    run_dir = the_run(registry)
    record = record_of(run_dir)
    assert record["status"] == "succeeded" and record["verdict"]["status"] == "fail"
    score = checks_of(record)["score"]
    assert (score["status"], score["value"], score["threshold"]) == ("fail", 0.3, 0.4)
    assert sg(registry, "verify", run_dir.name).returncode == 0
    # a verdict rewritten afterwards is caught: the seal covers run.json
    record["verdict"]["status"] = "pass"
    (run_dir / "run.json").write_text(json.dumps(record))
    verify = sg(registry, "verify", run_dir.name)
    assert verify.returncode != 0 and "run.json" in verify.stdout + verify.stderr


def test_plain_snakemake_records_the_same_verdict_as_snakegate_run(registry, tmp_path):
    config = scored_config(tmp_path / "c.yaml", score=0.3)
    proc = start_plain_snakemake(registry, config)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, out + err
    plain = record_of(the_run(registry))
    assert plain["source"] != "snakegate run" and plain["stage"] == "finished"
    assert sg(registry, "run", config).returncode == 0
    ran = record_of(next(r for r in run_dirs(registry) if r.name != plain["run_id"]))
    assert plain["verdict"] == ran["verdict"] and plain["verdict"]["status"] == "fail"


def test_a_failed_run_judges_what_it_made_and_leaves_the_missing_output_unknown(registry, tmp_path):
    proc = sg(registry, "run", scored_config(tmp_path / "c.yaml", fail=True))
    assert proc.returncode != 0
    record = record_of(the_run(registry))
    assert record["status"] == "failed"
    checks = checks_of(record)
    assert (checks["score"]["status"], checks["values_mean"]["status"]) == ("pass", "pass")
    assert checks["summarized"]["status"] == "unknown" and checks["summarized"]["value"] is None
    assert checks["summarized"]["reason"] == "output `summary` was not written"
    assert record["verdict"]["status"] == "unknown"


def waiting_in_its_last_job(registry: Path, tmp_path: Path):
    """`snakegate run` whose first two jobs finished (their records written) and whose last one sleeps:
    (the front end, the run folder, Snakemake's pid)."""
    front = start_snakegate_run(registry, scored_config(tmp_path / "c.yaml", sleep=60))
    assert wait_for(lambda: files_under(registry, "*/results/values.csv") and
                    files_under(registry, "*/hashes/*.json")[1:], 90), "the first jobs never finished"
    run_dir = the_run(registry)
    return front, run_dir, record_of(run_dir)["snakemake_pid"]


def test_a_run_killed_whole_is_judged_when_it_is_found_interrupted(registry, tmp_path):
    front, run_dir, snakemake_pid = waiting_in_its_last_job(registry, tmp_path)
    kill_group(front.pid)
    kill_group(snakemake_pid)
    front.communicate(timeout=30)
    assert wait_for(lambda: not alive(snakemake_pid) and not processes_in(run_dir) and not lock_is_held(run_dir), 30)
    assert "verdict" not in record_of(run_dir)

    listed = json.loads(sg(registry, "runs", "--json").stdout)["runs"]
    assert [r["status"] for r in listed] == ["interrupted"]
    checks = checks_of(record_of(run_dir))
    assert (checks["score"]["status"], checks["values_mean"]["status"]) == ("pass", "pass")
    assert checks["summarized"]["status"] == "unknown"
    assert sg(registry, "verify", run_dir.name).returncode == 0  # sealed with its verdict


def test_when_snakemake_dies_before_its_handlers_snakegate_run_records_the_verdict(registry, tmp_path):
    front, run_dir, snakemake_pid = waiting_in_its_last_job(registry, tmp_path)
    kill_group(snakemake_pid)  # Snakemake and its jobs, not the front end, which records the end itself
    front.communicate(timeout=120)
    record = record_of(run_dir)
    assert record["status"] == "failed" and record["stage"] == "finished"
    checks = checks_of(record)
    assert checks["score"]["status"] == "pass" and checks["summarized"]["status"] == "unknown"
    assert wait_for(lambda: not processes_in(run_dir), 30)


def test_a_plan_run_names_each_steps_checks_after_its_step(registry, tmp_path):
    plan = tmp_path / "plan.yaml"
    plan.write_text("plan: two-scores\nsteps:\n  high:\n    workflow: scored\n    params: {score: 0.9}\n"
                    "  low:\n    workflow: scored\n    params: {score: 0.1}\n")
    proc = sg(registry, "run", plan)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = record_of(the_run(registry))
    assert record["kind"] == "plan" and record["verdict"]["status"] == "fail"
    checks = checks_of(record)
    assert sorted(checks) == ["high.score", "high.summarized", "high.values_mean",
                              "low.score", "low.summarized", "low.values_mean"]
    assert (checks["high.score"]["status"], checks["low.score"]["status"]) == ("pass", "fail")
    assert checks["low.score"]["output"] == "low.metrics" and checks["low.score"]["value"] == 0.1


def test_a_pump_probe_run_with_a_contaminated_background_roi_fails_both_background_checks(registry, tmp_path):
    shutil.copytree(REPO / "workflows" / "pump-probe", registry / "workflows" / "pump-probe", ignore=IGNORE)
    shutil.copytree(REPO / "data" / "examples" / "pump-probe", registry / "data" / "examples" / "pump-probe")
    config = tmp_path / "contaminated.yaml"
    config.write_text((REPO / "workflows/pump-probe/examples/contaminated-background.yaml").read_text()
                      + "  n_bootstrap: 100\n")
    proc = sg(registry, "run", config)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run_dir = the_run(registry)
    record = record_of(run_dir)
    assert record["verdict"]["status"] == "fail"
    diagnostics = json.loads((run_dir / "results" / "diagnostics.json").read_text())
    assert diagnostics["verdict"] == "contaminated"  # the workflow's own word agrees
    checks = checks_of(record)
    assert (checks["background_uniform"]["status"], checks["background_uniform"]["value"]) == \
        ("fail", diagnostics["background"]["ks_pvalue"])
    assert (checks["background_mean_p"]["status"], checks["background_mean_p"]["value"]) == \
        ("fail", diagnostics["background"]["z_score"])
    assert checks["background_uniform"]["params"] == ["background_roi"]
    assert "Move background_roi away from the signal" in checks["background_uniform"]["says"]


def test_a_sensitive_param_never_reaches_a_verdict_even_in_a_workflow_no_check_proved(tmp_path):
    schema = json.loads(SCORED["schema.json"])
    schema["properties"]["floor"]["x-sensitive"] = True  # `snakegate check` refuses this; a run must not leak it
    secret = dict(SCORED, **{"workflow.yaml": SCORED["workflow.yaml"].replace("id: scored", "id: scored-secret"),
                            "schema.json": json.dumps(schema)})
    registry = scored_registry(tmp_path / "registry", **{"scored-secret": secret})
    config = tmp_path / "c.yaml"
    config.write_text("workflow: scored-secret\nparams: {floor: 0.4321}\n")
    proc = sg(registry, "run", config)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run_dir = the_run(registry)
    score = checks_of(record_of(run_dir))["score"]
    assert (score["status"], score["threshold"]) == ("unknown", None)
    assert score["reason"] == "the threshold is param `floor`, which has no value in this run"
    assert "0.4321" not in (run_dir / "run.json").read_text() + (run_dir / "prov.json").read_text()


def test_a_fork_is_judged_on_its_own_outputs_and_the_ones_it_reused_from_its_parent(registry, tmp_path):
    assert sg(registry, "run", scored_config(tmp_path / "c.yaml")).returncode == 0
    parent = the_run(registry)
    proc = sg(registry, "fork", parent.name, "--set", "score=0.2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fork = next(r for r in run_dirs(registry) if r != parent)
    record = record_of(fork)
    assert "results/values.csv" in {r["path"] for r in record["reused"]}  # copied from the parent, not re-made
    checks = checks_of(record)
    assert (checks["score"]["status"], checks["score"]["value"]) == ("fail", 0.2)
    assert (checks["values_mean"]["status"], checks["values_mean"]["value"]) == ("pass", 2.0)
    assert checks_of(record_of(parent))["score"]["status"] == "pass"  # the parent's verdict stands
