"""What the constrained mode must not do (issue 26 §4): hide a contract param, let a string or a list run to
the token limit, or let a model repeat a refused call until the step limit.

The schema tests read every curated workflow's contract; the conversation tests use the real Conversation,
the real OpenAIBackend and the scripted OpenAI-compatible server.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openai_server import DEFAULT_MODEL, call
from snakegate.agent.actions.wire import MAX_ITEMS, MAX_STRING, conversation_tools, params_schema, step_schema
from snakegate.agent.backends.choose import OpenAIBackend
from snakegate.agent.events import ActionCalled, AssistantSaid, DraftReady

REPO = Path(__file__).resolve().parents[2]
CONTRACTS = sorted(REPO.glob("workflows/*/schema.json"))
PENGUINS = "data/examples/tabular-penguins.csv"


def validate_option(schema: dict) -> dict:
    option = next(o for o in schema["oneOf"] if o["properties"].get("action", {}).get("const") == "validate_params")
    return option["properties"]["arguments"]["properties"]["params"]


def unbounded(schema, at="") -> list[str]:
    """Where in `schema` a string or an array has no upper bound."""
    found = []
    if isinstance(schema, dict):
        types = schema.get("type") if isinstance(schema.get("type"), list) else [schema.get("type")]
        if "string" in types and not {"enum", "const", "maxLength"} & set(schema):
            found.append(at or "/")
        if "array" in types and "maxItems" not in schema:
            found.append(at or "/")
        for key, sub in schema.items():
            if key in ("properties", "$defs"):
                found += [x for name, s in sub.items() for x in unbounded(s, f"{at}/{name}")]
            elif isinstance(sub, (dict, list)):
                found += unbounded(sub, f"{at}/{key}")
    elif isinstance(schema, list):
        found += [x for n, s in enumerate(schema) for x in unbounded(s, f"{at}[{n}]")]
    return found


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda p: p.parent.name)
def test_every_contract_param_is_reachable_in_the_constrained_step(contract):
    schema = json.loads(contract.read_text())
    wf_id = contract.parent.name
    # the researcher said nothing about any param: still every one of them can be filled
    tools = conversation_tools([wf_id], (wf_id, params_schema(schema, [PENGUINS], {})))
    params = validate_option(step_schema(tools))
    assert list(params["properties"]) == list(schema["properties"])
    assert params["required"] == [n for n in schema.get("required", []) if n in schema["properties"]]


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda p: p.parent.name)
def test_every_string_and_list_in_the_step_schema_is_bounded(contract):
    schema = json.loads(contract.read_text())
    wf_id = contract.parent.name
    tools = conversation_tools([wf_id], (wf_id, params_schema(schema, [PENGUINS], {})), files=[PENGUINS])
    assert unbounded(step_schema(tools)) == []


def test_a_contracts_own_bounds_are_kept_and_silence_gets_the_defaults():
    contract = {"type": "object", "properties": {
        "label": {"type": "string", "maxLength": 40},
        "note": {"type": "string"},
        "roi": {"type": "array", "items": {"type": "number"}, "maxItems": 4},
        "tags": {"type": "array", "items": {"type": "string"}}}}
    shaped = params_schema(contract, [])["properties"]
    assert shaped["label"]["maxLength"] == 40 and shaped["roi"]["maxItems"] == 4
    assert shaped["note"]["maxLength"] == MAX_STRING
    assert shaped["tags"]["maxItems"] == MAX_ITEMS and shaped["tags"]["items"]["maxLength"] == MAX_STRING


def test_a_json_step_may_fill_a_column_list_the_request_parser_did_not_match(openai_server, make_conversation):
    select = {"action": "validate_params", "arguments": {"workflow": "tabular-profile", "params": {
        "dataset_file": PENGUINS, "columns": ["species", "body_mass_g"]}}}
    server = openai_server([json.dumps({"action": "describe_workflow", "arguments": {"workflow": "tabular-profile"}}),
                            json.dumps(select), json.dumps({"say": "Ready."})])
    convo = make_conversation(OpenAIBackend(server.base_url, DEFAULT_MODEL, timeout=10, tool_mode="json"))
    events = convo.send(f"profile {PENGUINS}, only species and body_mass_g")
    params = validate_option(server.requests[1]["response_format"]["json_schema"]["schema"])
    # reachable, and bounded by the table: at most its 8 columns (issue 26 §4), not the generic MAX_ITEMS
    assert params["properties"]["columns"]["maxItems"] == 8 < MAX_ITEMS
    assert any(isinstance(e, DraftReady) for e in events)
    assert convo.draft.params["columns"] == ["species", "body_mass_g"] and convo.draft.faithful


def test_an_identical_refused_call_is_stopped_at_the_second_try_and_the_researcher_is_asked(conversation):
    wrong = [call("validate_params", {"workflow": "tabular-profile",
                                      "params": {"dataset_file": PENGUINS, "missing_strategy": "fill_mena"}})]
    convo, server = conversation([wrong, wrong, wrong, "never asked for"])
    events = convo.send(f"profile {PENGUINS}")
    first, again = [e for e in events if isinstance(e, ActionCalled)]
    assert not first.ok and not again.ok  # a cross, never a tick
    assert "refused again with the same arguments" in again.summary and "fill_mena" in again.summary
    said = events[-1]
    assert isinstance(said, AssistantSaid)
    assert "refused the same way" in said.text and "missing_strategy" in said.text and "fill_mean" in said.text
    assert said.text.endswith("Tell me what to change, or rephrase the request.")
    assert len(server.requests) == 2   # no third try, and no eighth
    assert convo.draft is None


def test_the_turn_after_a_stopped_repeat_goes_on_normally(conversation):
    wrong = [call("validate_params", {"workflow": "tabular-profile",
                                      "params": {"dataset_file": PENGUINS, "missing_strategy": "fill_mena"}})]
    right = [call("validate_params", {"workflow": "tabular-profile",
                                      "params": {"dataset_file": PENGUINS, "missing_strategy": "fill_mean"}})]
    convo, _ = conversation([wrong, wrong, right, "Ready."])
    convo.send(f"profile {PENGUINS}")
    events = convo.send("use fill_mean")
    assert any(isinstance(e, DraftReady) for e in events) and convo.draft.params["missing_strategy"] == "fill_mean"
