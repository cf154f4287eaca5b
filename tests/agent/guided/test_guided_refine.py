"""The guided dialogue reads a bounded refinement from one sentence (guided/refine.py): "try NAME V1 then V2 until
CHECK" or "… and keep the best CHECK", values read as YAML, the check named by its words. Pure reading, no
gate: the refinement's own tests run it (tests/agent/test_refine_chat.py, tests/tui/test_refine_panel.py)."""

from __future__ import annotations

from snakegate.agent.guided.refine import (
    RefineRequest,
    check_name,
    pick_check,
    refine_request,
)
from snakegate.agent.guided.text import HELP

PUMP_PROBE_CHECKS = [
    {"name": "background_uniform", "in_this_run": "fail",
     "says": "The background ROI's p-values are not uniform: move background_roi away from the signal."},
    {"name": "background_mean_p", "in_this_run": "pass",
     "says": "The background pixels' mean p-value is far below 0.5: move background_roi further from signal_roi."},
]


def test_roi_candidates_in_order_until_the_background_is_clean():
    request = refine_request("try background_roi [20,28,8,24] then [24,32,8,24] until the background is clean")
    assert request == RefineRequest(run="latest", vary={"background_roi": [[20, 28, 8, 24], [24, 32, 8, 24]]},
                                    rule="until", words="the background is clean", budget=None)
    assert request.arguments("background_uniform") == {
        "run_id": "latest", "vary": {"background_roi": [[20, 28, 8, 24], [24, 32, 8, 24]]}, "budget": 2,
        "until": "background_uniform"}


def test_keep_the_best_reads_numbers_and_names_the_check_by_its_words():
    request = refine_request("try n_estimators 100, 300, 1000 and keep the best roc auc")
    assert request.vary == {"n_estimators": [100, 300, 1000]} and request.rule == "best"
    assert check_name(request.words) == "roc_auc"
    assert request.arguments("roc_auc")["best"] == "roc_auc" and request.arguments("roc_auc")["budget"] == 3


def test_two_names_make_a_grid_and_a_run_and_a_budget_may_follow():
    request = refine_request("try model random_forest or logistic_regression and C=0.1, 10 on "
                             "20261126T172807Z-bd5e419c until roc_auc, budget 3")
    assert request.vary == {"model": ["random_forest", "logistic_regression"], "C": [0.1, 10]}
    assert (request.run, request.budget, request.words) == ("20261126T172807Z-bd5e419c", 3, "roc_auc")


def test_a_try_without_a_stop_rule_is_not_a_refinement():
    assert refine_request("try leave-one-out instead") is None
    assert refine_request("profile my table") is None


def test_an_unreadable_value_is_said_not_guessed():
    said = refine_request("try background_roi [20, 28 until clean")
    assert isinstance(said, str) and "[20, 28" in said


def test_the_words_pick_the_check_failing_in_the_run_first():
    assert pick_check("the background is clean", PUMP_PROBE_CHECKS, "until") == "background_uniform"
    assert pick_check("the mean p-value", PUMP_PROBE_CHECKS, "until") == "background_mean_p"
    assert pick_check("accuracy", PUMP_PROBE_CHECKS, "until") is None


def test_help_says_the_grammar():
    assert "`try NAME V1 then V2 until CHECK`" in HELP and "keep the best CHECK" in HELP
