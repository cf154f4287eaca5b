"""A reply cut at the token limit is dropped, said plainly, and never sent again (issue 26 §4).

A small model under a grammar can write until max_tokens: a 400 KB runaway reply, kept in the history, made
the next request 426 KB, and the cut-off raw JSON was shown to the researcher. Real Conversation over the
real OpenAIBackend and the scripted OpenAI-compatible server.
"""

from __future__ import annotations

import json

from openai_server import DEFAULT_MODEL, call, completion
from snakegate.agent.backends.choose import OpenAIBackend
from snakegate.agent.events import ActionCalled, BackendFailed, DraftCleared

RUNAWAY = "1000" * 20_000   # 80 KB of a run_id that never ends


def test_a_runaway_reply_is_dropped_and_the_next_request_does_not_carry_it(conversation):
    convo, server = conversation([completion(f"Your run id is {RUNAWAY}", finish_reason="length"),
                                  "tabular-profile fits a CSV table."])
    (failed,) = convo.send("analyse penguins")
    assert isinstance(failed, BackendFailed)
    assert failed.message.startswith("the model's reply was cut off at the token limit (max_tokens=")
    assert "send your message again" in failed.message and "server is running" not in failed.message
    convo.send("which workflow profiles the penguins table?")
    second = server.raw_bodies[1]
    assert RUNAWAY[:100] not in second
    assert len(second) < len(server.raw_bodies[0]) + 1_000   # the size of one more short message, not 80 KB
    # the broken first turn is not copied either: the researcher's first message went with it
    assert [m["content"] for m in server.requests[1]["messages"] if m["role"] == "user"] == [
        "which workflow profiles the penguins table?"]


def test_a_cut_json_step_is_never_shown_raw_nor_run(openai_server, make_conversation):
    cut = '{"action": "validate_params", "arguments": {"workflow": "tabular-profile", "params": {"dataset_file": "da'
    server = openai_server([completion(cut, finish_reason="length")])
    convo = make_conversation(OpenAIBackend(server.base_url, DEFAULT_MODEL, timeout=10, tool_mode="json"))
    events = convo.send("profile the penguins")
    assert not any(isinstance(e, ActionCalled) for e in events)
    assert all('{"action"' not in json.dumps(getattr(e, "text", None) or getattr(e, "message", "")) for e in events)
    assert [m["role"] for m in convo.messages] == ["system"] and convo.draft is None


def test_a_cut_reply_after_a_step_withdraws_the_turns_draft_and_says_so(conversation):
    good = [call("validate_params", {"workflow": "tabular-profile",
                                     "params": {"dataset_file": "data/examples/tabular-penguins.csv"}})]
    convo, server = conversation([good, completion("The draft is ready and " + RUNAWAY, finish_reason="length")])
    events = convo.send("profile the penguins")  # nothing stated to draft from (test_cut_fallback.py: something)
    assert isinstance(events[-2], DraftCleared) and isinstance(events[-1], BackendFailed)
    assert convo.draft is None and [m["role"] for m in convo.messages] == ["system"]
