"""What the researcher stated is in the draft even when the model leaves it out (issue 26 §1, prefill).

Real Conversation over the real OpenAIBackend and the scripted OpenAI-compatible server; the real gate
checks every draft.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from openai_server import call
from snakegate.agent.actions.registry import param_table
from snakegate.agent.events import ActionCalled, DraftReady
from snakegate.agent.prefill import candidates, prefilled, stated_files

REPO = Path(__file__).resolve().parents[2]
PENGUINS = "data/examples/tabular-penguins.csv"
HEADER = ["species", "island", "bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "sex", "year"]


def validated(params: dict):
    return [call("validate_params", {"workflow": "tabular-profile", "params": params})]


def test_a_model_that_returns_nothing_for_a_stated_column_list_still_drafts_the_stated_columns(conversation):
    convo, server = conversation([validated({"dataset_file": PENGUINS}), "The draft is ready."])
    events = convo.send(f"Profile {PENGUINS}, keeping only the columns body_mass_g, species and bill_length_mm")
    (ready,) = [e for e in events if isinstance(e, DraftReady)]
    # in the order the researcher said them (the workflow keeps that order)
    assert convo.draft.params["columns"] == ["body_mass_g", "species", "bill_length_mm"]
    assert ready.faithful
    (action,) = [e for e in events if isinstance(e, ActionCalled)]
    assert action.summary.endswith("(from your request: columns)")
    # the history holds the call as gated, so the model's next request sees what the draft holds
    (sent,) = [tc for m in server.requests[1]["messages"] for tc in m.get("tool_calls") or []]
    assert json.loads(sent["function"]["arguments"])["params"]["columns"] == ["body_mass_g", "species",
                                                                             "bill_length_mm"]


def test_a_model_that_leaves_out_everything_gets_the_researchers_own_file_and_choices(conversation, agent_registry):
    (agent_registry / "data" / "lab").mkdir()
    shutil.copy(agent_registry / PENGUINS, agent_registry / "data" / "lab" / "mine.csv")
    convo, _ = conversation([[call("validate_params", {"workflow": "tabular-profile", "params": {}})],
                             "The draft is ready."])
    convo.send("Profile mine.csv, fill gaps with the median")
    assert convo.draft.params["dataset_file"] == "data/lab/mine.csv"
    assert convo.draft.params["missing_strategy"] == "fill_median" and convo.draft.faithful


def test_the_models_own_value_stands_and_the_difference_is_said(conversation):
    convo, _ = conversation([validated({"dataset_file": PENGUINS, "missing_strategy": "remove"}), "Ready."])
    events = convo.send(f"Profile {PENGUINS} and fill gaps with the median")
    (ready,) = [e for e in events if isinstance(e, DraftReady)]
    assert convo.draft.params["missing_strategy"] == "remove"
    assert ready.differences == ("you asked for missing_strategy fill_median; the draft keeps the default, remove",)


def test_a_file_that_fits_two_params_or_none_is_not_prefilled():
    params = [{"name": "reads", "artifact": "fastq.gz"}, {"name": "reference", "artifact": "fasta"},
              {"name": "mates", "artifact": "fastq.gz"}]
    files = ["data/alpha.fq.gz", "data/ref.fa", "data/ref.fa.gz"]
    # the FASTA goes to the reference, never to a reads param; the reads file could be either of two params
    assert stated_files("call variants in alpha.fq.gz against ref.fa", params, files) == {"reference": "data/ref.fa"}
    assert candidates(params, files) == {"reads": ["data/alpha.fq.gz"], "reference": ["data/ref.fa"],
                                         "mates": ["data/alpha.fq.gz"]}
    # a file outside the data roots is no prefill (faithful.py says the draft does not read it)
    assert stated_files("use data/other.fa", params, files) == {}


def test_a_column_said_in_passing_or_left_out_is_not_prefilled():
    schema = json.loads((REPO / "workflows/tabular-profile/schema.json").read_text())
    params = param_table(schema)
    headers = {"dataset_file": HEADER}
    assert "columns" not in prefilled("profile the penguins; species matters most to me", params, headers, [])
    assert "columns" not in prefilled("profile the penguins without sex", params, headers, [])
    assert prefilled("profile the penguins, only island and sex", params, headers, [])["columns"] == ["island", "sex"]
