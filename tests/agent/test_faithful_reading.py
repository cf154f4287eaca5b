"""How the faithfulness check reads a request (snakegate/agent/faithful.py over guided/parse.py): numbers
attached to a param, percentages, leaving a column out, words that only look like columns or files.

Pure: a contract, a request and a draft's params in, sentences out.
"""

from __future__ import annotations

from snakegate.agent.actions.registry import param_table
from snakegate.agent.faithful import differences

TABLE = "data/wine.csv"
HEADER = ["alcohol", "acidity", "quality_class", "colour"]
CONTRACT = {"type": "object", "required": ["dataset"], "properties": {
    "dataset": {"type": "string", "x-artifact": "csv-table"},
    "label_column": {"type": "string", "x-column-of": "dataset", "default": "label"},
    "features": {"type": "array", "items": {"type": "string"}, "x-column-of": "dataset"},
    "test_size": {"type": "number", "minimum": 0.1, "maximum": 0.5, "default": 0.2},
    "seed": {"type": "integer", "default": 0},
    "model": {"type": "string", "enum": ["random_forest", "logistic_regression"], "default": "random_forest"}}}
PARAMS = param_table(CONTRACT)


def says(request: str, draft: dict) -> list[str]:
    return [d.says for d in differences(request, PARAMS, {"dataset": TABLE, **draft}, {"dataset": HEADER})]


def test_a_seed_and_a_test_share_in_percent_are_read_and_compared():
    request = f"benchmark {TABLE}, label column quality_class, test_size 30 %, seed 42, random forest"
    chosen = {"label_column": "quality_class", "model": "random_forest"}
    assert says(request, {**chosen, "test_size": 0.3, "seed": 42}) == []
    assert says(request, {**chosen, "test_size": 0.2, "seed": 0}) == [
        "you asked for test_size 0.3; the draft keeps the default, 0.2",
        "you asked for seed 42; the draft keeps the default, 0",
    ]


def test_a_named_label_column_the_draft_does_not_use_is_said():
    assert says(f"benchmark {TABLE} with label column quality_class", {"label_column": "colour"}) == [
        "you named column quality_class; the draft does not use it (label_column is colour)"]


def test_leaving_a_column_out_that_the_draft_keeps_is_said():
    request = f"use only the columns alcohol, acidity and colour from {TABLE}, not quality_class"
    assert says(request, {"features": ["alcohol", "acidity", "colour", "quality_class"]}) == [
        "you asked to leave out quality_class; the draft keeps quality_class"]
    assert says(request, {"features": ["alcohol", "acidity", "colour"]}) == []


def test_a_file_name_holding_a_column_name_is_no_column_and_numbers_are_no_files():
    request = f"benchmark {TABLE} keeping only columns alcohol and acidity (as in colour.csv), cut at 0.05, e.g. so"
    assert says(request, {"features": ["alcohol", "acidity"]}) == []


def test_an_allowed_value_named_in_words_is_compared():
    assert says(f"benchmark {TABLE} with logistic regression", {"model": "random_forest"}) == [
        "you asked for model logistic_regression; the draft keeps the default, random_forest"]
