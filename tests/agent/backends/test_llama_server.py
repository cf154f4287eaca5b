"""The OpenAI backend against a real llama.cpp `llama-server` (any small instruct GGUF), when one is running.

Set SNAKEGATE_TEST_LLAMA_URL to its /v1 URL (e.g. http://127.0.0.1:8088/v1) to run these; otherwise they are
skipped with that message. They prove the wire format against the real server, not a model's skill: auto mode
finds out from /props whether the chat template does tool calls, every step the model sends under the
JSON-schema response format is a well-formed action or text, nothing fails, and the first request stays
small. How far a given model gets is measured in bench/bench_llm.py.
"""

from __future__ import annotations

import json
import os

import pytest

from snakegate.agent.backends.choose import OpenAIBackend
from snakegate.agent.events import ActionCalled, BackendFailed

URL = os.environ.get("SNAKEGATE_TEST_LLAMA_URL")
pytestmark = pytest.mark.skipif(not URL, reason="no llama-server: set SNAKEGATE_TEST_LLAMA_URL to its /v1 URL "
                                                "(e.g. http://127.0.0.1:8088/v1) to run these")
REQUEST = "profile data/examples/tabular-penguins.csv, fill missing values with the median"


def test_a_turn_against_llama_server_runs_well_formed_steps_only(make_conversation):
    backend = OpenAIBackend(URL, "local", timeout=900, max_tokens=256)
    convo = make_conversation(backend, max_steps=3)
    events = convo.send(REQUEST)
    assert not [e for e in events if isinstance(e, BackendFailed)], events
    assert backend.mode in ("json", "native")
    actions = [e for e in events if isinstance(e, ActionCalled)]
    codes = [e.summary for e in actions if not e.ok]
    assert all("bad_arguments" not in c and "unknown_action" not in c for c in codes), codes  # the grammar held
    responses = [json.loads(line) for line in convo.audit.path.read_text().splitlines()
                 if json.loads(line)["kind"] == "response"]
    assert responses and responses[0]["usage"]["prompt_tokens"] < 1500
    assert convo.answered_by  # the server names the model it runs
