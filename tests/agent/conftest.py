"""Fixtures for the agent tests: a throw-away registry with a sensitive workflow, a real scripted
OpenAI-compatible server, and conversations wired to it through the real OpenAIBackend.

`openai_server(replies, **kw)` starts a `ScriptedOpenAI` (tests/agent/openai_server.py) and stops it
after the test. The registry is made by tests/registry_copies.make_registry, never the checkout.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openai_server import DEFAULT_MODEL, ScriptedOpenAI
from registry_copies import make_registry
from snakegate.agent.backends import OpenAIBackend
from snakegate.agent.controller import Conversation
from snakegate.registry import Registry
from snakegate.settings import load_settings

# A workflow whose contract marks a top-level and a nested value x-sensitive. The gate builds its DAG;
# nothing here runs it.
SECRET_NOTE = {
    "workflow.yaml": """\
        id: secret-note
        version: 0.1.0
        title: Secret note
        description: Writes a note using an API token that must never reach a model.
        tags: [test, note]
        maintainers: [{name: snakegate tests}]
        trust: community
        rules:
          note: {output: {note: text}}
        outputs:
          note: {path: results/note.txt, type: text, description: The note.}
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "additionalProperties": False, "required": ["token"],
        "properties": {
            "label": {"type": "string", "default": "note", "description": "Text written into the note."},
            "token": {"type": "string", "minLength": 8, "x-sensitive": True,
                      "description": "An API token; never leaves the machine."},
            "service": {"type": "object", "additionalProperties": False, "description": "Service login.",
                        "properties": {
                            "user": {"type": "string", "default": "ada", "description": "User name."},
                            "password": {"type": "string", "x-sensitive": True, "description": "Password."}}},
        },
    }),
    "Snakefile": """\
        rule all:
            input:
                "results/note.txt",


        rule note:
            output:
                note="results/note.txt",
            params:
                label=config["label"],
                token=config["token"],
                service=config.get("service", {}),
            shell:
                "echo {params.label} > {output.note}"
        """,
}


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
