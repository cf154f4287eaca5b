"""The request every OpenAI-compatible server accepts, settings for it, and failures that say what fits.

Real scripted HTTP server (tests/openai_server.py), real OpenAIBackend and Conversation.
"""

from __future__ import annotations

import time

import pytest

from openai_server import DEFAULT_MODEL, ScriptedOpenAI, call, completion, refuse
from snakegate.agent.backend import BackendError
from snakegate.agent.backends.choose import DEFAULT_TIMEOUT, OpenAIBackend, make_backend
from snakegate.agent.events import ActionCalled, BackendFailed
from snakegate.errors import UserError
from snakegate.registry.settings import load_settings

HELLO = [{"role": "user", "content": "hello"}]
TOOLS = [{"type": "function", "function": {"name": "search_workflows", "description": "d",
                                           "parameters": {"type": "object", "properties": {}}}}]


def test_a_request_carries_tool_choice_auto_max_tokens_and_temperature(openai_server):
    server = openai_server(["hi"])
    OpenAIBackend(server.base_url, DEFAULT_MODEL, max_tokens=321, temperature=0.2,
                  tool_mode="native").request(HELLO, TOOLS)
    body = server.requests[0]
    assert body["tool_choice"] == "auto" and body["tools"] == TOOLS
    assert body["max_tokens"] == 321 and body["temperature"] == 0.2


def test_a_step_with_tool_calls_goes_back_with_empty_content_never_null(conversation):
    convo, server = conversation([[call("search_workflows", {"query": "csv"})], "Found it."])
    convo.send("find a csv workflow")
    step = next(m for m in server.requests[1]["messages"] if m.get("tool_calls"))
    assert step["content"] == ""  # as received: the raw body parsed, so null would be None here


def test_agent_settings_set_timeout_max_tokens_temperature_and_tool_mode(agent_registry):
    (agent_registry / "snakegate.toml").write_text(
        '[agent]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\ntimeout = 45\nmax_tokens = 200\n'
        'temperature = 0.3\ntool_mode = "json"\n')
    backend = make_backend(load_settings(agent_registry))
    assert (backend.timeout, backend.max_tokens, backend.temperature, backend.tool_mode) == (45, 200, 0.3, "json")
    flags = make_backend(load_settings(agent_registry), timeout=9, max_tokens=64, temperature=0, tool_mode="native")
    assert (flags.timeout, flags.max_tokens, flags.temperature, flags.tool_mode) == (9, 64, 0, "native")


def test_the_default_timeout_suits_a_model_on_a_cpu(agent_registry):
    backend = make_backend(load_settings(agent_registry), model="m", base_url="http://127.0.0.1:9/v1")
    assert backend.timeout == DEFAULT_TIMEOUT >= 120


@pytest.mark.parametrize("line,needle", [("timeout = -1", "agent.timeout must be a number from 1 to 3600"),
                                         ('max_tokens = "lots"', "agent.max_tokens must be an integer"),
                                         ('tool_mode = "grammar"', 'agent.tool_mode must be "auto"')])
def test_a_bad_agent_setting_names_the_field_and_what_it_accepts(agent_registry, line, needle):
    (agent_registry / "snakegate.toml").write_text(f"[agent]\n{line}\n")
    with pytest.raises(UserError, match=needle):
        load_settings(agent_registry)


def test_a_bad_model_flag_is_a_usage_error_naming_it(agent_registry, cli):
    code, _, err = cli("--registry", agent_registry, "ask", "hi", "--model", "m", "--base-url",
                       "http://127.0.0.1:9/v1", "--max-tokens", "2")
    assert code == 2 and "--max-tokens must be from 16" in err


def test_a_reply_cut_at_max_tokens_is_said_plainly_and_not_shown(conversation):
    convo, _ = conversation([completion("The workflow you want is tabular-prof", finish_reason="length")])
    (failed,) = convo.send("which workflow?")
    assert isinstance(failed, BackendFailed)
    assert "cut off at the token limit" in failed.message and "max_tokens" in failed.message
    assert "tabular-prof" not in failed.message


def test_a_cut_tool_call_is_dropped_not_run(conversation):
    convo, _ = conversation([completion([call("describe_workflow", '{"workflow": "tabular-')],
                                        finish_reason="length"), "Sorry."])
    events = convo.send("describe it")
    assert not any(isinstance(e, ActionCalled) for e in events)
    assert isinstance(events[-1], BackendFailed) and "cut off at the token limit" in events[-1].message


