"""Small models: constrained-JSON steps, text-form tool calls, a small prompt, trimmed history, repeats noticed.

Real scripted HTTP server, real OpenAIBackend in each mode, real actions and gate.
"""

from __future__ import annotations

import json

from openai_server import DEFAULT_MODEL, call, refuse
from snakegate.agent.actions.wire import step_bounds
from snakegate.agent.backends.choose import OpenAIBackend
from snakegate.agent.backends.openai_compat import DEFAULT_MAX_TOKENS
from snakegate.agent.events import ActionCalled

PENGUINS = "data/examples/tabular-penguins.csv"
DESCRIBE = {"action": "describe_workflow", "arguments": {"workflow": "tabular-profile"}}
VALIDATE = {"action": "validate_params",
            "arguments": {"workflow": "tabular-profile", "params": {"dataset_file": PENGUINS,
                                                                   "missing_strategy": "fill_median"}}}


def step(obj: dict) -> str:
    return json.dumps(obj, indent=2)  # small models pretty-print; the parser must not care


def in_mode(make_conversation, server, mode: str, **kw):
    return make_conversation(OpenAIBackend(server.base_url, DEFAULT_MODEL, timeout=10, tool_mode=mode, **kw))


def schema_of(body: dict) -> dict:
    return body["response_format"]["json_schema"]["schema"]


def option(schema: dict, action: str) -> dict:
    return next(o for o in schema["oneOf"] if o["properties"].get("action", {}).get("const") == action)


def test_json_mode_reaches_a_draft_from_one_json_object_per_step(openai_server, make_conversation):
    server = openai_server([step(DESCRIBE), step(VALIDATE), step({"say": "The draft is ready; approve it."})])
    convo = in_mode(make_conversation, server, "json")
    events = convo.send("profile the penguins, fill gaps with the median")
    assert [type(e).__name__ for e in events] == ["ActionCalled", "ActionCalled", "DraftReady", "AssistantSaid"]
    assert events[-1].text == "The draft is ready; approve it."
    assert convo.draft.params["missing_strategy"] == "fill_median"
    first, second = server.requests[:2]
    assert "tools" not in first and first["response_format"]["type"] == "json_schema"
    assert '{"action": NAME, "arguments": {...}}' in first["messages"][0]["content"]
    # a past step goes back as the JSON the model wrote, its result as the next user message
    assert json.loads(second["messages"][-2]["content"]) == DESCRIBE
    assert second["messages"][-1]["role"] == "user"
    assert second["messages"][-1]["content"].startswith("Result of describe_workflow: {")


def workflow_enum(body: dict) -> list[str]:
    return option(schema_of(body), "describe_workflow")["properties"]["arguments"]["properties"]["workflow"]["enum"]


def test_the_step_schema_allows_only_registry_ids_and_once_described_only_its_params(openai_server,
                                                                                    make_conversation):
    server = openai_server([step({"say": "What would you like to run?"}),
                            step(DESCRIBE), step(VALIDATE), step({"say": "Ready."})])
    convo = in_mode(make_conversation, server, "json")
    convo.send("hello")
    assert workflow_enum(server.requests[0]) == ["secret-note", "tabular-profile"]
    convo.send("profile the penguins table, fill gaps with the median")  # the search's clear choice alone
    assert workflow_enum(server.requests[1]) == ["tabular-profile"]
    first = schema_of(server.requests[0])
    assert {"say"} == set(next(o for o in first["oneOf"] if "say" in o["properties"])["properties"])
    params = option(schema_of(server.requests[2]), "validate_params")["properties"]["arguments"]["properties"][
        "params"]
    assert params["additionalProperties"] is False and params["required"] == ["dataset_file"]
    # every param of the contract stays reachable (issue 26 §4); a named allowed value is the only choice
    assert list(params["properties"]) == ["dataset_file", "missing_strategy", "drop_duplicates", "columns"]
    assert params["properties"]["missing_strategy"] == {"type": "string", "enum": ["fill_median"]}
    assert PENGUINS in params["properties"]["dataset_file"]["enum"]  # a file inside the data roots, nothing else


