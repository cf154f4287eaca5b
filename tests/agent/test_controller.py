"""The conversation loop over a real OpenAI-compatible HTTP server with a scripted model.

Real registry copy, real gate, real OpenAIBackend, and (in one test) the real Snakemake run.
"""

from __future__ import annotations

import json

import pytest

from openai_server import call
from snakegate.agent.events import ActionCalled, Approval, AssistantSaid, BackendFailed, DraftReady
from snakegate.errors import UserError
from snakegate.provenance import runstore

PENGUINS = "data/examples/tabular-penguins.csv"
SECRET = "hunter2-s3cret-0042"  # secret-note's x-sensitive token (workflow in conftest.py)


def kinds(events) -> list[str]:
    return [type(e).__name__ for e in events]


def tool_results(request: dict) -> list[dict]:
    """The tool messages the model received in one request, parsed."""
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def validated(params=None, workflow="tabular-profile"):
    return [call("validate_params", {"workflow": workflow, "params": params or {"dataset_file": PENGUINS}})]


@pytest.fixture
def drafted(conversation):
    """A conversation whose model validated the penguin table: a draft awaits approval."""
    convo, server = conversation([validated(), "Draft ready: approve it in the panel."])
    events = convo.send("profile the penguins table")
    assert kinds(events) == ["ActionCalled", "DraftReady", "AssistantSaid"], events
    return convo, server


def test_opening_is_the_greeting_without_a_model_call(conversation):
    convo, server = conversation([])
    (said,) = convo.opening()
    assert isinstance(said, AssistantSaid) and said.text
    assert server.requests == []


def test_model_searches_describes_validates_and_gets_a_draft_the_gate_accepts(conversation, cli, agent_registry):
    convo, server = conversation([
        [call("search_workflows", {"query": "profile a csv table"})],
        [call("describe_workflow", {"workflow": "tabular-profile"})],
        [call("inspect_data", {"path": PENGUINS})],
        validated({"dataset_file": PENGUINS, "missing_strategy": "fill_median"}),
        "The draft is ready: review it and approve it in the panel to run it.",
    ])
    events = convo.send("summarise my penguin table, fill the gaps")
    assert kinds(events) == ["ActionCalled"] * 4 + ["DraftReady", "AssistantSaid"]
    assert all(e.ok for e in events if isinstance(e, ActionCalled))
    draft = events[4].draft
    assert convo.draft == draft
    assert draft.params == {"dataset_file": PENGUINS, "missing_strategy": "fill_median", "drop_duplicates": True}
    assert draft.config_path == agent_registry / "drafts" / f"tabular-profile-{draft.invocation_id[:12]}.yaml"
    assert draft.config_path.read_text() == draft.config_text
    # what the model saw: each action's result as a tool message, in order
    found, described, inspected, ok = tool_results(server.requests[-1])
    assert found["matches"][0]["id"] == "tabular-profile"
    assert described["params"][0]["name"] == "dataset_file"
    assert inspected["type"] == "csv-table" and inspected["rows"] == 150
    assert ok["ok"] is True and ok["invocation_id"] == draft.invocation_id
    code, out, err = cli("--registry", agent_registry, "validate", draft.config_path)
    assert code == 0, out + err
    assert draft.invocation_id in out


def test_gate_errors_come_back_to_the_model_with_code_hint_and_choices(conversation):
    convo, server = conversation([
        validated({"dataset_file": PENGUINS, "missing_strategy": "fill_mena"}),
        "Did you mean fill_mean?",
    ])
    events = convo.send("profile the penguins, fill with the mena")
    assert kinds(events) == ["ActionCalled", "AssistantSaid"]
    assert events[0].ok is False and convo.draft is None
    (result,) = tool_results(server.requests[1])
    assert result["ok"] is False
    (err,) = result["errors"]
    assert err["path"] == "params.missing_strategy" and err["code"] == "enum"
    assert err["hint"] == "did you mean `fill_mean`?"
    assert err["choices"] == ["remove", "fill_mean", "fill_median"]


