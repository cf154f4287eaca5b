"""A model that asks for the same successful call again and again (a small model searching the same words,
listing runs, finding connections) is stopped at the third identical call and the researcher is asked, instead
of running to the step limit (issue 26 §4). Real scripted HTTP server, real OpenAIBackend, real actions."""

from __future__ import annotations

import json

import pytest

from openai_server import call
from snakegate.agent.events import ActionCalled, AssistantSaid

SAME_CALLS = [("search_workflows", {"query": "profile a table"}),
              ("list_runs", {}),
              ("find_connections", {"workflow": "tabular-profile"})]


@pytest.mark.parametrize("name,arguments", SAME_CALLS, ids=[n for n, _ in SAME_CALLS])
def test_the_same_successful_call_a_third_time_stops_the_turn_and_asks_the_researcher(conversation, name,
                                                                                      arguments):
    convo, server = conversation([[call(name, arguments)]] * 8 + ["never reached"])
    events = convo.send("what can I do with the penguins table?")
    assert len(server.requests) == 3       # not the 8-step limit
    calls = [e for e in events if isinstance(e, ActionCalled)]
    assert [c.ok for c in calls] == [True, True, False]
    said = [e.text for e in events if isinstance(e, AssistantSaid)]
    assert said and f"asked for {name} with the same arguments 3 times" in said[-1]
    assert said[-1].endswith("Tell me what to do next, or rephrase the request.")
    stopped = [json.loads(line) for line in convo.audit.path.read_text().splitlines()
               if json.loads(line)["kind"] == "stopped"]
    assert stopped and stopped[-1]["reason"] == "repeated_call"


def test_a_call_made_only_twice_is_answered_with_a_note_and_the_turn_goes_on(conversation):
    convo, server = conversation([[call("search_workflows", {"query": "profile"})],
                                  [call("search_workflows", {"query": "classify"})],
                                  [call("search_workflows", {"query": "profile"})],
                                  "Two workflows fit: tabular-profile and classifier-benchmark."])
    events = convo.send("what can I do with the penguins table?")
    assert events[-1] == AssistantSaid("Two workflows fit: tabular-profile and classifier-benchmark.")
    assert len(server.requests) == 4


def test_the_stopped_call_says_in_words_that_it_was_not_run(conversation):
    convo, _ = conversation([[call("list_runs", {})]] * 3)
    stopped = [e for e in convo.send("show my runs") if isinstance(e, ActionCalled)][-1]
    assert stopped.summary == "list_runs: the same call 3 times, not run again — the turn stops here"
