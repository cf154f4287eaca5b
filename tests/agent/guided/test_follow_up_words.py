"""A follow-up in the researcher's words, read as param changes through the workflow's contract
(snakegate/agent/guided/followups.py): pure, on the real workflows' parameter tables."""

from __future__ import annotations

import json

import pytest

from registry_copies import REPO
from snakegate.agent.actions.registry import param_table
from snakegate.agent.guided.followups import is_follow_up, read_changes


def table(wf: str) -> list[dict]:
    return param_table(json.loads((REPO / "workflows" / wf / "schema.json").read_text()))


SURROGATE, PROFILE, PUMP_PROBE = table("surrogate-design"), table("tabular-profile"), table("pump-probe")
ALLOY_RUN = {"validation_strategy": "5-fold", "model": "gaussian_process", "feature_columns": ["Fe", "Ni", "Co", "Cr"],
             "constraints": {"Cr": {"min": 15, "max": 30}, "Ni": {"min": 10, "max": 40}}, "n_candidates": 50}
COLUMNS = ["Fe", "Ni", "Co", "Cr", "hardness_hv"]


@pytest.mark.parametrize("words, change", [
    ("try leave-one-out instead of 5-fold", {"validation_strategy": "leave-one-out"}),
    ("Try leave one out", {"validation_strategy": "leave-one-out"}),
    ("what about LOO?", {"validation_strategy": "leave-one-out"}),
    ("use 10-fold rather than 5-fold", {"validation_strategy": "10-fold"}),
    ("try the other model", {"model": "random_forest"}),
    ("same with random forest", {"model": "random_forest"}),
    ("same with 100 candidates", {"n_candidates": 100}),
    ("again with seed 7", {"seed": 7}),
])
def test_an_allowed_value_or_a_number_next_to_a_params_name_is_that_change(words, change):
    reading = read_changes(words, SURROGATE, ALLOY_RUN, COLUMNS)
    assert reading.changes == change and not reading.options


def test_a_value_named_as_the_one_replaced_is_never_the_new_one():
    # "5-fold" is named too, but after "instead of": only leave-one-out is asked for
    assert read_changes("instead of 5-fold, try leave-one-out", SURROGATE, ALLOY_RUN, COLUMNS).changes == \
        {"validation_strategy": "leave-one-out"}


def test_use_fill_mean_instead_names_the_missing_strategy():
    reading = read_changes("use fill_mean instead", PROFILE, {"missing_strategy": "remove"})
    assert reading.changes == {"missing_strategy": "fill_mean"}
    assert reading.read_as["missing_strategy"] == "“fill_mean”"
    assert read_changes("fill with the median", PROFILE, {}).changes == {"missing_strategy": "fill_median"}


def test_a_bound_on_a_column_is_merged_into_the_runs_bounds():
    reading = read_changes("same with Ni below 30", SURROGATE, ALLOY_RUN, COLUMNS)
    assert reading.changes == {"constraints": {"Cr": {"min": 15, "max": 30}, "Ni": {"min": 10, "max": 30}}}
    assert "Ni max 30" in reading.read_as["constraints"]


def test_a_bound_that_leaves_nothing_between_it_and_the_runs_other_bound_drops_that_one_and_says_so():
    reading = read_changes("same with Cr below 10", SURROGATE, ALLOY_RUN, COLUMNS)
    assert reading.changes["constraints"]["Cr"] == {"max": 10}
    assert "the run's Cr min 15 dropped" in reading.read_as["constraints"]


def test_a_number_with_its_unit_and_a_list_with_its_params_name_are_read_for_those_params():
    assert read_changes("time zero at 0.5 ps", PUMP_PROBE, {}).changes == {"time_zero_ps": 0.5}
    assert read_changes("same with background ROI [22, 30, 8, 24]", PUMP_PROBE, {}).changes == \
        {"background_roi": [22, 30, 8, 24]}
    assert read_changes("5000 bootstrap resamples", PUMP_PROBE, {}).changes == {"n_bootstrap": 5000}


def test_without_before_a_boolean_params_name_turns_it_off():
    assert read_changes("same but without dropping duplicates", PROFILE, {}).changes == {"drop_duplicates": False}


def test_a_word_of_an_allowed_values_description_counts_only_when_nothing_else_fits():
    reading = read_changes("try a model with 200 trees", SURROGATE, ALLOY_RUN, COLUMNS)
    assert reading.changes == {"model": "random_forest"} and "description of `random_forest`" in \
        reading.read_as["model"]


def test_words_that_fit_several_values_give_every_reading_and_choose_none():
    reading = read_changes("fill the gaps instead", PROFILE, {"missing_strategy": "remove"})
    assert not reading.changes
    assert reading.options == [{"missing_strategy": "fill_mean"}, {"missing_strategy": "fill_median"}]
    assert "`missing_strategy`" in reading.question


def test_words_that_fit_no_param_change_nothing():
    reading = read_changes("try the purple one instead", SURROGATE, ALLOY_RUN, COLUMNS)
    assert not reading.found
    assert is_follow_up("try the purple one instead") and not is_follow_up("profile my penguins table")


def test_a_sensitive_param_is_never_changed_from_words():
    params = [{"name": "token", "type": "string", "sensitive": True, "description": "The API token."},
              {"name": "label", "type": "string", "description": "The label."}]
    assert read_changes("token=abc12345 instead", params, {}).changes == {}
