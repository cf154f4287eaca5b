"""A request that names nothing gets a question back naming the choices, never a guessed draft (issue 26 §3).

Real Conversation over the real OpenAIBackend and the scripted OpenAI-compatible server: the scripted model
would guess a draft if it were asked.
"""

from __future__ import annotations

import pytest

from openai_server import call
from snakegate.agent.events import AssistantSaid, DraftReady
from snakegate.agent.vague import is_vague

PENGUINS = "data/examples/tabular-penguins.csv"
GUESS = [call("validate_params", {"workflow": "tabular-profile", "params": {"dataset_file": PENGUINS}})]


def test_a_vague_request_gets_a_question_naming_the_workflows_and_no_draft(conversation):
    convo, server = conversation([GUESS, "The draft is ready."])
    events = convo.send("analyse my data")
    (said,) = events
    assert isinstance(said, AssistantSaid)
    assert said.text.startswith("Which analysis would you like, and on which data file?")
    for wf_id in convo.registry.ids():
        assert wf_id in said.text
    assert server.requests == [] and convo.draft is None   # the model was not asked to guess


def test_the_researchers_answer_to_the_question_goes_to_the_model_with_the_question(conversation):
    convo, server = conversation([GUESS, "The draft is ready."])
    convo.send("Can you help me with my data?")
    events = convo.send(f"profile {PENGUINS}")
    assert any(isinstance(e, DraftReady) for e in events)
    roles = [(m["role"], m["content"][:30]) for m in server.requests[0]["messages"][1:]]
    assert roles == [("user", "Can you help me with my data?"), ("assistant", "Which analysis would you like,"),
                     ("user", f"profile {PENGUINS}"[:30])]


def test_a_vague_message_right_after_the_question_is_not_asked_again(conversation):
    convo, server = conversation(["Tell me which workflow: tabular-profile or secret-note?"])
    convo.send("analyse my data")
    convo.send("please do something")
    assert len(server.requests) == 1   # the model answers the second time, no loop of the same question


@pytest.mark.parametrize("text", ["analyse my data", "Analyze my data please!", "I have some data, what can I do?",
                                  "can you help me with my measurements?", "please process my files"])
def test_requests_that_name_nothing_are_vague(text):
    assert is_vague(text, ["tabular-profile"])


@pytest.mark.parametrize("text", ["profile my table", "benchmark a classifier", "analyse data/x.csv",
                                  "analyse my data with seed 4", "explain the last run", "tabular-profile please",
                                  "what runs did I do yesterday?", "look at my results", "columns=a", "hi", "thanks!",
                                  "run it", "help", "done"])
def test_requests_that_name_something_go_to_the_model(text):
    assert not is_vague(text, ["tabular-profile"])
