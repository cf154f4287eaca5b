"""The controller's note to the model about a draft that differs from the request is never shown to the
researcher as the model's reply (issue 26, bench: a small model said it back verbatim); the controller's own
plain statement of the differences takes its place. Real scripted HTTP server, real gate and draft."""

from __future__ import annotations

import json

from openai_server import call
from snakegate.agent import faithful
from snakegate.agent.events import AssistantSaid, DraftReady

PENGUINS = "data/examples/tabular-penguins.csv"
REQUEST = f"Profile {PENGUINS} using only the columns species, bill_length_mm and body_mass_g."
DESCRIBE = call("describe_workflow", {"workflow": "tabular-profile"})
ONE_COLUMN = call("validate_params", {"workflow": "tabular-profile",
                                      "params": {"dataset_file": PENGUINS, "columns": ["species"]}})


def said(events) -> list[str]:
    return [e.text for e in events if isinstance(e, AssistantSaid)]


def test_a_reply_that_repeats_the_controllers_note_is_replaced_by_the_plain_differences(conversation):
    echo = "The draft passed the gate but differs from what the researcher asked; tell them each difference and why."
    convo, _ = conversation([[DESCRIBE], [ONE_COLUMN], echo])
    events = convo.send(REQUEST)
    assert any(isinstance(e, DraftReady) for e in events)
    reply = said(events)[-1]
    assert "the researcher" not in reply and "tell them" not in reply
    assert reply.startswith("The draft passed the gate, but it differs from what you asked: you asked for columns "
                            "species, bill_length_mm, body_mass_g; the draft keeps only species")
    assert convo.messages[-1] == {"role": "assistant", "content": reply}   # the history holds what was shown
    audit = [json.loads(line) for line in convo.audit.path.read_text().splitlines()]
    assert [a["text"] for a in audit if a["kind"] == "echo_replaced"] == [echo]


def test_a_reply_that_states_the_differences_in_its_own_words_is_kept(conversation):
    own = "I kept only species; bill_length_mm and body_mass_g are not in the draft. Shall I add them?"
    convo, _ = conversation([[DESCRIBE], [ONE_COLUMN], own])
    assert said(convo.send(REQUEST))[-1] == own


def test_the_note_said_back_in_other_case_and_punctuation_is_still_recognised():
    assert faithful.echoes_note("THE DRAFT passed the gate, but differs from what the RESEARCHER asked!")
    assert faithful.echoes_note("ok - tell them each difference and why")
    assert not faithful.echoes_note("The draft is ready; it differs from what you asked in the columns.")
