"""The guided dialogue takes what a request already says, checks each answer as it is given, reads bounds
written naturally, knows the runs, explains approving, and takes sensitive values through the masked field.

Real Conversation, actions, gate (and, for the runs, the session's real runs in tests/agent/conftest.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snakegate.agent.controller import Conversation
from snakegate.agent.events import SecretRequested
from snakegate.agent.guided.dialogue import GuidedBackend
from snakegate.registry.workflows import Registry
from snakegate.registry.settings import load_settings
from test_guided import SENSITIVE_WORKFLOW, actions, chat_registry, drafts, number_of, said


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return chat_registry(tmp_path_factory.mktemp("guided") / "registry", {"token-copy": SENSITIVE_WORKFLOW})


def chat(root: Path) -> Conversation:
    conv = Conversation(Registry.load(root), load_settings(root), GuidedBackend())
    conv.opening()
    return conv


# ---- values the request already gives ------------------------------------------------------------
def test_a_path_in_the_request_is_used_instead_of_asking_for_the_file(root):
    text = said(chat(root).send("profile data/examples/tabular-penguins.csv"))
    assert "From your request: `dataset_file` = `data/examples/tabular-penguins.csv`" in text
    assert "1/4 `dataset_file`" not in text and "2/4 `missing_strategy`" in text


def test_a_path_and_an_allowed_value_in_the_request_fill_two_params(root):
    conv = chat(root)
    events = conv.send("profile data/examples/tabular-penguins.csv, fill missing values with the median")
    assert "`missing_strategy` = `fill_median`" in said(events)
    (draft,) = drafts(conv.send("done"))
    assert draft.params["dataset_file"] == "data/examples/tabular-penguins.csv"
    assert draft.params["missing_strategy"] == "fill_median"


def test_leave_one_out_in_the_request_picks_that_validation_strategy(root):
    conv = chat(root)
    events = conv.send("design alloys from data/examples/surrogate-alloys.csv with leave-one-out validation")
    text = said(events)
    assert "`validation_strategy` = `leave-one-out`" in text
    assert "2/9 `feature_columns`" in text  # the file came from the request too


def test_a_path_outside_the_data_roots_in_the_request_is_refused_and_asked_for(root):
    text = said(chat(root).send("profile /etc/passwd"))
    assert "I could not use `/etc/passwd` from your request" in text and "outside the allowed data roots" in text
    assert "1/4 `dataset_file`" in text


def test_a_folder_in_the_request_offers_the_files_in_it(root):
    text = said(chat(root).send("fit a power law to the photoluminescence series in data/examples"))
    assert "`data/examples` is a folder; pick a file in it." in text
    assert "1/12 `spectra_file`" in text and "data/examples/pl-campaign.csv" in text


# ---- each answer checked as it is given ----------------------------------------------------------
def test_a_number_out_of_range_is_asked_again_at_once(root):
    conv = chat(root)
    conv.send("benchmark a classifier")
    conv.send("1")          # the built-in dataset
    conv.send("default")    # label_column
    conv.send("skip")       # feature_columns
    conv.send("default")    # categorical_encoding
    events = conv.send("0.9")
    assert actions(events) == []
    assert "`0.9` is out of range: `test_fraction` must be from 0.1 to 0.5" in said(events)


def test_a_column_not_in_the_table_is_asked_again_at_once(root):
    conv = chat(root)
    text = said(conv.send("benchmark a classifier"))
    conv.send(number_of(text, "classifier-wine.csv"))
    events = conv.send("qualty_class")
    assert actions(events) == []
    assert "`qualty_class` is not a column of the table; did you mean `quality_class`?" in said(events)


def test_a_path_answer_outside_the_data_roots_is_asked_again_at_once(root):
    conv = chat(root)
    conv.send("profile my table")
    events = conv.send("../../etc/passwd")
    assert [a.name for a in actions(events)] == ["inspect_data"]
    text = said(events)
    assert "outside the allowed data roots" in text and "1/4 `dataset_file`" in text


# ---- bounds written naturally --------------------------------------------------------------------
def test_the_constraints_question_shows_the_real_shape_and_reads_natural_bounds(root):
    conv = chat(root)
    conv.send("design alloys from data/examples/surrogate-alloys.csv")
    conv.send("Fe, Ni, Co, Cr")
    conv.send("hardness_hv")
    conv.send("default")
    conv.send("default")
    text = said(conv.send("set constraints=Cr between 15 and 30, Ni.max=25"))
    assert "`constraints` is now `{\"Cr\": {\"min\": 15, \"max\": 30}, \"Ni\": {\"max\": 25}}`" in text
    question = said(conv.send("back"))
    assert "Cr between 15 and 30" in question and "Cr.max=25" in question and "Columns: `alloy_id`, `Fe`" in question


def test_bounds_on_a_column_the_table_lacks_are_asked_again(root):
    conv = chat(root)
    conv.send("design alloys from data/examples/surrogate-alloys.csv")
    assert "`Xx` is not a column of the table" in said(conv.send("set constraints=Xx <= 3"))


# ---- runs, approving, secrets ---------------------------------------------------------------------
def test_runs_show_and_fork_work_as_typed_commands(ran):
    conv = chat(ran.root)
    listing = said(conv.send("runs"))
    assert f"`{ran.ok.name}` tabular-profile: **succeeded**" in listing
    failure = said(conv.send(f"show {ran.failed.name}"))
    assert "Failed in rule `note`" in failure and "ValueError: the column flux is empty" in failure
    events = conv.send(f"fork {ran.ok.name} missing_strategy=fill_mean")
    (draft,) = drafts(events)
    assert draft.fork.parent_run == ran.ok.name and draft.params["missing_strategy"] == "fill_mean"
    assert "re-runs only" in said(events) and "ctrl+r" in said(events)


def test_typing_approve_explains_the_key_and_approves_nothing(root):
    conv = chat(root)
    assert "no draft to approve yet" in said(conv.send("approve"))
    conv.send("profile data/examples/tabular-penguins.csv")
    conv.send("done")
    text = said(conv.send("approve"))
    assert "ctrl+r" in text and conv._approval is None


def test_a_sensitive_question_asks_for_the_masked_field_and_takes_the_value_from_it(root):
    conv = chat(root)
    text = said(conv.send("token-copy"))
    events = conv.send(number_of(text, "tabular-penguins.csv"))
    assert "2/2 `token`" in said(events) and "masked field" in said(events)
    assert [e.param for e in events if isinstance(e, SecretRequested)][-1] == "token"
    events = conv.enter_sensitive("token-copy", "token", "s3cret-value-99")
    (draft,) = drafts(events)
    assert draft.params["token"] == "s3cret-value-99"
    assert "s3cret-value-99" not in json.dumps(conv.messages) + said(events)
    assert "s3cret-value-99" not in conv.audit.path.read_text()
