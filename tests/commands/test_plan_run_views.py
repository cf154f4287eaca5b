"""`snakegate runs`, `show-run` and `diff` read a plan's run as a plan, at 80 columns: the plan with its step
count, found by any step's workflow; its steps, the edges between them, each step's params (sensitive values
masked) and outputs; two plans' runs compared step by step.

The runs are the session's real plan runs (tests/plan_runs.py): a plan of three steps (clean -> bench, and
note with an x-sensitive token), its fork with bench.model=random_forest, and a plan killed mid-run.
"""

from __future__ import annotations

import json

import pytest
from plan_runs import PLAN_LABEL, PLAN_SECRET
from registry_copies import snakegate

COLUMNS = 80


@pytest.fixture
def sg(plan_registry):
    """`snakegate ARGS` in the plan registry, as a person runs it in an 80-column terminal."""
    def run(*args):
        proc = snakegate(plan_registry, *args, COLUMNS=str(COLUMNS))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        if "--json" not in args:
            assert max(len(line) for line in proc.stdout.splitlines()) <= COLUMNS, proc.stdout
        return proc.stdout
    return run


def _block(out: str, heading: str) -> list[str]:
    """The lines of show-run's section `heading` (its heading line, then every indented line below it)."""
    lines = out.splitlines()
    start = lines.index(heading)
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith(" ")), len(lines))
    return lines[start:end]


def test_a_plan_run_lists_as_its_plan_with_its_step_count(sg, plan_run, plan_interrupted_run):
    out = sg("runs")
    lines = out.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith(plan_run.name))
    assert "plan sex-from-" in lines[row] and "succeeded" in lines[row]
    assert lines[row + 1:row + 3] == [
        f"    plan {PLAN_LABEL}, 3 steps: clean (tabular-profile), bench",
        "    (classifier-benchmark), note (secret-note)"]
    killed = next(i for i, line in enumerate(lines) if line.startswith(plan_interrupted_run.name))
    assert lines[killed + 1] == "    plan slow-after-clean, 2 steps: clean (tabular-profile), wait (slow-second)"


def test_runs_workflow_finds_the_plan_runs_that_have_a_step_running_that_workflow(sg, plan_registry, plan_run,
                                                                                 plan_fork_run, plan_interrupted_run):
    classifier = {r["run_id"] for r in json.loads(sg("runs", "--workflow", "classifier-benchmark", "--json"))["runs"]}
    assert classifier == {plan_run.name, plan_fork_run.name}
    slow = {r["run_id"] for r in json.loads(sg("runs", "--workflow", "slow-second", "--json"))["runs"]}
    assert slow == {plan_interrupted_run.name}
    everywhere = json.loads(sg("runs", "--workflow", "tabular-profile", "--json"))["runs"]
    assert {plan_run.name, plan_fork_run.name, plan_interrupted_run.name} <= {r["run_id"] for r in everywhere}
    none = snakegate(plan_registry, "runs", "--workflow", "tabular-profil").stdout  # an id no step runs
    assert none.startswith("no run matches the filters")


def test_runs_json_gives_each_run_its_kind_plan_label_and_steps_in_the_plans_order(sg, plan_run):
    rows = {r["run_id"]: r for r in json.loads(sg("runs", "--json"))["runs"]}
    row = rows[plan_run.name]
    assert row["kind"] == "plan" and row["plan"] == PLAN_LABEL and row["workflow"] == f"plan {PLAN_LABEL}"
    assert row["steps"] == [{"name": "clean", "workflow": "tabular-profile", "version": "1.0.0"},
                            {"name": "bench", "workflow": "classifier-benchmark", "version": "1.0.0"},
                            {"name": "note", "workflow": "secret-note", "version": "0.1.0"}]


def test_show_run_of_a_plan_shows_its_steps_edges_params_and_outputs_by_step_at_80_columns(sg, plan_run):
    out = sg("show-run", plan_run.name)
    assert f"plan            {PLAN_LABEL} (3 steps)" in out.splitlines()
    assert _block(out, "steps") == ["steps",
                                    "  clean  tabular-profile 1.0.0",
                                    "  bench  classifier-benchmark 1.0.0",
                                    "  note   secret-note 0.1.0"]
    assert _block(out, "edges") == ["edges", "  bench.dataset ← clean.cleaned"]
    params = _block(out, "params")
    # the names' column is as wide as the longest name, classifier-benchmark's categorical_encoding
    assert params[:3] == ["params", "  clean",
                          "    columns               bill_length_mm, bill_depth_mm, flipper_length_mm,"]
    assert "    dataset               ← clean.cleaned" in params and "    label_column          sex" in params
    assert params[-3:] == ["  note", "    label                 plan-note", "    token                 ••••••"]
    outputs = _block(out, "outputs")
    run = f"runs/{plan_run.name}"
    assert outputs[:3] == ["outputs", "  clean", f"    cleaned    {run}/steps/clean/results/cleaned.csv"]
    assert outputs[-3:] == ["  note", f"    note       {run}/steps/note/results/note.txt",
                            "               (present)"]
    assert "  bench" in outputs and f"    metrics    {run}/steps/bench/results/metrics.json" in outputs


def test_show_run_of_a_plan_never_shows_a_steps_sensitive_value(sg, plan_run, plan_fork_run):
    for run in (plan_run, plan_fork_run):
        out = sg("show-run", run.name)
        assert PLAN_SECRET not in out and "hmac-sha256" not in out
    assert "fork_of         " + plan_run.name + " (bench.model: random_forest)" in sg("show-run", plan_fork_run.name)


def test_diff_of_a_plan_and_its_fork_compares_step_by_step(sg, plan_run, plan_fork_run):
    out = sg("diff", plan_run.name, plan_fork_run.name)
    lines = out.splitlines()
    assert lines[1] == "steps (1 of 3 changed):"
    assert "step clean (tabular-profile 1.0.0): identical (parameters, and all 3 outputs)" in lines
    assert "step note (secret-note 0.1.0): identical (parameters, and all 1 outputs)" in lines
    bench = lines.index("step bench (classifier-benchmark 1.0.0): changed")
    assert lines[bench + 1:bench + 4] == ["  parameters (1 changed):",
                                          "    params.model: 'logistic_regression' -> 'random_forest'",
                                          "  outputs (3 differ, 0 identical):"]
    assert any(line.startswith("    metrics: steps/bench/results/metrics.json differs") for line in lines)
    assert "        model: 'logistic_regression' -> 'random_forest'" in lines  # a JSON value, as today


def test_diff_json_of_two_plans_gives_each_steps_changes_and_no_sensitive_value(sg, plan_run, plan_fork_run):
    out = sg("diff", plan_run.name, plan_fork_run.name, "--json")
    assert PLAN_SECRET not in out
    result = json.loads(out)
    steps = {s["name"]: s for s in result["steps"]}
    assert [s["name"] for s in result["steps"]] == ["clean", "bench", "note"]
    assert steps["bench"]["status"] == "changed" and steps["clean"]["status"] == steps["note"]["status"] == "identical"
    assert steps["bench"]["params"] == [{"path": "params.model", "change": "changed", "a": "logistic_regression",
                                         "b": "random_forest"}]
    assert {o["name"] for o in steps["bench"]["outputs"]} == {"metrics", "model", "confusion"}
    assert steps["clean"]["identical_outputs"] == ["cleaned", "plot", "profile"]
    assert result["params"] == [{"path": "steps.bench.params.model", "change": "changed",
                                 "a": "logistic_regression", "b": "random_forest"}]

