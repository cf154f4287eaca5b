"""The guided dialogue takes what a request gives a parameter by naming it in words (bench requests of issue
26): the columns after "feature columns", the one column after "target" that the table has, a seed as an
integer. Real Conversation, guided backend, actions and gate."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_guided import chat_registry, drafts, said
from test_guided_requests import chat


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return chat_registry(tmp_path_factory.mktemp("guided-named") / "registry")


def test_feature_columns_and_a_target_named_in_the_request_reach_the_draft(root):
    conv = chat(root)
    text = said(conv.send("Suggest new alloys from data/examples/surrogate-alloys.csv with feature columns Fe, Ni, "
                          "Co and Cr, target hardness_hv, a random forest model and leave-one-out validation."))
    assert "`target_properties` = `[\"hardness_hv\"]`" in text
    (draft,) = drafts(conv.send("done"))
    assert draft.params["feature_columns"] == ["Fe", "Ni", "Co", "Cr"]
    assert draft.params["target_properties"] == ["hardness_hv"]
    assert not draft.differences


def test_a_seed_at_the_end_of_the_request_is_shown_and_drafted_as_an_integer(root):
    conv = chat(root)
    text = said(conv.send("Benchmark a random forest on data/examples/classifier-wine.csv predicting "
                          "quality_class, with a test fraction of 0.3 and seed 42."))
    assert "42.0" not in text and "`seed` = `42`" in text
    (draft,) = drafts(conv.send("done"))
    assert draft.params["seed"] == 42 and isinstance(draft.params["seed"], int)
    assert draft.params["test_fraction"] == 0.3