def test_once_described_a_json_step_may_only_fill_or_talk(openai_server, make_conversation):
    server = openai_server([step(DESCRIBE), step(VALIDATE), step({"say": "Ready."})])
    in_mode(make_conversation, server, "json").send("profile the penguins")
    names = [o["properties"]["action"]["const"] for o in schema_of(server.requests[1])["oneOf"]
             if "action" in o["properties"]]
    assert names == ["inspect_data", "validate_params"]


def test_a_sensitive_param_can_only_be_sent_as_the_placeholder(openai_server, make_conversation):
    server = openai_server([step({"action": "describe_workflow", "arguments": {"workflow": "secret-note"}}),
                            step({"say": "Type the token in the masked field."})])
    in_mode(make_conversation, server, "json").send("write a secret note")
    params = option(schema_of(server.requests[1]), "validate_params")["properties"]["arguments"]["properties"][
        "params"]
    assert params["properties"]["token"] == {"enum": ["<redacted>"]}


def test_auto_mode_asks_llama_server_whether_its_template_does_tool_calls(openai_server, make_conversation):
    no_tools = openai_server([step({"say": "Hello."})],
                             props={"chat_template_caps": {"supports_tool_calls": False}})
    backend = OpenAIBackend(no_tools.base_url, DEFAULT_MODEL, timeout=10)
    make_conversation(backend).send("hi")
    assert backend.mode == "json" and "response_format" in no_tools.requests[0]
    with_tools = openai_server(["Hello."], props={"chat_template_caps": {"supports_tool_calls": True}})
    backend = OpenAIBackend(with_tools.base_url, DEFAULT_MODEL, timeout=10)
    make_conversation(backend).send("hi")
    assert backend.mode == "native" and with_tools.requests[0]["tool_choice"] == "auto"


def test_auto_mode_asks_ollama_whether_the_model_does_tool_calls(openai_server, make_conversation):
    server = openai_server([step({"say": "Hello."})], show={"capabilities": ["completion"]})
    backend = OpenAIBackend(server.base_url, DEFAULT_MODEL, timeout=10)
    make_conversation(backend).send("hi")
    assert backend.mode == "json" and "response_format" in server.requests[0]


def test_auto_mode_falls_back_to_json_when_the_server_refuses_tools(openai_server, make_conversation):
    server = openai_server([refuse(500, "tools param requires --jinja flag"), step(DESCRIBE), step({"say": "ok"})])
    convo = make_conversation(OpenAIBackend(server.base_url, DEFAULT_MODEL, timeout=10))
    events = convo.send("describe tabular-profile")
    assert [type(e).__name__ for e in events] == ["ActionCalled", "AssistantSaid"]
    assert "tools" in server.requests[0] and "response_format" in server.requests[1]
    assert convo.backend.mode == "json"


def test_text_form_tool_calls_are_run_in_native_mode(openai_server, make_conversation):
    server = openai_server([
        '<tool_call>\n{"name": "describe_workflow", "arguments": {"workflow": "tabular-profile"}}\n</tool_call>',
        '```json\n{"name": "validate_params", "arguments": {"workflow": "tabular-profile", "params": '
        '{"dataset_file": "data/examples/tabular-penguins.csv"}}}\n```',
        '{"name": "no_such_action", "arguments": {}}',
    ])
    convo = in_mode(make_conversation, server, "native")
    events = convo.send("profile the penguins")
    assert [type(e).__name__ for e in events] == ["ActionCalled", "ActionCalled", "DraftReady", "AssistantSaid"]
    assert events[-1].text == '{"name": "no_such_action", "arguments": {}}'  # not an action: it is text
    # the history holds them as real tool calls, so the next request is well-formed for any server
    assert [m["tool_calls"][0]["function"]["name"] for m in server.requests[2]["messages"]
            if m.get("tool_calls")] == ["describe_workflow", "validate_params"]


