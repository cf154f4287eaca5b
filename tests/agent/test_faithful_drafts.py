"""A gated draft that drops what the researcher said is flagged, never ready (issue 26 §1).

Real Conversation over the real OpenAIBackend and the scripted OpenAI-compatible server; the real gate
passes every draft here, so only the faithfulness check stands between it and "ready".
"""

from __future__ import annotations

import json
import shutil

from openai_server import call
from snakegate.agent.events import ActionCalled, DraftReady

PENGUINS = "data/examples/tabular-penguins.csv"
MINE = "data/lab/field-penguins.csv"   # the researcher's own table, beside the demo one


def validated(params: dict):
    return [call("validate_params", {"workflow": "tabular-profile", "params": params})]


def ready(events) -> DraftReady:
    (event,) = [e for e in events if isinstance(e, DraftReady)]
    return event


def test_a_draft_that_drops_a_stated_column_is_flagged_not_ready(conversation):
    # the model's own column list stands (the stated one only fills in what a model leaves out)
    convo, server = conversation([validated({"dataset_file": PENGUINS, "columns": ["species", "body_mass_g"]}),
                                  "The draft is ready."])
    events = convo.send(f"Profile {PENGUINS}, keeping only the columns species, bill_length_mm and body_mass_g")
    event = ready(events)
    assert not event.faithful and not convo.draft.faithful
    assert event.differences == ("you asked for columns species, bill_length_mm, body_mass_g; "
                                 "the draft keeps only species, body_mass_g",)
    # the model is told too, so it can say so or validate again
    (result,) = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert "differs_from_request" in result["content"] and "bill_length_mm" in result["content"]


def test_a_draft_that_swaps_the_researchers_file_for_the_demo_is_flagged(conversation, agent_registry):
    (agent_registry / "data" / "lab").mkdir()
    shutil.copy(agent_registry / PENGUINS, agent_registry / MINE)
    convo, _ = conversation([validated({"dataset_file": PENGUINS}), "The draft is ready."])
    events = convo.send(f"Please profile my table {MINE} and fill gaps with the median")
    event = ready(events)
    assert not event.faithful
    assert f"you named {MINE}; the draft reads {PENGUINS} instead (dataset_file)" in event.differences
    # what the model left out came from the request: the median, said on the action line
    assert convo.draft.params["missing_strategy"] == "fill_median" and len(event.differences) == 1
    # the action line the researcher sees says it too, not just a tick
    (validate,) = [e for e in events if isinstance(e, ActionCalled)]
    assert "differs from the request" in validate.summary and MINE in validate.summary


def test_a_file_that_is_not_in_the_data_roots_replaced_by_the_demo_is_flagged(conversation):
    convo, _ = conversation([validated({"dataset_file": PENGUINS}), "The draft is ready."])
    event = ready(convo.send("profile data/my-own-penguins.csv please"))
    assert event.differences == (f"you named data/my-own-penguins.csv; the draft reads {PENGUINS} instead "
                                 "(dataset_file)",)


def test_a_draft_that_silently_ignores_a_wrong_column_is_flagged_with_the_likely_name(conversation):
    convo, _ = conversation([validated({"dataset_file": PENGUINS, "columns": ["species", "body_mass_g"]}),
                             "The draft is ready."])
    event = ready(convo.send(f"profile {PENGUINS} with only columns species, bill_len and body_mass_g"))
    assert not event.faithful
    assert event.differences == (f"you named column bill_len, which {PENGUINS} does not have; the draft leaves "
                                 "it out (did you mean bill_length_mm?)",)


def test_a_column_the_researcher_left_out_but_the_draft_keeps_is_flagged(conversation):
    convo, _ = conversation([validated({"dataset_file": PENGUINS}), "Ready."])
    event = ready(convo.send(f"profile {PENGUINS} without island"))
    assert event.differences == ("you asked to leave out island; the draft keeps all columns",)


def test_a_faithful_draft_stays_ready_with_no_note(conversation):
    params = {"dataset_file": PENGUINS, "missing_strategy": "fill_median",
              "columns": ["species", "bill_length_mm", "body_mass_g"]}
    convo, server = conversation([validated(params), "The draft is ready."])
    events = convo.send(f"Profile {PENGUINS}, keeping only the columns species, bill_length_mm and "
                        "body_mass_g; fill missing values with the median")
    event = ready(events)
    assert event.faithful and event.differences == ()
    (validate,) = [e for e in events if isinstance(e, ActionCalled)]
    assert "differs" not in validate.summary
    assert "differs_from_request" not in str(server.requests[1]["messages"])


def test_a_later_message_correcting_the_file_is_what_counts(conversation, agent_registry):
    (agent_registry / "data" / "lab").mkdir()
    shutil.copy(agent_registry / PENGUINS, agent_registry / MINE)
    convo, _ = conversation(["Which table?", validated({"dataset_file": MINE}), "Ready."])
    convo.send(f"profile {PENGUINS}")
    event = ready(convo.send(f"sorry, I meant {MINE}"))
    assert event.faithful, event.differences


def swapping_server():
    """A model that validates the demo table whatever the researcher named."""
    from openai_server import ScriptedOpenAI

    return ScriptedOpenAI([validated({"dataset_file": PENGUINS}), "The draft is ready."])


def test_ask_prints_the_difference_and_yes_runs_nothing(tmp_path, cli):
    from openai_server import DEFAULT_MODEL
    from registry_copies import make_registry, run_names

    root = make_registry(tmp_path / "registry")
    (root / "data" / "lab").mkdir()
    shutil.copy(root / PENGUINS, root / MINE)
    args = ("--registry", root, "ask", f"profile {MINE}", "--model", DEFAULT_MODEL, "--tool-mode", "native")
    with swapping_server() as url:
        code, out, _ = cli(*args, "--base-url", url)
    assert code == 0
    assert f"differs from your request:\n  - you named {MINE}; the draft reads {PENGUINS} instead" in out
    assert "; differs from your request)" in out
    with swapping_server() as url:
        code, out, _ = cli(*args, "--base-url", url, "--yes", "--user", "Grace Hopper", "--json")
    answer = json.loads(out)
    assert code == 1 and not answer["ok"] and answer["run"] is None
    assert answer["draft"]["faithful"] is False and MINE in answer["draft"]["differences"][0]
    (draft_event,) = [e for e in answer["events"] if e["kind"] == "draft"]
    assert draft_event["faithful"] is False
    assert run_names(root) == set()  # nothing ran
