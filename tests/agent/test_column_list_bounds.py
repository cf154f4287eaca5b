"""A list of a table's columns on the wire is bounded by that table (issue 26 §4 "no length limits"): at most
as many items as the header has columns, each one of the header's columns, so a small model under a grammar
cannot repeat a column up to the generic array bound. Pure: the real curated contracts, no model."""

from __future__ import annotations

import json
from pathlib import Path

from snakegate.agent.actions.wire import MAX_ITEMS, params_schema

ROOT = Path(__file__).resolve().parents[2]
ALLOYS_HEADER = ["Fe", "Ni", "Co", "Cr", "hardness_hv", "yield_mpa"]


def contract(workflow: str) -> dict:
    return json.loads((ROOT / "workflows" / workflow / "schema.json").read_text())


def test_column_list_is_bounded_by_the_header_length_not_the_generic_bound():
    shaped = params_schema(contract("surrogate-design"), [], headers={"dataset_file": ALLOYS_HEADER})
    features = shaped["properties"]["feature_columns"]
    assert features["maxItems"] == len(ALLOYS_HEADER) < MAX_ITEMS
    assert features["items"]["enum"] == ALLOYS_HEADER
    assert shaped["properties"]["target_properties"]["maxItems"] == len(ALLOYS_HEADER)


def test_contract_bound_tighter_than_the_header_is_kept():
    schema = contract("tabular-profile")
    schema["properties"]["columns"]["maxItems"] = 2
    shaped = params_schema(schema, [], headers={"dataset_file": ["a", "b", "c", "d"]})
    assert shaped["properties"]["columns"]["maxItems"] == 2


def test_column_list_without_a_known_header_keeps_the_generic_bound():
    shaped = params_schema(contract("tabular-profile"), [])
    assert shaped["properties"]["columns"]["maxItems"] == MAX_ITEMS
    assert "enum" not in shaped["properties"]["columns"]["items"]
