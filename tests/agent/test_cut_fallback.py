"""A reply cut at the token limit does not lose the turn: what the researcher stated is drafted instead (issue 26).

SmolLM2-135M ends most turns in a reply cut at max_tokens (a column list repeated, a run id of digits); that used
to drop the whole turn, a draft it had reached included. Now the controller asks the gate with exactly what the
researcher stated (prefill.py) and ends the turn with that draft or the gate's refusal and a question. Real
Conversation, real OpenAIBackend over the scripted server, real gate.
"""

from __future__ import annotations

import json

from openai_server import call, completion
from snakegate.agent.events import AssistantSaid, BackendFailed, DraftReady

PENGUINS = "data/examples/tabular-penguins.csv"
RUNAWAY = "species, " * 5_000   # a column list that never ends


def test_a_cut_reply_drafts_what_the_researcher_stated_and_says_so(conversation):
    convo, server = conversation([completion('{"say": "' + RUNAWAY, finish_reason="length")])
    events = convo.send(f"profile {PENGUINS} using only the columns species and body_mass_g, fill gaps with the mean")
    assert [type(e).__name__ for e in events] == ["ActionCalled", "DraftReady", "AssistantSaid"]
    assert convo.draft.params["dataset_file"] == PENGUINS
    assert convo.draft.params["columns"] == ["species", "body_mass_g"]
    assert convo.draft.params["missing_strategy"] == "fill_mean"
    assert not convo.draft.differences    # what was asked, so it may be shown as ready
    said = events[-1].text
    assert said.startswith("The model's reply was cut off at the token limit") and "columns" in said
    assert RUNAWAY[:200] not in json.dumps(convo.messages)   # the cut reply is never kept


def test_a_cut_reply_on_a_mistaken_request_says_the_gates_refusal_and_asks(conversation):
    convo, server = conversation([completion('{"say": "' + RUNAWAY, finish_reason="length")])
    events = convo.send(f"profile {PENGUINS} with only the columns species and flipper_len_mm")
    assert not any(isinstance(e, DraftReady) for e in events) and convo.draft is None
    said = events[-1]
    assert isinstance(said, AssistantSaid) and said.text.endswith("What should I change?")
    assert "`flipper_len_mm` is not a column of data/examples/tabular-penguins.csv" in said.text


def test_the_next_turn_goes_to_the_model_with_the_fallback_in_the_history_and_not_the_cut_reply(conversation):
    convo, server = conversation([completion("x" * 3_000, finish_reason="length"), "Fine."])
    convo.send(f"profile {PENGUINS}, fill gaps with the median")
    convo.send("thanks")
    sent = server.requests[1]["messages"]
    assert "x" * 100 not in json.dumps(sent)
    said = [m["content"] for m in sent if m["role"] == "assistant" and m.get("content")]
    assert said and said[-1].startswith("The model's reply was cut off") and "I drafted tabular-profile" in said[-1]


def test_a_cut_reply_with_nothing_stated_still_undoes_the_turn(conversation):
    convo, server = conversation([[call("describe_workflow", {"workflow": "tabular-profile"})],
                                  completion("x" * 3_000, finish_reason="length")])
    events = convo.send("profile the penguins")
    assert isinstance(events[-1], BackendFailed) and "cut off at the token limit" in events[-1].message
    assert [m["role"] for m in convo.messages] == ["system"]


def test_a_model_going_round_in_circles_gets_what_was_stated_drafted_instead(conversation):
    # SmolLM2 searched "select * from data where id = 1;" three times for a fully stated surrogate request
    same = [call("search_workflows", {"query": "select * from data where id = 1;"})]
    convo, server = conversation([same] * 3 + ["never reached"])
    events = convo.send(f"profile {PENGUINS}, fill gaps with the median")
    assert len(server.requests) == 3
    assert convo.draft is not None and convo.draft.params["missing_strategy"] == "fill_median"
    said = events[-1].text
    assert said.startswith("The model went round in circles") and "drafted tabular-profile" in said


def test_going_round_in_circles_after_a_draft_keeps_that_draft_and_says_the_stop(conversation):
    drafted = [call("validate_params", {"workflow": "tabular-profile", "params": {"dataset_file": PENGUINS}})]
    same = [call("list_runs", {})]
    convo, server = conversation([drafted] + [same] * 3)
    events = convo.send(f"profile {PENGUINS}")
    first = convo.draft
    assert first is not None and events[-1].text.endswith("Tell me what to do next, or rephrase the request.")
    assert sum(isinstance(e, DraftReady) for e in events) == 1
