"""Platform actions called directly: shapes, refusals, redaction. Real registry copy, real gate, no model."""

from __future__ import annotations

import json
import time

import pytest

from snakegate.agent.actions.platform import ACTIONS, INVALID_JSON, ActionContext, call_action
from snakegate.agent.actions.wire import openai_tools
from snakegate.registry.workflows import Registry
from snakegate.registry.settings import load_settings

PENGUINS = "data/examples/tabular-penguins.csv"
SECRET = "hunter2-s3cret-0042"     # secret-note's x-sensitive token (workflow in conftest.py)
PASSWORD = "pw-nested-7781"        # its nested x-sensitive service.password


@pytest.fixture
def ctx(agent_registry) -> ActionContext:
    return ActionContext(Registry.load(agent_registry), load_settings(agent_registry))


def test_tools_are_the_platform_actions_with_their_pydantic_schemas():
    tools = {t["function"]["name"]: t for t in openai_tools()}
    assert list(tools) == ["search_workflows", "describe_workflow", "inspect_data", "validate_params",
                           "find_connections", "propose_plan", "add_step", "replace_step", "remove_step",
                           "validate_plan", "list_runs", "run_status", "explain_run", "compare_runs", "fork_run",
                           "summarize_run", "recover_run", "assess_run", "propose_refinement"]
    search = tools["search_workflows"]
    assert search["type"] == "function"
    params = search["function"]["parameters"]
    assert params["required"] == ["query"] and params["additionalProperties"] is False
    assert params["properties"]["limit"]["default"] == 5
    assert all(p.get("description") for t in tools.values() for p in t["function"]["parameters"]["properties"].values())


def test_search_returns_ranked_matches_with_the_documented_keys(ctx):
    out = call_action(ctx, "search_workflows", {"query": "csv profile", "limit": 3})
    assert out.ok
    first = out.result["matches"][0]
    assert set(first) == {"id", "title", "description", "tags", "score"}
    assert first["id"] == "tabular-profile"


def test_describe_lists_params_in_schema_order_with_contract_annotations(ctx):
    out = call_action(ctx, "describe_workflow", {"workflow": "tabular-profile"})
    assert out.ok
    r = out.result
    assert {"id", "version", "title", "description", "skill", "outputs", "params"} <= set(r)
    names = [p["name"] for p in r["params"]]
    assert names == ["dataset_file", "missing_strategy", "drop_duplicates", "columns"]
    by = {p["name"]: p for p in r["params"]}
    assert by["dataset_file"]["required"] and by["dataset_file"]["artifact"] == "csv-table"
    assert by["missing_strategy"]["enum"] == ["remove", "fill_mean", "fill_median"]
    assert by["missing_strategy"]["default"] == "remove"
    assert by["columns"]["column_of"] == "dataset_file" and by["columns"]["items"]["type"] == "string"
    assert {o["name"] for o in r["outputs"]} == {"cleaned", "profile", "plot"}


def test_describe_returns_only_the_skill_section_on_choosing_values_and_the_rest_on_request(ctx):
    r = call_action(ctx, "describe_workflow", {"workflow": "tabular-profile"}).result
    assert "fill_median" in r["skill"] and "Only `dataset_file` is needed" in r["skill"]
    assert "| code |" not in r["skill"]  # the gate-error table is not sent unasked
    assert r["skill_sections"] == ["Parameters (exact names)", "Outputs", "Gate errors and what to do"]
    errors = call_action(ctx, "describe_workflow", {"workflow": "tabular-profile", "section": "gate errors"})
    assert errors.ok and errors.result["section"] == "Gate errors and what to do"
    assert "column_missing" in errors.result["skill"] and "params" not in errors.result
    unknown = call_action(ctx, "describe_workflow", {"workflow": "tabular-profile", "section": "Outptus"})
    assert unknown.result["error"]["code"] == "unknown_section" and "Outputs" in unknown.result["error"]["hint"]


def test_describe_marks_sensitive_params(ctx):
    params = {p["name"]: p for p in call_action(ctx, "describe_workflow", {"workflow": "secret-note"}).result["params"]}
    assert params["token"]["sensitive"] is True and params["label"]["sensitive"] is False


def test_unknown_workflow_is_an_error_with_a_suggestion(ctx):
    out = call_action(ctx, "describe_workflow", {"workflow": "tabular-profil"})
    assert not out.ok
    assert out.result["error"]["code"] == "unknown_workflow"
    assert "tabular-profile" in out.result["error"]["hint"]


def test_inspect_data_reports_type_columns_and_rows_never_cells(ctx):
    out = call_action(ctx, "inspect_data", {"path": PENGUINS})
    assert out.ok
    r = out.result
    assert r == {"kind": "file", "path": PENGUINS, "type": "csv-table", "columns": r["columns"], "rows": 150}
    assert r["columns"][:2] == ["species", "island"]
    assert "Adelie" not in json.dumps(r)  # a cell value never leaves


def test_inspect_data_with_an_empty_path_lists_the_data_roots_files(ctx):
    out = call_action(ctx, "inspect_data", {})
    assert out.result["kind"] == "folder"
    assert {"path": PENGUINS, "kind": "file"} in out.result["entries"]


def test_path_outside_data_roots_is_refused(ctx, agent_registry):
    for path in ("/etc/passwd", "../outside.csv", "workflows/tabular-profile/schema.json"):
        out = call_action(ctx, "inspect_data", {"path": path})
        assert not out.ok
        assert out.result["error"]["code"] == "path_outside_roots", path


