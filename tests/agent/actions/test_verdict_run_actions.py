"""Issue 25 §1 for the model: `run_status`, `explain_run`, `list_runs` and `compare_runs` carry a finished run's
verdict, its failing checks with what failing means and the params to look at, and for a fork what changed
against its parent.

Real runs (tests/verdict_view_runs.py): pump-probe's contaminated-background example, whose two background checks
fail; the tiny `scored` workflow passing, and a fork of it that fails.
"""

from __future__ import annotations

import pytest

from snakegate.agent.actions.platform import ActionContext, call_action
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry


@pytest.fixture
def ctx(judged_registry) -> ActionContext:
    return ActionContext(Registry.load(judged_registry), load_settings(judged_registry))


def test_run_status_of_a_contaminated_run_gives_the_failing_checks_with_their_advice(ctx, contaminated_run):
    out = call_action(ctx, "run_status", {"run_id": contaminated_run.name})
    assert out.ok, out.result
    verdict = out.result["verdict"]
    assert out.result["status"] == "succeeded" and verdict["status"] == "fail"
    assert verdict["summary"] == "fail: 2 of 2 checks failed (background_uniform, background_mean_p)"
    uniform, mean_p = verdict["failing"]
    assert uniform["name"] == "background_uniform" and uniform["test"] == ">=" and uniform["threshold"] == 0.001
    assert uniform["value"] < 0.001 and uniform["measure"] == "/background/ks_pvalue"
    assert "Move background_roi away from the signal" in uniform["says"] and uniform["look_at"] == ["background_roi"]
    assert mean_p["look_at"] == ["background_roi", "signal_roi"]
    assert "failing_checks" not in out.result  # named once, in the verdict


def test_explain_run_gives_every_check_and_the_workflows_own_diagnosis(ctx, contaminated_run):
    out = call_action(ctx, "explain_run", {"run_id": contaminated_run.name})
    assert out.ok, out.result
    checks = out.result["verdict"]["checks"]
    assert [(c["name"], c["status"], c["needs"]) for c in checks] == [
        ("background_uniform", "fail", ">= 0.001"), ("background_mean_p", "fail", ">= -3")]
    assert out.result["diagnostics"]["results/diagnostics.json"]["verdict"] == "contaminated"


def test_list_runs_gives_each_runs_verdict_and_its_failing_checks(ctx, contaminated_run, passing_run):
    runs = {r["run_id"]: r for r in call_action(ctx, "list_runs", {"limit": 50}).result["runs"]}
    assert runs[contaminated_run.name]["verdict"] == "fail"
    assert runs[contaminated_run.name]["failing_checks"] == ["background_uniform", "background_mean_p"]
    assert runs[passing_run.name]["verdict"] == "pass" and "failing_checks" not in runs[passing_run.name]


def test_explain_run_of_a_fork_gives_what_changed_against_its_parent(ctx, forked_run, passing_run):
    out = call_action(ctx, "explain_run", {"run_id": forked_run.name}).result
    assert out["fork_of"] == passing_run.name
    assert out["changed_from_parent"] == [{"output": "metrics", "key": "score", "parent": 0.75, "value": 0.2}]
    assert out["verdict"]["failing"][0]["name"] == "score"


def test_compare_runs_gives_each_check_a_to_b(ctx, passing_run, forked_run):
    diff = call_action(ctx, "compare_runs", {"a": passing_run.name, "b": forked_run.name}).result
    assert diff["verdict"]["status"] == ["pass", "fail"]
    assert diff["verdict"]["checks"][0]["name"] == "score"
    assert diff["verdict"]["checks"][0]["value"] == [0.75, 0.2]
