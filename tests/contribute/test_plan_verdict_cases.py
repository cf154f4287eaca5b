"""Issue 25 §1: `snakegate test` judges a curated plan's verdict as it judges a workflow's test case:
plans/<id>/verdict.yaml says what the plan's run must get (`verdict:` and `checks: {<step>.<check>: ...}`),
and without it a plan whose steps declare checks must pass every one.

A real plan of two steps of the tiny `scored` workflow (tests/verdict_runs.py): `high` passes its score check,
`low` (score 0.1) fails it, so the plan's verdict is `fail`. run_plan runs it for real, as `snakegate test` does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verdict_runs import scored_registry
from snakegate.commands.check_cmds import print_case
from snakegate.contribute.plancases import judge_plan, run_plan
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry

PLAN = ("plan: two-scores\nsteps:\n  high:\n    workflow: scored\n    params: {score: 0.9}\n"
        "  low:\n    workflow: scored\n    params: {score: 0.1}\n")


@pytest.fixture
def plan(tmp_path) -> Path:
    root = scored_registry(tmp_path / "registry")
    (root / "plans").mkdir()
    path = root / "plans" / "two-scores.yaml"
    path.write_text(PLAN)
    return path


def run(plan: Path, update: bool = False):
    root = plan.parents[1]
    return run_plan(plan, Registry.load(root), load_settings(root), update=update)


def verdict_of(result):
    (found,) = [o for o in result.outputs if o.name == "verdict"]
    return found


def test_a_plan_whose_run_gets_the_verdict_its_file_expects_passes(plan, capsys):
    (plan.parent / "two-scores").mkdir()
    (plan.parent / "two-scores" / "verdict.yaml").write_text(
        "verdict: fail\nchecks: {low.score: fail, high.score: pass}\n")
    result = run(plan, update=True)  # writes the expected outputs the first time
    found = verdict_of(result)
    assert result.ok, result
    assert (found.status, found.path) == ("as expected", "plans/two-scores/verdict.yaml")
    assert found.detail.startswith("fail: high.score pass (0.9; needs >= 0.5); ")
    assert "low.score fail (0.1; needs >= 0.5)" in found.detail
    print_case(result)
    assert "as expected      verdict (plans/two-scores/verdict.yaml): fail: high.score pass" in capsys.readouterr().out


def test_without_a_verdict_file_a_plan_must_pass_every_check(plan):
    result = run(plan, update=True)
    found = verdict_of(result)
    assert not result.ok
    assert (found.status, found.path) == ("not as expected", "no plans/two-scores/verdict.yaml: pass expected")
    assert found.detail.startswith("fail (expected pass): ")


RECORDED = {"verdict": {"status": "fail", "checks": [
    {"name": "high.score", "status": "pass", "value": 0.9, "test": ">=", "threshold": 0.5},
    {"name": "low.score", "status": "fail", "value": 0.1, "test": ">=", "threshold": 0.5}]}}


@pytest.mark.parametrize("text, detail", [
    ("verdict: fail\nchecks: {low.scor: fail}\n", "fail (check `low.scor` is not in workflow.yaml `evaluate:`)"),
    ("verdict: fail\nchecks: {low.score: pass}\n", "fail (expected low.score pass)"),
    ("verdict: maybe\n", "verdict.yaml is not a verdict"),
])
def test_a_verdict_file_the_run_does_not_match_fails_the_plan_naming_why(plan, text, detail):
    (plan.parent / "two-scores").mkdir()
    (plan.parent / "two-scores" / "verdict.yaml").write_text(text)
    (found,) = judge_plan(plan, RECORDED)
    assert found.status == "not as expected" and found.detail.startswith(detail), found.detail


def test_a_plan_whose_run_recorded_no_verdict_is_not_as_expected(plan):
    (found,) = judge_plan(plan, {"status": "succeeded"})
    assert (found.status, found.detail) == ("not as expected", "the plan's run recorded no verdict")


def test_a_plan_whose_steps_declare_no_check_is_not_judged_without_a_file(plan):
    assert judge_plan(plan, {"verdict": {"status": "unknown", "checks": []}}) == []