def test_the_model_that_answered_is_kept_beside_the_requested_one(conversation):
    convo, _ = conversation([completion("Hello.", model="qwen2.5-7b-instruct-q4_k_m")], model=DEFAULT_MODEL)
    convo.send("hi")
    assert convo.backend.model == DEFAULT_MODEL and convo.answered_by == "qwen2.5-7b-instruct-q4_k_m"


# ---- failures whose hint fits ----------------------------------------------------------------------
def test_server_down_on_the_ollama_port_says_start_ollama():
    backend = OpenAIBackend("http://127.0.0.1:11434/v1", "qwen2.5:7b", timeout=5, tool_mode="native")
    try:
        backend.request(HELLO, [])
    except BackendError as exc:
        assert "ollama serve" in exc.message
    else:
        pytest.skip("something answers on port 11434 on this machine")


def test_server_down_elsewhere_does_not_mention_ollama():
    server = ScriptedOpenAI()
    url = server.bind()  # the port is ours but nothing listens
    try:
        with pytest.raises(BackendError) as info:
            OpenAIBackend(url, DEFAULT_MODEL, timeout=5, tool_mode="native").request(HELLO, [])
    finally:
        server.stop()
    assert "ollama" not in info.value.message and f"port {server.port}" in info.value.message


def test_a_server_error_points_to_the_servers_log_not_to_tool_support(openai_server):
    server = openai_server([refuse(500, "llama_decode failed: out of memory")])
    with pytest.raises(BackendError) as info:
        OpenAIBackend(server.base_url, DEFAULT_MODEL, tool_mode="native").request(HELLO, TOOLS)
    assert "its own log says why" in info.value.message and "tool" not in info.value.message.split(";")[-1]


def test_a_context_overflow_says_to_start_over_or_give_a_bigger_context(openai_server):
    server = openai_server([refuse(400, "the request exceeds the available context size (4096 tokens)")])
    with pytest.raises(BackendError, match="context is too small for this conversation: .*-np 1.*restart"):
        OpenAIBackend(server.base_url, DEFAULT_MODEL, tool_mode="native").request(HELLO, TOOLS)


def test_a_server_refusing_tools_in_native_mode_points_to_json_mode(openai_server):
    server = openai_server([refuse(500, "tools param requires --jinja flag")])
    with pytest.raises(BackendError, match='tool_mode = "json"'):
        OpenAIBackend(server.base_url, DEFAULT_MODEL, tool_mode="native").request(HELLO, TOOLS)


def test_a_slow_server_says_how_to_wait_longer(openai_server):
    server = openai_server(["late"], delay=2.0)
    with pytest.raises(BackendError, match=r"within 0.5 s.*--timeout"):
        OpenAIBackend(server.base_url, DEFAULT_MODEL, timeout=0.5, tool_mode="native").request(HELLO, [])


def test_the_timeout_flag_reaches_the_request(openai_server, agent_registry, cli):
    """--timeout on the command line, not only [agent] timeout: a reply slower than it ends the command with
    the sentence that names the flag, after about the flag's seconds."""
    server = openai_server(["late"] * 4, delay=3.0)
    started = time.monotonic()
    code, out, err = cli("--registry", agent_registry, "ask", "hi", "--model", DEFAULT_MODEL, "--base-url",
                         server.base_url, "--tool-mode", "native", "--timeout", "1")
    said = " ".join((out + err).split())  # ask wraps its last words to the terminal's width
    assert code == 2 and "within 1 s" in said and "--timeout" in said
    assert time.monotonic() - started < 2.9 * 2  # not the server's 3 s per try, let alone the default 180 s


def test_a_failure_after_a_written_draft_withdraws_it_with_the_turn(conversation):
    convo, server = conversation([[call("validate_params", {"workflow": "tabular-profile",
                                                             "params": {"dataset_file": PENGUINS}})]])
    events = convo.send("profile the penguins")  # the draft is written, then the script runs out: 500
    assert [type(e).__name__ for e in events] == ["ActionCalled", "DraftReady", "DraftCleared", "BackendFailed"]
    assert convo.draft is None and [m["role"] for m in convo.messages] == ["system"]
    assert isinstance(events[-1], BackendFailed)


PENGUINS = "data/examples/tabular-penguins.csv"