def test_the_first_request_is_small_and_numbered_with_one_worked_example(openai_server, make_conversation):
    server = openai_server([step({"say": "Hello."})])
    in_mode(make_conversation, server, "json").send("profile data/examples/tabular-penguins.csv")
    system = server.requests[0]["messages"][0]["content"]
    assert system.count("Example") == 1 and "\n1. " in system and "\n7. " in system
    assert len(json.dumps(server.requests[0]["messages"])) < 4000  # ~1,000 tokens with the JSON rules


def test_old_tool_results_are_trimmed_but_the_parameter_table_stays(conversation):
    convo, server = conversation([
        [call("search_workflows", {"query": "csv"})], [call("describe_workflow", {"workflow": "tabular-profile"})],
        "Found it.", "Sure."])
    convo.send("find a csv workflow")
    convo.send("thanks")
    results = [json.loads(m["content"]) for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert list(results[0]) == ["trimmed"] and "searched workflows" in results[0]["trimmed"]
    assert results[1]["params"][0]["name"] == "dataset_file"  # the latest parameter table is kept whole


def test_a_repeated_identical_call_is_answered_with_a_note_not_run_again(conversation):
    convo, server = conversation([[call("describe_workflow", {"workflow": "tabular-profile"})],
                                  [call("describe_workflow", {"workflow": "tabular-profile"})], "OK."])
    events = convo.send("describe it")
    first, again = [e for e in events if isinstance(e, ActionCalled)]
    assert first.summary.startswith("described") and "repeated call" in again.summary
    note = json.loads(server.requests[2]["messages"][-1]["content"])
    assert "already called with these arguments" in note["note"]
    assert len(convo.audit.path.read_text().splitlines()) > 0
    actions = [json.loads(l) for l in convo.audit.path.read_text().splitlines()]
    assert [a["summary"] for a in actions if a["kind"] == "action"][1].startswith("describe_workflow: repeated")


def test_a_native_tool_list_describes_each_workflow_once_per_turn(conversation):
    convo, server = conversation([[call("describe_workflow", {"workflow": "tabular-profile"})], "OK."])
    convo.send("describe it")
    describe = next(t for t in server.requests[1]["tools"] if t["function"]["name"] == "describe_workflow")
    assert describe["function"]["parameters"]["properties"]["workflow"]["enum"] == ["secret-note"]
    assert [t for t in convo.tools if t["function"]["name"] == "describe_workflow"]  # a new turn may again


def test_once_the_draft_passed_the_gate_a_json_step_may_only_talk(openai_server, make_conversation):
    server = openai_server([step(DESCRIBE), step(VALIDATE), step({"say": "Ready."})])
    in_mode(make_conversation, server, "json").send("profile the penguins")
    # bounded: a runaway reply stops at the grammar's limit, which the reply's token budget sets
    say = {"type": "string", "maxLength": step_bounds(DEFAULT_MAX_TOKENS)[2]}
    assert schema_of(server.requests[2]) == {"oneOf": [{"type": "object", "additionalProperties": False,
                                                        "required": ["say"], "properties": {"say": say}}]}


def test_auto_mode_asks_again_once_a_server_that_was_down_is_up(make_conversation):
    from openai_server import ScriptedOpenAI

    server = ScriptedOpenAI([step({"say": "Hello."})], props={"chat_template_caps": {"supports_tool_calls": False}})
    url = server.bind()  # nothing listens yet
    try:
        convo = make_conversation(OpenAIBackend(url, DEFAULT_MODEL, timeout=5))
        assert type(convo.send("hi")[0]).__name__ == "BackendFailed"
        server.start()
        convo.send("hi")
        assert convo.backend.mode == "json" and "response_format" in server.requests[0]
    finally:
        server.stop()
