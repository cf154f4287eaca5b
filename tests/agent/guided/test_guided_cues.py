"""The guided dialogue takes the obvious cues: a `yes` to "did you mean …?", every wrong column of one answer
reported at once, "my penguins table" for the one penguins file, "predicting species" for the label column,
and a default that is not a column of the chosen table is never offered as the one an empty answer keeps.

Real Conversation, actions and gate in a throw-away registry with the demo tables; nothing runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from snakegate.agent.controller import Conversation
from snakegate.agent.guided.dialogue import GuidedBackend
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry
from test_guided import actions, chat_registry, drafts, number_of, said

PENGUINS = "data/examples/tabular-penguins.csv"


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return chat_registry(tmp_path_factory.mktemp("cues") / "registry")


def chat(root: Path) -> Conversation:
    conv = Conversation(Registry.load(root), load_settings(root), GuidedBackend())
    conv.opening()
    return conv


def on_wine(root: Path) -> Conversation:
    conv = chat(root)
    text = said(conv.send("benchmark a classifier"))
    conv.send(number_of(text, "classifier-wine.csv"))
    return conv


def test_yes_takes_the_column_a_did_you_mean_offered(root):
    conv = on_wine(root)
    assert "did you mean `quality_class`?" in said(conv.send("qualty_class"))
    text = said(conv.send("yes"))
    assert "`feature_columns`" in text  # the next question: label_column is answered
    assert "`label_column` = " not in text and "Current value" not in text
    (draft,) = drafts(conv.send("done"))
    assert draft.params["label_column"] == "quality_class"


def test_every_wrong_column_of_one_answer_is_reported_at_once_and_yes_takes_all(root):
    conv = on_wine(root)
    conv.send("quality_class")
    events = conv.send("alcohl, citric_acid, sulphate")
    text = said(events)
    assert actions(events) == []
    assert "`alcohl` is not a column of the table; did you mean `alcohol`?" in text
    assert "`sulphate` is not a column of the table; did you mean `sulphates`?" in text
    assert "`yes` takes these names." in text
    conv.send("yes")
    (draft,) = drafts(conv.send("done"))
    assert draft.params["feature_columns"] == ["alcohol", "citric_acid", "sulphates"]


def test_yes_without_a_suggestion_is_just_an_answer(root):
    conv = on_wine(root)
    events = conv.send("nonsense_column")
    assert "did you mean" not in said(events) and "Columns: alcohol" in said(events)
    assert "`yes` is not a column of the table" in said(conv.send("yes"))


def test_my_penguins_table_names_the_only_penguins_file(root):
    text = said(chat(root).send("profile my penguins table"))
    assert f"From your request: `dataset_file` = `{PENGUINS}` (the one data file it names)." in text
    assert "2/4 `missing_strategy`" in text


def test_a_word_of_the_workflow_is_no_file_cue(root):
    text = said(chat(root).send("benchmark a classifier"))  # classifier-wine.csv is not "the classifier"
    assert "From your request" not in text and "1/" in text and "`dataset`" in text


def test_predicting_species_on_my_penguins_table_sets_the_label_and_the_table(root):
    conv = chat(root)
    text = said(conv.send("benchmark a classifier predicting species on my penguins table"))
    assert "`label_column` = `species`" in text and f"`dataset` = `{PENGUINS}`" in text
    (draft,) = drafts(conv.send("done"))
    assert draft.params["label_column"] == "species" and draft.params["dataset"] == PENGUINS


def test_a_default_that_is_not_a_column_of_the_table_is_never_offered_as_kept(root):
    conv = chat(root)
    text = said(conv.send("benchmark a classifier on my penguins table"))
    question = text.split("`label_column`**", 1)[1]
    assert "keeps `target`" not in question and "not a column of this table" in question
    events = conv.send("default")
    assert actions(events) == []
    assert "The default of `label_column`, `target`, is not a column of" in said(events)


def test_a_default_that_is_a_column_is_kept_by_an_empty_answer(root):
    text = said(chat(root).send("profile my penguins table"))
    assert "an empty Enter (or `default`) keeps `remove`" in text