def test_symlink_escaping_data_root_is_refused(ctx, agent_registry, tmp_path):
    secret = tmp_path / "private.csv"
    secret.write_text("name,salary\nada,1\n")
    (agent_registry / "data" / "innocent.csv").symlink_to(secret)
    out = call_action(ctx, "inspect_data", {"path": "data/innocent.csv"})
    assert out.result["error"]["code"] == "path_outside_roots"
    listed = call_action(ctx, "inspect_data", {"path": ""}).result["entries"]
    assert all("innocent" not in e["path"] for e in listed)


def test_invented_parameter_is_refused_with_unknown_param(ctx):
    out = call_action(ctx, "validate_params",
                      {"workflow": "tabular-profile", "params": {"dataset_file": PENGUINS, "colour": "red"}})
    assert not out.ok and out.proposal is None
    (err,) = out.result["errors"]
    assert err["code"] == "unknown_param" and err["path"] == "params.colour"
    assert "columns" in err["choices"]


def test_validate_ok_fills_defaults_and_proposes_a_draft(ctx, agent_registry):
    out = call_action(ctx, "validate_params", {"workflow": "tabular-profile", "params": {"dataset_file": PENGUINS}})
    assert out.ok, out.result
    r = out.result
    assert r["params"] == {"dataset_file": PENGUINS, "missing_strategy": "remove", "drop_duplicates": True}
    assert r["config_path"] == f"drafts/tabular-profile-{r['invocation_id'][:12]}.yaml"
    assert out.proposal.config_path == agent_registry / r["config_path"]
    assert not out.proposal.config_path.exists()  # actions never write; the controller does


def test_warm_validate_is_fast(ctx):
    args = {"workflow": "tabular-profile", "params": {"dataset_file": PENGUINS}}
    assert call_action(ctx, "validate_params", args).ok
    started = time.perf_counter()
    assert call_action(ctx, "validate_params", args).ok
    assert time.perf_counter() - started < 0.5  # the gate's DAG is cached; no Snakemake load again


def test_sensitive_values_are_redacted_in_arguments_and_results(ctx):
    params = {"token": SECRET, "service": {"password": PASSWORD}, "label": "x"}
    out = call_action(ctx, "validate_params", {"workflow": "secret-note", "params": params})
    assert out.ok, out.result
    assert out.arguments["params"] == {"token": "<redacted>", "service": {"password": "<redacted>"}, "label": "x"}
    assert out.result["params"]["token"] == "<redacted>"
    assert out.result["params"]["service"] == {"user": "ada", "password": "<redacted>"}
    assert SECRET not in json.dumps(out.result) + out.summary
    assert out.proposal.params["token"] == SECRET and out.proposal.params["service"]["password"] == PASSWORD


def test_gate_messages_quoting_a_sensitive_value_are_scrubbed(ctx):
    out = call_action(ctx, "validate_params", {"workflow": "secret-note", "params": {"token": 12345678}})
    assert not out.ok
    assert out.result["errors"][0]["code"] == "type"
    assert "12345678" not in json.dumps(out.result) + json.dumps(out.arguments) + out.summary


def test_redacted_placeholder_sent_back_keeps_the_researchers_value(ctx):
    first = call_action(ctx, "validate_params", {"workflow": "secret-note", "params": {"token": SECRET}})
    again = call_action(ctx, "validate_params",
                        {"workflow": "secret-note", "params": {"token": "<redacted>", "label": "second"}})
    assert again.ok and again.proposal.params["token"] == SECRET
    assert again.result["invocation_id"] != first.result["invocation_id"]


def test_redacted_placeholder_without_a_known_value_is_refused(ctx):
    out = call_action(ctx, "validate_params", {"workflow": "secret-note", "params": {"token": "<redacted>"}})
    assert not out.ok and out.proposal is None
    assert out.result["errors"][0]["path"] == "params.token"


def test_bad_arguments_name_the_field_and_the_fix(ctx):
    out = call_action(ctx, "search_workflows", {"query": "csv", "limit": "five", "colour": 1})
    err = out.result["error"]
    assert not out.ok and err["code"] == "bad_arguments"
    assert "`limit`" in err["message"] and "`colour`" in err["message"]
    assert "`query`" in err["hint"]
    missing = call_action(ctx, "validate_params", {"workflow": "tabular-profile"}).result["error"]
    assert missing["code"] == "bad_arguments" and "`params` is required" in missing["message"]


def test_malformed_json_arguments_are_bad_arguments(ctx):
    out = call_action(ctx, "describe_workflow", {INVALID_JSON: '{"workflow": "tabular-'})
    assert not out.ok and out.result["error"]["code"] == "bad_arguments"
    assert "not valid JSON" in out.result["error"]["message"]


def test_unknown_action_is_refused_and_execute_is_not_an_action(ctx):
    out = call_action(ctx, "execute", {"workflow": "tabular-profile"})
    assert not out.ok and out.result["error"]["code"] == "unknown_action"
    assert "execute" not in ACTIONS


def test_a_failure_inside_an_action_is_an_error_never_ok(ctx, agent_registry):
    (agent_registry / "workflows" / "secret-note" / "schema.json").write_text("{not json")
    out = call_action(ctx, "validate_params", {"workflow": "secret-note", "params": {}})
    assert not out.ok and out.proposal is None
    assert out.result["error"]["code"] == "action_failed"
    assert "schema.json" in out.result["error"]["message"]