def test_invented_parameter_is_refused_with_unknown_param(conversation):
    convo, server = conversation([validated({"dataset_file": PENGUINS, "bins": 20}), "Which option?"])
    convo.send("profile with 20 bins")
    (result,) = tool_results(server.requests[1])
    assert [e["code"] for e in result["errors"]] == ["unknown_param"]
    assert convo.draft is None


def test_path_outside_data_roots_is_refused(conversation):
    convo, server = conversation([[call("inspect_data", {"path": "/etc/passwd"})], "I cannot read that file."])
    events = convo.send("look at /etc/passwd")
    assert events[0].ok is False
    (result,) = tool_results(server.requests[1])
    assert result["error"]["code"] == "path_outside_roots"


def test_sensitive_value_is_redacted_for_the_server_but_present_in_the_draft(conversation):
    convo, server = conversation([
        validated({"token": SECRET}, workflow="secret-note"),
        [call("describe_workflow", {"workflow": "secret-note"})],
        "Ready: approve the draft in the panel.",
    ])
    events = convo.send("write my secret note")
    # describe names the one sensitive param still without a value, for the UI's masked field
    assert kinds(events) == ["ActionCalled", "DraftReady", "ActionCalled", "SecretRequested", "AssistantSaid"]
    assert events[3].param == "service.password"
    assert events[0].arguments["params"]["token"] == "<redacted>"
    assert len(server.requests) == 3
    assert all(SECRET not in body for body in server.raw_bodies)  # not in history, results, or arguments
    assert "<redacted>" in server.raw_bodies[1]
    draft = events[1].draft
    assert draft.params["token"] == SECRET
    assert SECRET in draft.config_path.read_text()


def test_no_execute_tool_is_offered_to_the_model(conversation):
    convo, server = conversation(["Hello."])
    convo.send("run it now")
    names = [t["function"]["name"] for t in server.requests[0]["tools"]]
    assert names == ["search_workflows", "describe_workflow", "inspect_data", "validate_params",
                     "find_connections", "propose_plan", "add_step", "replace_step", "remove_step", "validate_plan",
                     "list_runs", "run_status", "explain_run", "compare_runs", "fork_run", "summarize_run",
                     "recover_run", "assess_run", "propose_refinement"]
    # the run and plan actions read or draft (fork_run, the plan actions); none starts anything
    assert not [n for n in names if "exec" in n or n.startswith(("run_", "start")) and n != "run_status"]


def test_model_calling_execute_gets_unknown_action_and_nothing_runs(conversation, agent_registry):
    convo, server = conversation([validated(), [call("execute", {})], "I cannot run it; please approve."])
    events = convo.send("run it")
    assert kinds(events) == ["ActionCalled", "DraftReady", "ActionCalled", "AssistantSaid"]
    assert tool_results(server.requests[2])[-1]["error"]["code"] == "unknown_action"
    assert not (agent_registry / "runs").exists()


def test_execute_without_approval_is_refused_and_nothing_runs(drafted, agent_registry):
    convo, _ = drafted
    forged = Approval(invocation_id=convo.draft.invocation_id, approved_by="model",
                      approved_at="2026-01-31T10:00:00Z", token="0" * 64)
    with pytest.raises(UserError, match="approve the draft in the panel"):
        convo.execute(forged)
    with pytest.raises(UserError, match="Approval"):
        convo.execute(None)
    assert not (agent_registry / "runs").exists()


def test_execute_with_a_wrong_token_is_refused_and_nothing_runs(drafted, agent_registry):
    convo, _ = drafted
    approval = convo.approve("Ada Lovelace")
    wrong = Approval(approval.invocation_id, approval.approved_by, approval.approved_at, token="f" * 64)
    with pytest.raises(UserError, match="not valid"):
        convo.execute(wrong)
    assert not (agent_registry / "runs").exists()


