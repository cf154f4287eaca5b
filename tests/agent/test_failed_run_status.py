"""The chat asks about a failed run: `run_status` answers with the failing rule and the real error, never a crash.

A scripted model (real OpenAI-compatible HTTP server, real OpenAIBackend) calls run_status on the session's real
failed run (failing-note, made by the real runner and Snakemake in tests/agent/conftest.py); what the model
receives is read from the request that followed.
"""

from __future__ import annotations

import json

from openai_server import DEFAULT_MODEL, call
from snakegate.agent.backends.choose import OpenAIBackend
from snakegate.agent.controller import Conversation
from snakegate.agent.events import ActionCalled
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry


def test_run_status_of_a_failed_run_in_the_chat_names_the_rule_and_the_error(ran, openai_server):
    server = openai_server([[call("run_status", {"run_id": ran.failed.name})], "It failed in rule note."])
    backend = OpenAIBackend(server.base_url, DEFAULT_MODEL, api_key="test-key", timeout=10)
    convo = Conversation(Registry.load(ran.root), load_settings(ran.root), backend, conversation_id="c-failed")
    events = convo.send("why did my last run fail?")
    [called] = [e for e in events if isinstance(e, ActionCalled)]
    assert called.ok and called.summary == f"status of run {ran.failed.name}: failed", called
    [tool] = [m for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    status = json.loads(tool["content"])
    assert "error" not in status, status  # `error` would say the call itself was refused
    assert status["status"] == "failed"
    assert status["failure"] == {"rule": "note", "error": "ValueError: the column flux is empty"}
