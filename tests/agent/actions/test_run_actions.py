"""The run actions called directly on real runs: list, status, explain (a real failure), compare, fork.

The session's `ran` registry holds a succeeded tabular-profile run and a failed failing-note run, both made
by the real runner and Snakemake (tests/agent/conftest.py).
"""

from __future__ import annotations

import json

import pytest

from snakegate.agent.actions.platform import ActionContext, call_action
from snakegate.registry.workflows import Registry
from snakegate.registry.settings import load_settings


@pytest.fixture
def ctx(ran) -> ActionContext:
    return ActionContext(Registry.load(ran.root), load_settings(ran.root))


def test_list_runs_shows_id_workflow_status_newest_first(ctx, ran):
    out = call_action(ctx, "list_runs", {})
    assert out.ok, out.result
    runs = {r["run_id"]: r for r in out.result["runs"]}
    assert runs[ran.ok.name]["status"] == "succeeded" and runs[ran.ok.name]["workflow"] == "tabular-profile"
    assert runs[ran.failed.name]["status"] == "failed"
    started = [r["started"] for r in out.result["runs"]]
    assert started == sorted(started, reverse=True)
    only = call_action(ctx, "list_runs", {"status": "failed"}).result["runs"]
    assert {r["status"] for r in only} == {"failed"}


def test_run_status_gives_params_and_registry_relative_outputs(ctx, ran):
    out = call_action(ctx, "run_status", {"run_id": ran.ok.name[-8:]})  # a unique part of the id
    r = out.result
    assert out.ok and r["status"] == "succeeded" and r["run_id"] == ran.ok.name
    assert r["params"]["missing_strategy"] == "remove"
    assert {o["name"] for o in r["outputs"]} == {"cleaned", "profile", "plot"}
    assert all(o["path"].startswith(f"runs/{ran.ok.name}/") for o in r["outputs"])
    assert str(ran.root) not in json.dumps(r)


def test_explain_a_failed_run_gives_the_rule_the_real_error_and_its_log_tail(ctx, ran):
    out = call_action(ctx, "explain_run", {"run_id": ran.failed.name})
    failure = out.result["failure"]
    assert out.result["status"] == "failed" and failure["rule"] == "note"
    assert failure["error"] == "ValueError: the column flux is empty"  # the job's own message, not Snakemake's
    assert "ValueError: the column flux is empty" in failure["log_tail"]
    assert out.result["diagnostics"] == {"results/diagnostics.json": {"residual": 0.25, "n_points": 3}}
    assert str(ran.root) not in json.dumps(out.result)  # the Snakefile path in the error is shown relative
    assert "in rule note" in out.summary


def test_explain_a_succeeded_run_gives_the_key_numbers_of_its_json_outputs(ctx, ran):
    numbers = call_action(ctx, "explain_run", {"run_id": ran.ok.name}).result
    profile = numbers["key_numbers"]["profile"]
    assert profile["rows_in"] == 150 and profile["rows_out"] < 150


@pytest.mark.parametrize("ref", ["../../etc", "/etc", "no-such-run", ""])
def test_a_run_id_outside_the_runs_folder_or_unknown_is_refused(ctx, ref):
    out = call_action(ctx, "run_status", {"run_id": ref})
    assert not out.ok and out.result["error"]["code"] == "unknown_run"


def test_fork_run_drafts_only_the_named_change_and_names_the_rules_to_rerun(ctx, ran):
    out = call_action(ctx, "fork_run", {"run_id": ran.ok.name, "changes": {"missing_strategy": "fill_mean"}})
    assert out.ok, out.result
    p = out.proposal
    assert p.params == {"dataset_file": p.params["dataset_file"], "missing_strategy": "fill_mean",
                        "drop_duplicates": True}
    assert p.fork.parent_run == ran.ok.name and p.fork.changes == {"missing_strategy": "fill_mean"}
    assert "load" not in p.fork.changed_rules and "clean" in p.fork.changed_rules
    assert out.result["reruns_rules"] == list(p.fork.changed_rules)


def test_fork_run_with_a_value_the_contract_refuses_is_a_gate_refusal(ctx, ran):
    out = call_action(ctx, "fork_run", {"run_id": ran.ok.name, "changes": {"missing_strategy": "fill_mena"}})
    assert not out.ok and out.result["errors"][0]["code"] == "enum"
    assert out.result["errors"][0]["hint"] == "did you mean `fill_mean`?"


def test_fork_run_that_changes_no_job_is_refused(ctx, ran):
    out = call_action(ctx, "fork_run", {"run_id": ran.ok.name, "changes": {"missing_strategy": "remove"}})
    assert out.result["error"]["code"] == "fork_no_change" and "rerun" in out.result["error"]["message"]


def test_compare_a_run_with_itself_shows_no_difference(ctx, ran):
    out = call_action(ctx, "compare_runs", {"a": ran.ok.name, "b": ran.ok.name})
    assert out.ok and out.result["params"] == [] and out.result["outputs"] == []