def test_a_new_draft_replaces_the_old_one_and_its_approval_stops_working(drafted, agent_registry):
    convo, server = drafted
    old = convo.approve("Ada Lovelace")
    server.add(validated({"dataset_file": PENGUINS, "drop_duplicates": False}), "New draft ready.")
    events = convo.send("keep the duplicates")
    new = next(e.draft for e in events if isinstance(e, DraftReady))
    assert convo.draft == new and new.invocation_id != old.invocation_id
    with pytest.raises(UserError, match="newer validation replaced it"):
        convo.execute(old)
    assert not (agent_registry / "runs").exists()


def test_approve_without_a_draft_is_refused(conversation):
    convo, _ = conversation([])
    with pytest.raises(UserError, match="no draft"):
        convo.approve("Ada Lovelace")


def test_execute_with_the_ui_approval_runs_snakemake_and_records_the_origin(drafted):
    convo, _ = drafted
    approval = convo.approve("Ada Lovelace")
    assert approval.approved_at.endswith("Z")
    progress = []
    outcome = convo.execute(approval, on_progress=progress.append)
    assert outcome.status == "succeeded", outcome.record
    assert outcome.gate.invocation_id == convo.draft.invocation_id
    record = runstore.read_run(outcome.run_dir)
    assert record["origin"] == {"model": "scripted-model", "proposed_by_backend": "openai-compatible",
                                "approved_by": "Ada Lovelace", "approved_at": approval.approved_at,
                                "conversation_id": "c-test", "answered_by": "scripted-model",
                                "transcript_sha256": approval.transcript_sha256}
    assert (outcome.run_dir / "results" / "profile.json").is_file()
    assert progress and progress[-1]["done"] == progress[-1]["total"]
    with pytest.raises(UserError, match="already used"):
        convo.execute(approval)  # one approval, one run


def test_malformed_tool_arguments_come_back_to_the_model_as_bad_arguments(conversation):
    convo, server = conversation([[call("describe_workflow", '{"workflow": "tabular-')], "Sorry, retrying."])
    events = convo.send("describe tabular-profile")
    assert kinds(events) == ["ActionCalled", "AssistantSaid"] and events[0].ok is False
    (result,) = tool_results(server.requests[1])
    assert result["error"]["code"] == "bad_arguments"
    sent_back = server.requests[1]["messages"][-2]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(sent_back) == {}  # the history stays valid JSON for the server


def test_max_steps_stops_a_looping_model(conversation):
    # different queries each step: the same call a third time is stopped earlier (test_repeated_calls.py)
    convo, server = conversation([[call("search_workflows", {"query": q})] for q in ("csv", "table", "profile")],
                                 max_steps=3)
    events = convo.send("find something")
    assert kinds(events) == ["ActionCalled"] * 3 + ["AssistantSaid"]
    assert "stopped after 3 steps" in events[-1].text
    assert len(server.requests) == 3
    server.add("Found tabular-profile.")
    assert kinds(convo.send("go on")) == ["AssistantSaid"]  # the conversation still works


def test_a_failure_mid_turn_rolls_the_whole_turn_back_so_the_retry_is_clean(conversation):
    convo, server = conversation([[call("search_workflows", {"query": "csv"})]])  # then the script runs out: 500
    before = list(convo.messages)
    events = convo.send("find something")
    assert kinds(events) == ["ActionCalled", "BackendFailed"]
    assert isinstance(events[-1], BackendFailed) and server.base_url in events[-1].message
    assert convo.messages == before  # neither the message nor the half-done step is kept
    server.add("Found it.")
    assert kinds(convo.send("find something")) == ["AssistantSaid"]
    roles = [m["role"] for m in server.requests[-1]["messages"]]
    assert roles == ["system", "user"]  # the retry is exactly the first request again
