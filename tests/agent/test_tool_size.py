"""The tool definitions sent to the model on every request do not grow with the registry: a big registry
offers the workflows its search ranks for the request, and any other one the conversation has named (a
search's hits), so a workflow found by search_workflows can still be described and drafted. A real
Conversation over the real OpenAI backend and a scripted OpenAI-compatible server; the request bodies it
received are what is measured.
"""

from __future__ import annotations

import json

from openai_server import DEFAULT_MODEL, call
from registry_copies import LABEL_PARAM, TOKEN_PARAM, make_registry, note_workflow
from snakegate.agent.backends.choose import OpenAIBackend
from snakegate.agent.controller import Conversation
from snakegate.agent.prompt import MAX_LISTED
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry


def _registry(root, size):
    notes = {f"note-{i:04d}": note_workflow(f"note-{i:04d}", f"Lab note {i}", f"Writes lab note number {i}.",
                                           {"label": LABEL_PARAM, "token": TOKEN_PARAM})
             for i in range(size)}
    notes["glacier-melt"] = note_workflow("glacier-melt", "Glacier melt model",
                                          "Estimates glacier melt from degree days.", {"label": LABEL_PARAM})
    return make_registry(root, notes)


def _offered(request: dict) -> dict[str, list[str]]:
    """Each tool's workflow enum, as the server received it."""
    enums = {}
    for tool in request["tools"]:
        props = tool["function"]["parameters"].get("properties") or {}
        if "enum" in (props.get("workflow") or {}):
            enums[tool["function"]["name"]] = props["workflow"]["enum"]
    return enums


def _converse(root, openai_server, replies, text):
    server = openai_server(replies)
    backend = OpenAIBackend(server.base_url, DEFAULT_MODEL, api_key="test-key", timeout=10)
    convo = Conversation(Registry.load(root), load_settings(root), backend, conversation_id="c-size", max_steps=6)
    return convo, convo.send(text), server


def test_the_tools_sent_are_the_same_size_at_30_and_300_workflows(tmp_path, openai_server):
    sizes = {}
    for size in (30, 300):
        root = _registry(tmp_path / f"r{size}", size)
        _, _, server = _converse(root, openai_server, ["Which note?"], "write a lab note")
        tools = server.requests[0]["tools"]
        sizes[size] = len(json.dumps(tools))
        assert all(len(ids) <= MAX_LISTED + 1 for ids in _offered(server.requests[0]).values())
    assert sizes[300] <= sizes[30] * 1.05, sizes  # the ids are as long at both sizes: within 5 %


def test_a_workflow_found_by_search_can_then_be_described(tmp_path, openai_server):
    root = _registry(tmp_path / "r", 60)
    convo, events, server = _converse(root, openai_server, [
        [call("search_workflows", {"query": "glacier melt"})],
        [call("describe_workflow", {"workflow": "glacier-melt"})],
        "It takes a label.",
    ], "write a lab note about ice")
    first, after_search = _offered(server.requests[0]), _offered(server.requests[1])
    # the request ranked notes first; glacier-melt was not offered until the search named it
    assert "glacier-melt" not in first["describe_workflow"]
    assert "glacier-melt" in after_search["describe_workflow"]
    assert [e.ok for e in events if type(e).__name__ == "ActionCalled"] == [True, True]


def test_a_small_registry_offers_every_workflow(tmp_path, openai_server):
    root = _registry(tmp_path / "r", 5)
    _, _, server = _converse(root, openai_server, ["Which one?"], "hello")
    ids = Registry.load(root).ids()
    assert _offered(server.requests[0])["describe_workflow"] == ids
