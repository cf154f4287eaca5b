"""OpenAIBackend against a real HTTP server: reply mapping, and every failure as a message with the fix."""

from __future__ import annotations

import pytest

from openai_server import DEFAULT_MODEL, ScriptedOpenAI, call
from snakegate.agent.actions.platform import INVALID_JSON
from snakegate.agent.backend import BackendError, ToolCall
from snakegate.agent.backends.choose import OpenAIBackend, make_backend
from snakegate.agent.events import AssistantSaid, BackendFailed
from snakegate.errors import UserError
from snakegate.registry.settings import load_settings

HELLO = [{"role": "user", "content": "hello"}]


def test_reply_maps_text_and_tool_calls(openai_server):
    server = openai_server([[call("search_workflows", {"query": "csv"}, id="call_9")], "Plain text."])
    backend = OpenAIBackend(server.base_url, DEFAULT_MODEL)
    tools = [{"type": "function", "function": {"name": "search_workflows", "description": "d",
                                               "parameters": {"type": "object", "properties": {}}}}]
    reply = backend.request(HELLO, tools)
    assert reply.tool_calls == (ToolCall("call_9", "search_workflows", {"query": "csv"}),)
    assert backend.request(HELLO, tools).text == "Plain text."
    body = server.requests[0]
    assert body["model"] == DEFAULT_MODEL and body["messages"] == HELLO and body["tools"] == tools


def test_malformed_tool_arguments_are_handed_on_not_raised(openai_server):
    server = openai_server([[call("describe_workflow", "{not json")], [call("inspect_data", "[1, 2]")]])
    backend = OpenAIBackend(server.base_url, DEFAULT_MODEL)
    assert backend.request(HELLO, []).tool_calls[0].arguments == {INVALID_JSON: "{not json"}
    assert backend.request(HELLO, []).tool_calls[0].arguments == {INVALID_JSON: "[1, 2]"}


def test_server_down_is_backend_failed_naming_the_url_then_retry_works(make_conversation):
    server = ScriptedOpenAI(["Hello again."])
    url = server.bind()  # the port is ours but nothing listens: connections are refused
    try:
        convo = make_conversation(OpenAIBackend(url, DEFAULT_MODEL, timeout=5))
        before = list(convo.messages)
        (failed,) = convo.send("hi")
        assert isinstance(failed, BackendFailed)
        assert url in failed.message and "send your message again" in failed.message
        assert convo.messages == before  # nothing half-done to confuse the retry
        server.start()
        assert convo.send("hi") == [AssistantSaid("Hello again.")]
        assert [m["content"] for m in server.requests[0]["messages"] if m["role"] == "user"] == ["hi"]
    finally:
        server.stop()


def test_unknown_model_is_backend_failed(conversation):
    convo, server = conversation(["never served"], model="no-such-model")
    (failed,) = convo.send("hi")
    assert isinstance(failed, BackendFailed)
    assert "no-such-model" in failed.message and "404" in failed.message and server.base_url in failed.message
    assert f"{server.base_url}/models" in failed.message


def test_wrong_api_key_is_backend_failed_naming_the_variable(openai_server):
    server = openai_server(["hi"], api_key="right-key")
    with pytest.raises(BackendError, match="SNAKEGATE_LLM_API_KEY"):
        OpenAIBackend(server.base_url, DEFAULT_MODEL, api_key="wrong-key").request(HELLO, [])


def test_api_key_is_read_from_the_environment(openai_server, monkeypatch):
    server = openai_server(["hi"], api_key="env-key")
    monkeypatch.setenv("SNAKEGATE_LLM_API_KEY", "env-key")
    assert OpenAIBackend(server.base_url, DEFAULT_MODEL).request(HELLO, []).text == "hi"


def test_slow_server_is_a_timeout_naming_the_url(openai_server):
    server = openai_server(["late"], delay=2.0)
    with pytest.raises(BackendError, match="did not answer within 0.5 s"):
        OpenAIBackend(server.base_url, DEFAULT_MODEL, timeout=0.5).request(HELLO, [])


def test_make_backend_uses_the_configured_server(agent_registry, monkeypatch):
    monkeypatch.setenv("SNAKEGATE_LLM_BASE_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("SNAKEGATE_LLM_MODEL", "qwen2.5:7b")
    backend = make_backend(load_settings(agent_registry))
    assert (backend.name, backend.model, backend.base_url) == ("openai-compatible", "qwen2.5:7b",
                                                               "http://127.0.0.1:1/v1")
    override = make_backend(load_settings(agent_registry), model="other", base_url="http://localhost:2/v1")
    assert (override.model, override.base_url) == ("other", "http://localhost:2/v1")


def test_make_backend_without_a_model_is_the_guided_dialogue(agent_registry):
    settings = load_settings(agent_registry)
    assert make_backend(settings).name == "guided"
    assert make_backend(settings, guided=True, model="m", base_url="http://localhost:2/v1").name == "guided"


def test_make_backend_with_half_a_configuration_says_what_is_missing(agent_registry):
    with pytest.raises(UserError, match="no server URL"):
        make_backend(load_settings(agent_registry), model="qwen2.5:7b")
