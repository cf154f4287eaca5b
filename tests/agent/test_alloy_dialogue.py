"""The seed's twelve-turn alloy-design dialogue, end to end, with surrogate-design: request -> questions -> draft ->
approve -> run -> the results summary (R², RMSE, the top candidate compositions) in the dialogue -> "try
leave-one-out instead of 5-fold" -> the fork's draft -> approve -> run -> the comparison. Once with the offline
guided dialogue and once with a model (the project's scripted OpenAI-compatible HTTP server through the real
OpenAIBackend). The real conversation controller, gate, runner, Snakemake and run records; each turn is what
the researcher types or does, and each assertion what they would see.
"""

from __future__ import annotations

import json
import re

import pytest

from openai_server import DEFAULT_MODEL, call
from science_runs import science_registry
from snakegate.agent.backends.choose import OpenAIBackend
from snakegate.agent.controller import Conversation
from snakegate.agent.events import ActionCalled, AssistantSaid, DraftReady
from snakegate.agent.guided.dialogue import GuidedBackend
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry
from snakegate.run import runner

REQUEST = ("I measured hardness and yield strength for 80 Fe-Ni-Co-Cr alloys, in data/examples/surrogate-alloys.csv. "
           "I'd like a surrogate model that proposes the compositions to make next.")
FOLLOW_UP = "try leave-one-out instead of 5-fold"
PARAMS = {"dataset_file": "data/examples/surrogate-alloys.csv", "feature_columns": ["Fe", "Ni", "Co", "Cr"],
          "target_properties": ["hardness_hv", "yield_strength_mpa"], "validation_strategy": "5-fold",
          "model": "gaussian_process", "constraints": {"Cr": {"min": 15, "max": 30}, "Ni": {"min": 10, "max": 40}}}


@pytest.fixture
def alloy_registry(tmp_path):
    return science_registry(tmp_path / "registry")


def said(events) -> str:
    return "\n".join(e.text for e in events if isinstance(e, AssistantSaid))


def called(events) -> list[str]:
    return [e.name for e in events if isinstance(e, ActionCalled)]


def approve_and_run(convo: Conversation) -> runner.RunOutcome:
    """What the researcher's ctrl+r does: mint the one approval for the draft on screen, run it."""
    outcome = convo.execute(convo.approve("Ada Tester"), runner.RunOptions(cores=2))
    assert outcome.status == "succeeded", outcome.record
    return outcome


def record(outcome) -> dict:
    return json.loads((outcome.run_dir / "run.json").read_text())


def r2(outcome, target: str) -> float:
    return json.loads((outcome.run_dir / "results" / "cv_metrics.json").read_text())["targets"][target]["r2"]


def test_the_twelve_turn_alloy_dialogue_in_the_guided_dialogue(alloy_registry):
    convo = Conversation(Registry.load(alloy_registry), load_settings(alloy_registry), GuidedBackend(),
                         conversation_id="c-alloys-guided")
    # turn 1: the request; the workflow is found and the file taken from it
    t1 = convo.send(REQUEST)
    assert called(t1)[:2] == ["search_workflows", "describe_workflow"]
    assert "`dataset_file` = `data/examples/surrogate-alloys.csv`" in said(t1) and "`feature_columns`" in said(t1)
    # turns 2-6: the questions, one by one
    assert "`target_properties`" in said(convo.send("Fe, Ni, Co, Cr"))
    assert "`validation_strategy`" in said(convo.send("hardness_hv, yield_strength_mpa"))
    assert "`model`" in said(convo.send("5-fold"))
    assert "`constraints`" in said(convo.send("gaussian_process"))
    assert "`objective`" in said(convo.send("Cr between 15 and 30, Ni between 10 and 40"))
    # turn 7: the rest at their defaults: the gate accepts, a draft waits for approval
    t7 = convo.send("done")
    assert [e for e in t7 if isinstance(e, DraftReady)] and "The gate accepts these parameters" in said(t7)
    assert {k: convo.draft.params[k] for k in PARAMS} == PARAMS
    # turn 8: approved and run
    first = approve_and_run(convo)
    # turn 9: the results summary in the dialogue: R², RMSE and the top candidate compositions
    t9 = convo.report_runs()
    text = said(t9)
    assert f"Run `{first.run_id}` (surrogate-design) succeeded" in text and "Verdict: **pass**" in text
    assert f"targets.hardness_hv.r2 = {r2(first, 'hardness_hv'):.4g}" in text
    assert "targets.yield_strength_mpa.rmse = " in text
    top = (first.run_dir / "results" / "candidates.csv").read_text().splitlines()
    assert "| rank | Fe | Ni | Co | Cr | hardness_hv_predicted" in text
    assert "| 1 | " + " | ".join(f"{float(c):.4g}" for c in top[1].split(",")[1:5]) in text
    # turn 10: the follow-up in the researcher's words: a fork draft with only that change
    t10 = convo.send(FOLLOW_UP)
    assert called(t10) == ["fork_run"]
    assert convo.draft.fork.parent_run == first.run_id
    assert convo.draft.fork.changes == {"validation_strategy": "leave-one-out"}
    assert "re-runs only cross_validate" in said(t10)
    # turn 11: approved and run: only the cross-validation runs again; its summary in the dialogue
    second = approve_and_run(convo)
    assert record(second)["parent_run"] == first.run_id
    assert record(second)["fork_changes"] == {"validation_strategy": "leave-one-out"}
    t11 = convo.report_runs()
    assert f"A fork of `{first.run_id}` with `validation_strategy` = `leave-one-out`" in said(t11)
    assert "n_folds = 80" in said(t11)
    # turn 12: the comparison
    t12 = convo.send("How does it compare with the 5-fold run?")
    assert called(t12) == ["compare_runs"]
    text = said(t12)
    assert f"**`{first.run_id}` → `{second.run_id}`**" in text
    assert "`validation_strategy` 5-fold → leave-one-out" in text
    assert f"targets.hardness_hv.r2 {r2(first, 'hardness_hv'):.4g} → {r2(second, 'hardness_hv'):.4g}" in text
    assert "Identical: `candidates`" in text  # the final model and its candidates do not depend on the CV


