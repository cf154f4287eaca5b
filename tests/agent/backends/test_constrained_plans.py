"""Small models build plans too: the constrained-JSON step schema expresses every plan action (steps with
their workflows and params, `{from, output}` references), and a model answering one JSON object per step
reaches a gated plan draft; once it is building a plan a step may describe, connect and change the plan.

Real scripted HTTP server, the real OpenAIBackend in "json" mode, real actions and plan gate.
"""

from __future__ import annotations

import json

from openai_server import DEFAULT_MODEL, ScriptedOpenAI
from plan_registry import BENCH, CLEAN, make_plan_registry
from snakegate.agent.backends.choose import OpenAIBackend
from snakegate.agent.controller import Conversation
from snakegate.agent.events import DraftReady
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry


def step(obj: dict) -> str:
    return json.dumps(obj, indent=2)


def options(body: dict) -> dict[str, dict]:
    """The step schema's options by action name (the talking option as "say")."""
    out = {}
    for o in body["response_format"]["json_schema"]["schema"]["oneOf"]:
        action = o["properties"].get("action", {}).get("const")
        out[action or "say"] = o
    return out


def test_a_json_model_connects_workflows_and_proposes_a_plan_to_a_gated_draft(tmp_path):
    root = make_plan_registry(tmp_path / "registry")
    server = ScriptedOpenAI([
        step({"action": "find_connections", "arguments": {"workflow": "tabular-profile", "output": "cleaned"}}),
        step({"action": "propose_plan", "arguments": {"label": "sexes", "steps": [CLEAN, BENCH]}}),
        step({"say": "The plan is ready to approve."})])
    try:
        backend = OpenAIBackend(server.start(), DEFAULT_MODEL, timeout=120, tool_mode="json")
        convo = Conversation(Registry.load(root), load_settings(root), backend)
        events = convo.send("clean the penguins, then classify their sex on the cleaned table")
    finally:
        server.stop()
    drafts = [e.draft for e in events if isinstance(e, DraftReady)]
    assert len(drafts) == 1 and [s.name for s in drafts[0].plan.steps] == ["clean", "bench"]
    assert drafts[0].plan.steps[1].takes == (("dataset", "clean", "cleaned"),)

    first, second, third = (options(body) for body in server.requests)
    # the schema holds every plan action, each step's workflow one of the registry's, its params any object
    # (so an input may be {"from": step, "output": name}); references inside it resolve (none are left)
    proposed = first["propose_plan"]["properties"]["arguments"]
    steps = proposed["properties"]["steps"]
    assert steps["type"] == "array" and steps["items"]["required"] == ["name", "workflow"]
    assert steps["items"]["properties"]["workflow"]["enum"] == ["classifier-benchmark", "tabular-profile"]
    assert steps["items"]["properties"]["params"] == {**steps["items"]["properties"]["params"],
                                                      "type": "object", "additionalProperties": True}
    assert {"add_step", "replace_step", "remove_step", "validate_plan", "find_connections"} <= set(first)
    assert "$ref" not in json.dumps(server.requests[0]["response_format"])
    # building a plan: describe, inspect, connect and change the plan, or talk; no search, no single validate
    assert set(second) == {"describe_workflow", "inspect_data", "find_connections", "propose_plan", "add_step",
                           "replace_step", "remove_step", "validate_plan", "say"}
    assert set(third) == {"say"}  # a plan passed the gate: only talk
    assert "propose_plan(steps)" in server.requests[0]["messages"][0]["content"]  # the JSON rules' signatures
