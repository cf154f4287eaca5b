"""The hidden-request bench's scorer (bench/llm_score.py, issue 26 §3) and its request set (bench/llm_requests.yaml).

Pure: a request and what the chat showed go in, a verdict comes out; no model, no gate, no subprocess. The
bench itself asserts nothing, so these rules are where "correct" and "silently unfaithful" are pinned down.
"""

from __future__ import annotations

import importlib.util
import json

import yaml
from registry_copies import REPO

PENGUINS = "data/examples/tabular-penguins.csv"


def load_score():
    spec = importlib.util.spec_from_file_location("llm_score", REPO / "bench" / "llm_score.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


llm_score = load_score()
score = llm_score.score

FULL = {"id": "t-full", "kind": "fully", "workflow": "tabular-profile",
        "text": f"Profile {PENGUINS} using only the columns species, bill_length_mm and body_mass_g",
        "values": {"dataset_file": PENGUINS, "columns": ["species", "bill_length_mm", "body_mass_g"]}}
VAGUE = {"id": "t-vague", "kind": "vague", "workflow": "tabular-profile", "text": "an overview of my table",
         "values": {}}
MISTAKE = {"id": "t-mistake", "kind": "mistake", "workflow": "tabular-profile",
           "text": f"Profile {PENGUINS} with only the columns species and flipper_len_mm",
           "values": {"dataset_file": PENGUINS}, "mistake": ["flipper_len_mm"]}


def drafted(params: dict, differences=(), workflow="tabular-profile", **seen) -> dict:
    return {"draft": {"workflow": workflow, "params": params, "differences": list(differences)},
            "said": ["The draft passed the gate."], **seen}


def test_a_ready_draft_holding_every_stated_value_is_correct():
    verdict = score(FULL, drafted({"dataset_file": "./" + PENGUINS, "missing_strategy": "remove",
                                   "columns": ["body_mass_g", "species", "bill_length_mm"]}))
    assert verdict["correct"] and verdict["missing"] == [] and verdict["outcome"] == "draft"
    assert not verdict["silently_unfaithful"]


def test_a_dropped_column_shown_as_ready_is_silently_unfaithful():
    verdict = score(FULL, drafted({"dataset_file": PENGUINS, "columns": ["species", "body_mass_g"]}))
    assert verdict["missing"] == ["columns"]
    assert verdict["silently_unfaithful"] and not verdict["correct"]


def test_a_dropped_column_the_chat_flagged_is_not_silent_but_still_not_correct():
    said = "you asked for columns species, bill_length_mm, body_mass_g; the draft keeps all columns"
    verdict = score(FULL, drafted({"dataset_file": PENGUINS}, [said]))
    assert verdict["flagged"] and not verdict["silently_unfaithful"] and not verdict["correct"]


def test_a_faithful_draft_wrongly_flagged_is_not_correct():
    verdict = score(FULL, drafted(FULL["values"], ["you asked for seed 42; the draft keeps the default, 0"]))
    assert verdict["missing"] == [] and not verdict["correct"]


def test_a_draft_of_another_workflow_is_not_correct():
    verdict = score(FULL, drafted(FULL["values"], workflow="classifier-benchmark"))
    assert not verdict["workflow_right"] and not verdict["correct"]


def test_a_replaced_file_is_a_missing_value():
    verdict = score(FULL, drafted({"dataset_file": "data/examples/classifier-wine.csv",
                                   "columns": FULL["values"]["columns"]}))
    assert verdict["missing"] == ["dataset_file"] and verdict["silently_unfaithful"]


def test_column_lists_match_in_any_order_but_regions_and_samples_in_order():
    same = llm_score.same
    assert same(["Fe", "Ni"], ["Ni", "Fe"])
    assert not same([8, 16, 12, 20], [12, 20, 8, 16])
    assert same([{"name": "alpha", "reads": "data/a.fq.gz"}], [{"name": "alpha", "reads": "./data/a.fq.gz"}])
    assert not same([{"name": "alpha", "reads": "data/a.fq.gz"}], [{"name": "a", "reads": "data/a.fq.gz"}])
    assert same(0.3, 0.30000000000000004) and not same(42, 42.5)
    assert not same(True, 1) and not same(["Fe"], ["Fe", "Ni"])


def test_a_vague_request_answered_with_a_question_naming_the_workflow_is_correct():
    seen = {"draft": None, "said": ["Which analysis would you like? tabular-profile (Tabular profile); pump-probe"]}
    verdict = score(VAGUE, seen)
    assert verdict["outcome"] == "question" and verdict["workflow_right"] and verdict["correct"]


def test_the_guided_dialogues_answer_prompt_counts_as_a_question():
    seen = {"draft": None, "described": ["tabular-profile"],
            "said": ["**1/4 `dataset_file`** (required)\nAnswer with a number or a path."]}
    assert score(VAGUE, seen)["outcome"] == "question" and score(VAGUE, seen)["correct"]


def test_a_vague_request_answered_with_a_guessed_draft_is_wrong():
    verdict = score(VAGUE, drafted({"dataset_file": PENGUINS}))
    assert verdict["outcome"] == "draft" and not verdict["correct"]
    assert not verdict["silently_unfaithful"]  # nothing was stated, so nothing was dropped


def test_a_vague_request_answered_without_a_question_is_wrong():
    verdict = score(VAGUE, {"draft": None, "said": ["I will profile your table."]})
    assert verdict["outcome"] == "nothing" and not verdict["correct"]


def test_a_mistake_refused_in_words_that_name_it_is_correct():
    seen = {"draft": None, "said": ["flipper_len_mm is not a column of the table; did you mean flipper_length_mm?"],
            "shown": ["validate tabular-profile: refused, 1 problem(s): params.columns [column_missing]"]}
    verdict = score(MISTAKE, seen)
    assert verdict["explained"] and verdict["correct"]


def test_a_mistake_only_echoed_back_in_the_repeated_request_is_not_explained():
    seen = {"draft": None, "said": [f"Several workflows match “{MISTAKE['text']}”:\n1. tabular-profile\nPick one."]}
    verdict = score(MISTAKE, seen)
    assert not verdict["explained"] and not verdict["correct"]


def test_a_mistake_drafted_and_shown_as_ready_is_silently_unfaithful():
    verdict = score(MISTAKE, drafted({"dataset_file": PENGUINS, "columns": ["species"]}))
    assert verdict["silently_unfaithful"] and not verdict["correct"]


def test_a_mistake_in_a_flagged_draft_that_names_it_counts_as_explained():
    verdict = score(MISTAKE, drafted({"dataset_file": PENGUINS, "columns": ["species"]},
                                     ["you named column flipper_len_mm, which the table does not have"]))
    assert verdict["flagged"] and verdict["explained"] and verdict["correct"]


def test_nothing_that_ran_is_correct():
    seen = drafted({"dataset_file": PENGUINS, "columns": FULL["values"]["columns"]}, ran=True)
    assert not score(FULL, seen)["correct"]


def test_the_summary_counts_correct_per_kind_and_silent_drafts():
    rows = [{"kind": "fully", "requests_to_draft": 2, "seconds_to_draft": 9.5,
             "score": score(FULL, drafted({"dataset_file": PENGUINS, "columns": ["species"]}))},
            {"kind": "vague", "requests_to_draft": None,
             "score": score(VAGUE, {"draft": None, "said": ["Which file? tabular-profile"]})}]
    total = llm_score.summary(rows)
    assert (total["correct"], total["of"], total["silently_unfaithful"]) == (1, 2, 1)
    assert total["by_kind"] == {"fully": "0/1", "vague": "1/1"}
    assert (total["drafts"], total["requests_to_draft"], total["seconds_to_draft"]) == (1, [2], [9.5])
    json.dumps(total)  # written into the results file as is


def test_the_request_set_has_three_kinds_per_curated_workflow_with_real_params_and_files():
    requests = yaml.safe_load((REPO / "bench" / "llm_requests.yaml").read_text())
    workflows = sorted(p.name for p in (REPO / "workflows").iterdir() if (p / "schema.json").is_file())
    assert len(requests) >= 18 and len({r["id"] for r in requests}) == len(requests)
    for wf in workflows:
        assert sorted(r["kind"] for r in requests if r["workflow"] == wf) == ["fully", "mistake", "vague"], wf
    for r in requests:
        props = json.loads((REPO / "workflows" / r["workflow"] / "schema.json").read_text())["properties"]
        assert set(r["values"]) <= set(props), r["id"]
        assert (r["kind"] == "mistake") == bool(r.get("mistake")), r["id"]
        assert r["kind"] != "vague" or not r["values"], r["id"]  # a vague request states nothing
        for word in r["text"].split():
            if word.startswith("data/"):  # every file a request names is a real file of the registry
                assert (REPO / word.rstrip(".,")).is_file(), (r["id"], word)
