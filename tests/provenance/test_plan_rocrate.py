"""`snakegate export --ro-crate` of a plan's run: a Workflow Run RO-Crate whose main workflow is the plan and whose
parts are its steps' workflows, every job a CreateAction; roc-validator's Provenance Run Crate profile passes at
REQUIRED for a plan, its fork and a plan killed mid-run, and only the RECOMMENDED items one workflow's crate leaves
(tests/provenance/test_rocrate.py, with the README's reasons) remain.

The runs are the session's real plan runs (tests/plan_runs.py); roc-validator runs as its own command
(SNAKEGATE_ROC_VALIDATOR, as test_rocrate.py; the tests that need it skip without it).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from snakegate.provenance.rocrate import validate as rocval

from plan_runs import PLAN_SECRET
from registry_copies import snakegate
from test_rocrate import LEFT_EVERYWHERE, LEFT_WHEN_STOPPED

KINDS = ("plan", "plan_fork", "plan_interrupted")


@pytest.fixture
def plan_of(request):
    return request.getfixturevalue(f"{request.param}_run")


def export(registry: Path, run_dir: Path, dest: Path) -> dict:
    proc = snakegate(registry, "export", run_dir.name, "--ro-crate", dest)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads((dest / "ro-crate-metadata.json").read_text())


def _types(entity: dict) -> list[str]:
    return entity["@type"] if isinstance(entity["@type"], list) else [entity["@type"]]


def _ids(value) -> list[str]:
    return [v["@id"] for v in (value if isinstance(value, list) else [value] if value else [])]


@pytest.mark.parametrize("plan_of", KINDS, indirect=True)
def test_the_crate_of_a_plan_run_passes_the_provenance_run_crate_profile_at_required(
        plan_of, plan_registry, tmp_path, roc_validator, request):
    dest = tmp_path / "crate"
    export(plan_registry, plan_of, dest)
    issues = rocval.validate(dest, severity="recommended")  # RECOMMENDED and above: REQUIRED ones too
    assert [str(i) for i in issues if i.severity == "REQUIRED"] == []
    stopped = request.node.callspec.id == "plan_interrupted"
    left = {issue.check for issue in issues}
    assert left <= LEFT_EVERYWHERE | (LEFT_WHEN_STOPPED if stopped else set()), left


def test_the_plan_is_the_main_workflow_and_each_steps_workflow_a_part_of_it(plan_registry, plan_run, tmp_path):
    dest = tmp_path / "crate"
    graph = {e["@id"]: e for e in export(plan_registry, plan_run, dest)["@graph"]}
    main = graph[graph["./"]["mainEntity"]["@id"]]
    assert main["@id"] == "plan.yaml" and {"ComputationalWorkflow", "HowTo", "File"} <= set(_types(main))
    assert graph[main["programmingLanguage"]["@id"]]["name"] == "snakegate plan"
    steps = {name: f"runs/{plan_run.name}/steps/{name}/workflow/Snakefile" for name in ("clean", "bench", "note")}
    assert _ids(main["hasPart"]) == list(steps.values())
    for name, snakefile in steps.items():
        step_wf = graph[snakefile]
        assert "ComputationalWorkflow" in _types(step_wf) and graph[step_wf["programmingLanguage"]["@id"]]["name"] \
            == "Snakemake"
        assert step_wf["sha256"] == hashlib.sha256((dest / snakefile).read_bytes()).hexdigest()
    howtos = [graph[i] for i in _ids(main["step"])]
    assert [(h["name"], h["position"], h["workExample"]["@id"]) for h in howtos] == [
        (f"step {name}", str(i), snakefile) for i, (name, snakefile) in enumerate(steps.items())]
    plan = (dest / "plan.yaml").read_text()
    assert "dataset:\n        from: clean\n        output: cleaned" in plan and PLAN_SECRET not in plan


def test_an_edge_is_a_parameter_connection_from_the_upstream_output_to_the_consuming_input(plan_registry, plan_run,
                                                                                          tmp_path):
    graph = {e["@id"]: e for e in export(plan_registry, plan_run, tmp_path / "crate")["@graph"]}
    connections = [e for e in graph.values() if e.get("@type") == "ParameterConnection"]
    assert [c["name"] for c in connections] == ["bench.dataset ← clean.cleaned"]
    source, target = graph[connections[0]["sourceParameter"]["@id"]], graph[connections[0]["targetParameter"]["@id"]]
    bench, clean = (graph[f"runs/{plan_run.name}/steps/{s}/workflow/Snakefile"] for s in ("bench", "clean"))
    assert source["@id"] in _ids(clean["output"]) and source["name"] == "cleaned"
    assert target["@id"] in _ids(bench["input"]) and target["name"] == "dataset"
    assert _ids(graph["#plan-step-bench"]["connection"]) == [connections[0]["@id"]]


def test_every_job_is_a_create_action_of_its_rule_and_every_step_one_of_its_workflow(plan_registry, plan_run,
                                                                                     tmp_path):
    graph = {e["@id"]: e for e in export(plan_registry, plan_run, tmp_path / "crate")["@graph"]}
    actions = [e for e in graph.values() if e.get("@type") == "CreateAction"]
    jobs = {a["name"]: a for a in actions if a["@id"].startswith("#job-")}
    record = json.loads((plan_run / "run.json").read_text())
    assert sorted(j.removeprefix("job ") for j in jobs) == sorted(record["jobs_executed"])
    for name, job in jobs.items():
        step, rule = name.removeprefix("job ").split("__")
        tool = graph[job["instrument"]["@id"]]
        assert tool["name"] == f"rule {rule}"
        assert tool["@id"] in _ids(graph[f"runs/{plan_run.name}/steps/{step}/workflow/Snakefile"]["hasPart"])
    steps = {a["name"]: a for a in actions if a["@id"].startswith("#step-run-")}
    assert set(steps) == {f"step {s} of run {plan_run.name}" for s in ("clean", "bench", "note")}
    bench = steps[f"step bench of run {plan_run.name}"]
    assert bench["instrument"]["@id"] == f"runs/{plan_run.name}/steps/bench/workflow/Snakefile"
    assert f"runs/{plan_run.name}/steps/clean/results/cleaned.csv" in _ids(bench["object"])  # what it took from clean
    assert f"runs/{plan_run.name}/steps/bench/results/metrics.json" in _ids(bench["result"])
    run = next(a for a in actions if a["@id"].startswith("#run-"))
    assert run["instrument"]["@id"] == "plan.yaml"
    assert "data/examples/tabular-penguins.csv" in _ids(run["object"])
    organize = next(e for e in graph.values() if e.get("@type") == "OrganizeAction")
    controls = [graph[i] for i in _ids(organize["object"])]
    assert {c["instrument"]["@id"] for c in controls} >= {"#plan-step-clean", "#plan-step-bench", "#plan-step-note"}


def test_a_plan_forks_crate_carries_the_parent_jobs_of_the_steps_it_copied(plan_registry, plan_fork_run, plan_run,
                                                                          tmp_path):
    graph = {e["@id"]: e for e in export(plan_registry, plan_fork_run, tmp_path / "crate")["@graph"]}
    jobs = [e["name"] for e in graph.values() if e.get("@type") == "CreateAction" and e["@id"].startswith("#job-")]
    assert sorted(jobs) == sorted(["job bench__train", "job bench__evaluate",
                                   *[f"job {r} (run {plan_run.name})" for r in
                                     ("clean__load", "clean__clean", "clean__profile", "clean__plot", "bench__load",
                                      "bench__split", "note__note")]])


def test_no_sensitive_value_of_a_step_reaches_the_crate(plan_registry, plan_run, tmp_path):
    dest = tmp_path / "crate"
    graph = export(plan_registry, plan_run, dest)["@graph"]
    for path in dest.rglob("*"):
        if path.is_file():
            assert PLAN_SECRET.encode() not in path.read_bytes(), path
    token = next(e for e in graph if e["@id"] == "#pv-note-token")
    assert token["value"].startswith("hmac-sha256:")


def test_every_file_in_a_plan_crate_carries_its_sha256_and_format(plan_registry, plan_run, tmp_path):
    dest = tmp_path / "crate"
    graph = export(plan_registry, plan_run, dest)["@graph"]
    files = [e for e in graph if "File" in _types(e)]
    assert len(files) > 20
    for entity in files:
        assert entity["sha256"] == hashlib.sha256((dest / entity["@id"]).read_bytes()).hexdigest(), entity["@id"]
        assert entity["encodingFormat"], entity["@id"]
