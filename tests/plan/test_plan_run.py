"""One approval, one DAG, one record (issue 24.4): a plan runs once as one Snakemake DAG, each step under
runs/<id>/steps/<step>/, from `snakegate run` and from plain `snakemake --configfile plan.yaml` alike.

Its outputs are byte-identical to running the steps one after another by hand with the same params; its
PROV record has a sub-activity per step (with workflow, version and content hash), the data flow between
steps as plain used/wasGeneratedBy, and the plan as the plan entity; it verifies and is sealed. A plan
whose step runs its jobs in processes of their own passes the job gate in every job. Real Snakemake.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
import yaml

from registry_copies import REPO, clean_env, make_registry, run_names, snakegate
from spawned_workflow import SPAWNED
from prov_iris import run_ident

COLUMNS = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "sex"]
CLEAN_PARAMS = {"dataset_file": "data/examples/tabular-penguins.csv", "columns": COLUMNS}
PLAN = {"plan": "sex-from-size", "steps": {
    "clean": {"workflow": "tabular-profile", "params": CLEAN_PARAMS},
    "bench": {"workflow": "classifier-benchmark",
              "params": {"dataset": {"from": "clean", "output": "cleaned"}, "label_column": "sex"}}}}


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    root = make_registry(tmp_path_factory.mktemp("planrun") / "registry", {"spawned": SPAWNED}, with_git=True)
    shutil.copytree(REPO / "workflows" / "classifier-benchmark", root / "workflows" / "classifier-benchmark",
                    ignore=shutil.ignore_patterns("__pycache__", ".snakemake"))
    (root / "plan.yaml").write_text(yaml.safe_dump(PLAN, sort_keys=False))
    return root


def _new(root, before):
    (name,) = run_names(root) - before
    return root / "runs" / name


@pytest.fixture(scope="module")
def runs(registry):
    """The plan run by `snakegate run` and by plain snakemake, and its two steps run by hand."""
    out = {}
    before = run_names(registry)
    proc = snakegate(registry, "run", "plan.yaml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out["snakegate"] = _new(registry, before)
    before = run_names(registry)
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--configfile", "plan.yaml", "--cores", "2"],
                          cwd=registry, env=clean_env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out["snakemake"] = _new(registry, before)
    # by hand: the first workflow, then the second on a copy of its output
    (registry / "clean.yaml").write_text(yaml.safe_dump({"workflow": "tabular-profile", "params": CLEAN_PARAMS}))
    before = run_names(registry)
    assert snakegate(registry, "run", "clean.yaml").returncode == 0
    out["clean"] = _new(registry, before)
    shutil.copy(out["clean"] / "results" / "cleaned.csv", registry / "data" / "examples" / "handoff.csv")
    (registry / "bench.yaml").write_text(yaml.safe_dump({"workflow": "classifier-benchmark", "params": {
        "dataset": "data/examples/handoff.csv", "label_column": "sex"}}))
    before = run_names(registry)
    assert snakegate(registry, "run", "bench.yaml").returncode == 0
    out["bench"] = _new(registry, before)
    return out


@pytest.mark.parametrize("path", ["snakegate", "snakemake"])
def test_a_plan_runs_once_with_each_step_under_its_own_prefix(runs, path):
    run_dir = runs[path]
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "succeeded" and record["kind"] == "plan"
    assert record["plan"] == {"label": "sex-from-size",
                              "steps": {"clean": "tabular-profile", "bench": "classifier-benchmark"}}
    for step, output in (("clean", "results/cleaned.csv"), ("bench", "results/metrics.json")):
        assert (run_dir / "steps" / step / output).is_file()
        assert (run_dir / "steps" / step / "workflow" / "workflow.yaml").is_file()  # the step's own copy
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert config["steps"]["bench"]["params"]["dataset"] == {"from": "clean", "output": "cleaned"}


@pytest.mark.parametrize("path", ["snakegate", "snakemake"])
def test_a_plans_outputs_match_its_steps_run_one_after_another_by_hand(runs, path):
    run_dir = runs[path]
    for name in ("cleaned.csv", "profile.json", "profile.png"):
        assert (run_dir / "steps/clean/results" / name).read_bytes() == (runs["clean"] / "results" / name).read_bytes()
    for name in ("metrics.json", "model.json", "confusion.png"):
        assert (run_dir / "steps/bench/results" / name).read_bytes() == (runs["bench"] / "results" / name).read_bytes()


def test_a_plan_run_by_snakegate_and_by_plain_snakemake_has_one_invocation_id(runs):
    ids = {json.loads((runs[p] / "invocation.json").read_text())["invocation_id"] for p in ("snakegate", "snakemake")}
    assert len(ids) == 1


def test_the_plan_record_has_a_sub_activity_per_step_and_the_data_flow_between_them(runs):
    run_dir = runs["snakegate"]
    prov = json.loads((run_dir / "prov.json").read_text())
    activities = prov["activity"]
    run = run_ident(run_dir)
    steps = {a["sg:step"]: (ident, a) for ident, a in activities.items()
             if "sg:PlanStep" in json.dumps(a.get("prov:type")) and "sg:step" in a}
    assert set(steps) == {"clean", "bench"}
    for name, workflow in (("clean", "tabular-profile"), ("bench", "classifier-benchmark")):
        _ident, attrs = steps[name]
        assert attrs["sg:workflow"] == workflow and attrs["sg:version"]
        assert len(attrs["sg:workflowHash"]) == 64
        assert attrs["wfprov:wasPartOfWorkflowRun"]["$"] == run
    # every job is part of its step's activity
    jobs = {i: a for i, a in activities.items() if "/job/" in i}
    assert jobs and all(a["wfprov:wasPartOfWorkflowRun"]["$"] == steps[a["sg:step"]][0] for a in jobs.values())
    # the data flow: a job of bench used the file a job of clean generated
    generated = {r["prov:entity"]: r["prov:activity"] for r in prov["wasGeneratedBy"].values()}
    crossing = [r for r in prov["used"].values() if "/job/bench__" in r["prov:activity"]
                and "/job/clean__" in generated.get(r["prov:entity"], "")]
    assert crossing, "no job of step bench used a file a job of step clean made"
    # the plan itself: a prov:Plan whose sub-processes are the steps' workflows
    plans = [e for e in prov["entity"].values() if "sg:Plan" in json.dumps(e.get("prov:type"))]
    assert len(plans) == 1 and plans[0]["sg:planLabel"] == "sex-from-size"
    # each step's workflow is part of the registry snapshot (its git commit) and carries its git tree
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=run_dir.parent.parent, capture_output=True,
                            text=True).stdout.strip()
    assert prov["entity"][f"registry:{commit}"]["sg:gitCommit"] == commit
    wfs = {e["sg:workflowId"]: e for e in prov["entity"].values() if e.get("sg:workflowId")}
    assert all(wf["dct:isPartOf"]["$"] == f"registry:{commit}" for wf in wfs.values())
    assert wfs["tabular-profile"]["sg:gitTree"] and wfs["tabular-profile"]["sg:gitTreeDirty"] is False
    # classifier-benchmark was copied into the registry after its commit: no tree, and said to be uncommitted
    assert "sg:gitTree" not in wfs["classifier-benchmark"] and wfs["classifier-benchmark"]["sg:gitTreeDirty"] is True


def test_a_plan_run_verifies_and_is_sealed(runs, registry):
    proc = snakegate(registry, "verify", runs["snakegate"].name)
    assert proc.returncode == 0, proc.stdout
    assert "sealed: seal" in proc.stdout


def test_every_job_of_a_plan_whose_steps_spawn_processes_passes_the_job_gate(registry, tmp_path):
    plan = {"steps": {"clean": {"workflow": "tabular-profile", "params": CLEAN_PARAMS},
                      "shout": {"workflow": "spawned", "params": {"table": {"from": "clean", "output": "cleaned"}}}}}
    config = tmp_path / "spawned-plan.yaml"
    config.write_text(yaml.safe_dump(plan))
    before = run_names(registry)
    proc = snakegate(registry, "run", config)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run_dir = _new(registry, before)
    assert (run_dir / "steps" / "shout" / "results" / "second.txt").read_text() == "HELLO\n"
    jobs = [json.loads(p.read_text()) for p in (run_dir / "jobs").glob("*.json")]
    assert {j.get("rule") for j in jobs if j.get("mode") == "subprocess"} >= {"wf_shout__first", "wf_shout__second"}


def _fork(registry, parent, *args):
    before = run_names(registry)
    proc = snakegate(registry, "fork", parent.name, *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run_dir = _new(registry, before)
    return json.loads((run_dir / "run.json").read_text()), run_dir


def test_a_fork_of_a_plan_re_runs_only_the_changed_step(runs, registry):
    record, run_dir = _fork(registry, runs["snakegate"], "--set", "bench.model=random_forest")
    assert record["status"] == "succeeded"
    assert all(rule.startswith("bench__") for rule in record["jobs_executed"])
    assert record["fork_changes"] == {"bench.model": "random_forest"}
    # the clean step's outputs are the parent's, reused
    assert (run_dir / "steps/clean/results/cleaned.csv").read_bytes() == \
        (runs["snakegate"] / "steps/clean/results/cleaned.csv").read_bytes()


def test_a_fork_changing_an_early_step_re_runs_it_and_every_step_after_it(runs, registry):
    record, _run_dir = _fork(registry, runs["snakegate"], "--set", "clean.drop_duplicates=false")
    executed = set(record["jobs_executed"])
    assert "clean__clean" in executed and "bench__train" in executed
    assert "clean__load" not in executed  # what the change leaves alone is reused


def test_a_fork_of_a_plan_that_breaks_an_edge_is_refused_before_anything_runs(runs, registry):
    before = run_names(registry)
    proc = snakegate(registry, "fork", runs["snakegate"].name, "--set", "bench.label_column=island")
    assert proc.returncode == 1
    assert "steps.bench.params.label_column" in proc.stderr and "column_missing" in proc.stderr
    assert run_names(registry) == before


def test_a_step_of_a_plan_can_be_replaced_and_the_plan_is_gated_again(runs, registry):
    record, run_dir = _fork(registry, runs["snakegate"], "--replace", "bench=spawned",
                            "--set", "bench.table={from: clean, output: cleaned}")
    assert record["status"] == "succeeded"
    assert record["plan"]["steps"] == {"clean": "tabular-profile", "bench": "spawned"}
    assert (run_dir / "steps" / "bench" / "results" / "second.txt").read_text() == "HELLO\n"
    assert not (run_dir / "steps" / "bench" / "results" / "metrics.json").exists()  # nothing of the old step


def test_a_step_can_be_added_to_a_plan_taking_an_earlier_steps_output(runs, registry):
    record, run_dir = _fork(registry, runs["snakegate"], "--add", "shout=spawned",
                            "--set", "shout.table={from: clean, output: cleaned}")
    assert record["status"] == "succeeded"
    assert set(record["jobs_executed"]) == {"shout__first", "shout__second"}
    assert (run_dir / "steps" / "shout" / "results" / "second.txt").is_file()
