"""Fixtures for the agent tests: a throw-away registry with a sensitive workflow, a real scripted
OpenAI-compatible server, and conversations wired to it through the real OpenAIBackend.

`openai_server(replies, **kw)` starts a `ScriptedOpenAI` (tests/agent/openai_server.py) and stops it
after the test. The registry is made by tests/registry_copies.make_registry, never the checkout.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from openai_server import DEFAULT_MODEL, ScriptedOpenAI
from registry_copies import LABEL_PARAM, TOKEN_PARAM, make_registry, note_workflow
from snakegate.agent.backends import OpenAIBackend
from snakegate.agent.controller import Conversation
from snakegate.registry import Registry
from snakegate.settings import load_settings

# A workflow whose contract marks a top-level and a nested value x-sensitive. The gate builds its DAG;
# nothing here runs it.
SECRET_NOTE = note_workflow("secret-note", "Secret note",
                            "Writes a note using an API token that must never reach a model.", {
    "label": LABEL_PARAM,
    "token": TOKEN_PARAM,
    "service": {"type": "object", "additionalProperties": False, "description": "Service login.",
                "properties": {
                    "user": {"type": "string", "default": "ada", "description": "User name."},
                    "password": {"type": "string", "x-sensitive": True, "description": "Password."}}},
})


@pytest.fixture
def agent_registry(tmp_path) -> Path:
    """A registry (tabular-profile, secret-note, the demo tables) in tmp_path."""
    return make_registry(tmp_path / "registry", {"secret-note": SECRET_NOTE})


@pytest.fixture
def openai_server():
    """Factory: `openai_server(replies, **kw)` -> a started ScriptedOpenAI, stopped after the test."""
    servers: list[ScriptedOpenAI] = []

    def start(replies=None, **kw) -> ScriptedOpenAI:
        server = ScriptedOpenAI(replies, **kw)
        servers.append(server)
        server.start()
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def make_conversation(agent_registry):
    """Factory: `make_conversation(backend, max_steps=8)` -> a Conversation over the test registry."""

    def make(backend, *, max_steps: int = 8) -> Conversation:
        return Conversation(Registry.load(agent_registry), load_settings(agent_registry), backend,
                            conversation_id="c-test", max_steps=max_steps)

    return make


@pytest.fixture
def conversation(openai_server, make_conversation):
    """Factory: `conversation(replies, model=..., max_steps=..., **server options)` -> (Conversation over
    the real OpenAIBackend, its ScriptedOpenAI server)."""

    def make(replies, *, model: str = DEFAULT_MODEL, max_steps: int = 8, **server_kw):
        server = openai_server(replies, **server_kw)
        backend = OpenAIBackend(server.base_url, model, api_key="test-key", timeout=10)
        return make_conversation(backend, max_steps=max_steps), server

    return make
