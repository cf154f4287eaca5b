"""Follow-ups in the guided dialogue: after a run, the researcher's own words become a fork draft of that run with
only that change, shown for approval and gated; unclear words are asked about; before any run they change the
draft. The real conversation controller, guided dialogue, gate and run records (tests/science_runs.py and the
agent conftest's `ran`).
"""

from __future__ import annotations

from snakegate.agent.controller import Conversation
from snakegate.agent.events import ActionCalled, AssistantSaid, DraftReady
from snakegate.agent.guided.dialogue import GuidedBackend
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry


def guided(root) -> Conversation:
    return Conversation(Registry.load(root), load_settings(root), GuidedBackend(), conversation_id="c-follow-ups")


def reported(root, run_dir) -> tuple[Conversation, list]:
    """A guided conversation whose run `run_dir` just ended: its summary entered and was answered."""
    convo = guided(root)
    convo.ran(run_dir.name)
    return convo, convo.report_runs()


def called(events) -> list[str]:
    return [e.name for e in events if isinstance(e, ActionCalled)]


def said(events) -> str:
    return "\n".join(e.text for e in events if isinstance(e, AssistantSaid))


def draft(events):
    drafts = [e.draft for e in events if isinstance(e, DraftReady)]
    assert len(drafts) == 1, said(events)
    return drafts[0]


def test_a_finished_runs_summary_is_read_back_with_its_verdict_numbers_and_first_rows(science):
    _, events = reported(science.root, science.alloys)
    text = said(events)
    assert called(events) == ["summarize_run"]
    assert f"Run `{science.alloys.name}` (surrogate-design) succeeded" in text and "Verdict: **pass**" in text
    assert "targets.hardness_hv.r2 = " in text and "targets.hardness_hv.rmse = " in text
    assert "| rank | Fe | Ni | Co | Cr | hardness_hv_predicted | hardness_hv_std | score |" in text


def test_try_leave_one_out_instead_of_5_fold_is_a_fork_draft_with_only_that_change(science):
    convo, _ = reported(science.root, science.alloys)
    events = convo.send("Try leave-one-out instead of 5-fold")
    fork = draft(events).fork
    assert (fork.parent_run, fork.changes) == (science.alloys.name, {"validation_strategy": "leave-one-out"})
    assert fork.changed_rules == ("cross_validate",) and fork.recovery_of is None
    # the workflow's contract (its parameter table), then the fork: never a search, never a path to inspect
    assert called(events) == ["describe_workflow", "fork_run"]
    assert "I read “leave-one-out” as `validation_strategy` = `leave-one-out`" in said(events)
    assert convo.draft.params["validation_strategy"] == "leave-one-out"
    assert convo.draft.params["feature_columns"] == ["Fe", "Ni", "Co", "Cr"]  # everything else as it ran


def test_same_with_cr_below_10_adds_that_bound_to_the_runs_constraints(science):
    convo, _ = reported(science.root, science.alloys)
    fork = draft(convo.send("same with Cr below 10")).fork
    assert fork.changes == {"constraints": {"Cr": {"max": 10}}}


def test_use_fill_mean_instead_after_a_profile_run(ran):
    convo, _ = reported(ran.root, ran.ok)
    fork = draft(convo.send("use fill_mean instead")).fork
    assert (fork.parent_run, fork.changes) == (ran.ok.name, {"missing_strategy": "fill_mean"})


def test_words_that_fit_two_values_are_asked_about_and_the_number_answered_drafts_it(ran):
    convo, _ = reported(ran.root, ran.ok)
    events = convo.send("fill the gaps instead")
    assert not [e for e in events if isinstance(e, DraftReady)] and convo.draft is None
    assert "1. `missing_strategy` = `fill_mean`" in said(events) and "2. `missing_strategy` = `fill_median`" in \
        said(events)
    assert draft(convo.send("2")).fork.changes == {"missing_strategy": "fill_median"}


def test_words_that_fit_no_param_are_said_to_and_never_searched_or_read_as_a_path(ran):
    convo, _ = reported(ran.root, ran.ok)
    events = convo.send("Try leave-one-out instead of 5-fold")  # tabular-profile has no such param
    assert called(events) == ["describe_workflow"] and convo.draft is None
    assert "I could not tell which parameter of `tabular-profile` to change" in said(events)
    assert "`missing_strategy`" in said(events) and f"fork {ran.ok.name} name=value" in said(events)


def test_a_value_the_run_already_had_is_said_and_nothing_is_drafted(science):
    convo, _ = reported(science.root, science.alloys)
    events = convo.send("try 5-fold")
    assert convo.draft is None and "already had `validation_strategy` = `5-fold`" in said(events)


def test_a_follow_up_naming_another_run_forks_that_run(science):
    convo, _ = reported(science.root, science.contaminated)
    fork = draft(convo.send(f"same as {science.alloys.name} with 20 candidates")).fork
    assert (fork.parent_run, fork.changes) == (science.alloys.name, {"n_candidates": 20})


def test_a_new_request_after_a_run_is_still_a_request(ran):
    convo, _ = reported(ran.root, ran.ok)
    events = convo.send("profile data/examples/tabular-penguins.csv")
    assert called(events)[0] == "search_workflows"


def test_before_any_run_the_words_change_the_draft_and_validate_it_again(ran):
    convo = guided(ran.root)
    convo.send("profile data/examples/tabular-penguins.csv")
    convo.send("done")
    first = convo.draft
    events = convo.send("use fill_median instead")
    assert called(events) == ["validate_params"] and convo.draft is not first
    assert convo.draft.params["missing_strategy"] == "fill_median" and convo.draft.fork is None
