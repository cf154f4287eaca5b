"""Under a grammar (json tool mode, a small model) the researcher's stated values win over the model's (issue 26).

SmolLM2-135M validated "only species, bill_length_mm and body_mass_g" as a column list of its own making and
was refused the same way until the repeat limit. A constrained model now fills only what was not stated; a
model with native tool calls keeps its own values (faithful.py says when they differ). Real Conversation, real
OpenAIBackend over the scripted server, real gate.
"""

from __future__ import annotations

import json

from openai_server import DEFAULT_MODEL
from snakegate.agent.backends.choose import OpenAIBackend
from snakegate.agent.events import ActionCalled, DraftReady

PENGUINS = "data/examples/tabular-penguins.csv"
REQUEST = f"profile {PENGUINS} using only the columns species and body_mass_g"
OWN = {"action": "validate_params", "arguments": {"workflow": "tabular-profile", "params": {
    "dataset_file": PENGUINS, "columns": ["island"], "drop_duplicates": False}}}


def test_a_constrained_models_value_for_a_stated_param_gives_way_to_the_researchers(openai_server,
                                                                                   make_conversation):
    server = openai_server([json.dumps(OWN), json.dumps({"say": "Ready."})])
    convo = make_conversation(OpenAIBackend(server.base_url, DEFAULT_MODEL, timeout=10, tool_mode="json"))
    events = convo.send(REQUEST)
    assert any(isinstance(e, DraftReady) for e in events)
    assert convo.draft.params["columns"] == ["species", "body_mass_g"]   # stated: the researcher's
    assert convo.draft.params["drop_duplicates"] is False                # not stated: the model's
    (validated,) = [e for e in events if isinstance(e, ActionCalled)]
    assert validated.summary.endswith("(from your request: columns)")


def test_a_native_tool_models_own_value_stands_and_the_draft_says_it_differs(conversation):
    convo, server = conversation([[{"id": "c1", "type": "function", "function": {
        "name": "validate_params", "arguments": json.dumps(OWN["arguments"])}}], "Ready."])
    convo.send(REQUEST)
    assert convo.draft.params["columns"] == ["island"]
    assert any("species, body_mass_g" in d for d in convo.draft.differences)