def _last_note_run(body: dict) -> str:
    notes = [m["content"] for m in body["messages"] if m["role"] == "user" and m["content"].startswith("(snakegate:")]
    return re.match(r"\(snakegate: run `([^`]+)`", notes[-1]).group(1)


def _fork_parent(body: dict) -> str:
    """The run the compare question is about: the newest note names the fork, whose line names its parent."""
    notes = [m["content"] for m in body["messages"] if m["role"] == "user" and m["content"].startswith("(snakegate:")]
    return re.search(r"^fork of (\S+)", notes[-1], re.M).group(1)


def test_the_twelve_turn_alloy_dialogue_with_a_model(alloy_registry, openai_server):
    server = openai_server([
        # turn 1
        [call("describe_workflow", {"workflow": "surrogate-design"})],
        [call("inspect_data", {"path": "data/examples/surrogate-alloys.csv"})],
        "surrogate-design fits this. Which columns are the composition, and which properties should it predict?",
        # turns 2-6
        "Composition Fe, Ni, Co, Cr. And the properties to predict?",
        "Predicting hardness_hv and yield_strength_mpa. Validation: 5-fold (default), 10-fold or leave-one-out?",
        "5-fold. Model: gaussian_process (default) or random_forest?",
        "Gaussian process. Any composition limits for the candidates?",
        "Cr 15-30 and Ni 10-40. Anything else, or shall I check it?",
        # turn 7
        [call("validate_params", {"workflow": "surrogate-design", "params": PARAMS})],
        "The gate accepts it; the draft is ready for you to approve in the panel.",
        # turn 9: the run's summary arrives; the model reads it back
        "The cross-validated R² is high for both targets, with a small RMSE; the top candidates are listed.",
        # turn 10
        lambda body: [call("fork_run", {"run_id": _last_note_run(body),
                                        "changes": {"validation_strategy": "leave-one-out"}})],
        "Drafted: the same run with leave-one-out; only the cross-validation runs again. Approve it in the panel.",
        # turn 11
        "Leave-one-out gives about the same R²; the candidates are unchanged.",
        # turn 12
        lambda body: [call("compare_runs", {"a": _fork_parent(body), "b": _last_note_run(body)})],
        "Only validation_strategy differs; the R² and RMSE moved a little, the candidates are identical.",
    ])
    backend = OpenAIBackend(server.base_url, DEFAULT_MODEL, api_key="test-key", timeout=30)
    convo = Conversation(Registry.load(alloy_registry), load_settings(alloy_registry), backend,
                         conversation_id="c-alloys-model")
    t1 = convo.send(REQUEST)  # turn 1
    assert called(t1) == ["describe_workflow", "inspect_data"]
    for answer in ("Fe, Ni, Co, Cr", "hardness_hv, yield_strength_mpa", "5-fold", "gaussian_process",
                   "Cr between 15 and 30, Ni between 10 and 40"):  # turns 2-6
        assert said(convo.send(answer))
    t7 = convo.send("that's all, check it")  # turn 7
    assert [e for e in t7 if isinstance(e, DraftReady)] and convo.draft.params["validation_strategy"] == "5-fold"
    first = approve_and_run(convo)  # turn 8
    t9 = convo.report_runs()  # turn 9: the summary enters; the model answers it
    assert "R² is high" in said(t9)
    note = server.requests[-1]["messages"][-1]["content"]
    assert note.startswith(f"(snakegate: run `{first.run_id}` ended.")
    assert f"targets.hardness_hv.r2 = {r2(first, 'hardness_hv'):.4g}" in note and "targets.hardness_hv.rmse" in note
    top = (first.run_dir / "results" / "candidates.csv").read_text().splitlines()
    assert "candidates, first 3 of 50 rows: rank | Fe | Ni | Co | Cr" in note
    assert "  1 | " + " | ".join(f"{float(c):.4g}" for c in top[1].split(",")[1:5]) in note
    t10 = convo.send(FOLLOW_UP)  # turn 10
    assert called(t10) == ["fork_run"] and convo.draft.fork.changes == {"validation_strategy": "leave-one-out"}
    second = approve_and_run(convo)  # turn 11
    assert record(second)["parent_run"] == first.run_id
    assert "about the same R²" in said(convo.report_runs())
    assert server.requests[-1]["messages"][-1]["content"].count("(snakegate: run") == 1
    # the first run's note, an older one now, is carried shortened
    older = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "user"
             and m["content"].startswith(f"(snakegate: run `{first.run_id}`")]
    assert len(older) == 1 and "shortened" in older[0] and "candidates, first 3" not in older[0]
    t12 = convo.send("How does it compare with the 5-fold run?")  # turn 12
    assert called(t12) == ["compare_runs"] and "candidates are identical" in said(t12)
    compared = json.loads(server.requests[-1]["messages"][-1]["content"])
    assert (compared["run_a"], compared["run_b"]) == (first.run_id, second.run_id)
    assert {"path": "params.validation_strategy", "change": "changed", "a": "5-fold", "b": "leave-one-out"} in \
        compared["params"]
    # every scripted step was asked for, none twice: 16 replies, 16 requests, none left over
    assert server.replies == [] and len(server.requests) == 16
