"""Fixtures for the agent tests: a throw-away registry with a sensitive workflow, a real scripted
OpenAI-compatible server, and conversations wired to it through the real OpenAIBackend.

`openai_server(replies, **kw)` starts a `ScriptedOpenAI` (tests/agent/openai_server.py) and stops it
after the test. The registry is made by tests/registry_copies.make_registry, never the checkout.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from openai_server import DEFAULT_MODEL, ScriptedOpenAI
from science_runs import science  # noqa: F401  (fixture: real runs of the science workflows, made once)
from registry_copies import LABEL_PARAM, TOKEN_PARAM, make_registry, note_workflow, one_rule_workflow
from snakegate.agent.backends.choose import OpenAIBackend
from snakegate.agent.controller import Conversation
from snakegate.registry.workflows import Registry
from snakegate.registry.settings import load_settings

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


# A workflow whose one job fails with a real error in its log, after writing a diagnostics.json next to
# its output (not a declared output, so Snakemake keeps it).
FAILING = one_rule_workflow(
    "failing-note", "Failing note", "Always fails, with a real error in its log, for the run-explaining tests.",
    "echo 'reading the table' > {log}; "
    "echo 'ValueError: the column {params.label} is empty' >> {log}; "
    "printf '{{\\\"residual\\\": 0.25, \\\"n_points\\\": 3}}' > $(dirname {output.note})/diagnostics.json; "
    "exit 3",
    label={"type": "string", "default": "flux", "description": "A column name."}, log=True)


@dataclass
class Ran:
    """A registry with real runs: `ok` (tabular-profile, succeeded) and `failed` (failing-note)."""

    root: Path
    ok: Path
    failed: Path


@pytest.fixture(scope="session")
def ran(tmp_path_factory) -> Ran:
    """Runs made once per test session by the real runner and Snakemake (tests read them; forks add runs)."""
    from snakegate.run import runner

    root = make_registry(tmp_path_factory.mktemp("ran") / "registry",
                         {"secret-note": SECRET_NOTE, "failing-note": FAILING})
    registry, settings = Registry.load(root), load_settings(root)
    ok = runner.execute(registry, settings, {"workflow": "tabular-profile",
                                             "params": {"dataset_file": "data/examples/tabular-penguins.csv"}},
                        runner.RunOptions(cores=1))
    failed = runner.execute(registry, settings, {"workflow": "failing-note", "params": {}}, runner.RunOptions(cores=1))
    assert (ok.status, failed.status) == ("succeeded", "failed"), (ok.record, failed.record)
    return Ran(root, ok.run_dir, failed.run_dir)
