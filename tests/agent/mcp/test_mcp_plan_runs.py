"""Over MCP, list_runs, run_status, explain_run and compare_runs read a plan's run as a plan: its label and steps,
the edges between them, each step's params (a sensitive one redacted) and the key numbers of its outputs; a plan
killed mid-run is explained as interrupted. SDK client, real `snakegate mcp` process, on the session's real plan
runs (tests/plan_runs.py).
"""

from __future__ import annotations

import json

from mcp_session import McpSession
from plan_runs import PLAN_LABEL, PLAN_SECRET
from registry_copies import snakegate

STEPS = [{"name": "clean", "workflow": "tabular-profile", "version": "1.0.0"},
         {"name": "bench", "workflow": "classifier-benchmark", "version": "1.0.0"},
         {"name": "note", "workflow": "secret-note", "version": "0.1.0"}]


def test_list_runs_names_a_plans_steps_and_finds_it_by_a_steps_workflow(plan_registry, plan_run, plan_fork_run):
    with McpSession.stdio(plan_registry) as s:
        listed = s.result(s.call("list_runs", {"limit": 50}))["runs"]
        by_step = s.result(s.call("list_runs", {"workflow": "classifier-benchmark"}))["runs"]
    row = next(r for r in listed if r["run_id"] == plan_run.name)
    assert row["kind"] == "plan" and row["plan"] == PLAN_LABEL
    assert row["steps"] == {"clean": "tabular-profile", "bench": "classifier-benchmark", "note": "secret-note"}
    assert {r["run_id"] for r in by_step} == {plan_run.name, plan_fork_run.name}


def test_run_status_and_explain_run_name_the_steps_edges_and_params_of_a_plan(plan_registry, plan_run):
    with McpSession.stdio(plan_registry) as s:
        status = s.result(s.call("run_status", {"run_id": plan_run.name}))
        explained = s.result(s.call("explain_run", {"run_id": plan_run.name}))
        answers = list(s.responses)
    for out in (status, explained):
        assert out["kind"] == "plan" and out["plan"] == PLAN_LABEL and out["steps"] == STEPS
        assert out["edges"] == ["bench.dataset ← clean.cleaned"]
    assert status["params"]["bench"]["dataset"] == {"from": "clean", "output": "cleaned"}
    assert status["params"]["note"]["token"] == "<redacted>" and status["params"]["clean"]["columns"][-1] == "sex"
    assert {o["name"] for o in status["outputs"]} >= {"clean.cleaned", "bench.metrics", "note.note"}
    assert "accuracy" in explained["key_numbers"]["bench.metrics"]
    assert all(PLAN_SECRET not in a for a in answers)


def test_explain_run_of_a_plan_killed_mid_run_says_interrupted(plan_registry, plan_interrupted_run):
    snakegate(plan_registry, "runs")  # the CLI completes a run nobody finished (the run actions only read)
    with McpSession.stdio(plan_registry) as s:
        explained = s.result(s.call("explain_run", {"run_id": plan_interrupted_run.name}))
    assert explained["status"] == "interrupted"
    assert [st["name"] for st in explained["steps"]] == ["clean", "wait"]
    assert explained["edges"] == ["wait.table ← clean.cleaned"]


def test_compare_runs_of_a_plan_and_its_fork_shows_the_one_changed_param_and_no_secret(plan_registry, plan_run,
                                                                                      plan_fork_run):
    with McpSession.stdio(plan_registry) as s:
        diff = s.result(s.call("compare_runs", {"a": plan_run.name, "b": plan_fork_run.name}))
    assert diff["params"] == [{"path": "steps.bench.params.model", "change": "changed", "a": "logistic_regression",
                               "b": "random_forest"}]
    assert [st["status"] for st in diff["steps"]] == ["identical", "changed", "identical"]
    assert PLAN_SECRET not in json.dumps(diff)
