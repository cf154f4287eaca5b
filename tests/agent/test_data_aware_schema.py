"""The constrained step knows the data (issue 26 §2): a column param offers the chosen table's real header, a
file param the data files of its type, and a table outside the data roots is never opened.

Real Conversation over the real OpenAIBackend in "json" mode and the scripted OpenAI-compatible server; the
schema checked is the one the server received (a grammar-constrained server enforces exactly that schema).
"""

from __future__ import annotations

import csv
import json

import jsonschema
import pytest

from openai_server import DEFAULT_MODEL
from snakegate.agent.backends.choose import OpenAIBackend
from snakegate.agent.events import ActionCalled, DraftReady

PENGUINS = "data/examples/tabular-penguins.csv"
FIELD = "data/lab/field-notes.csv"     # a second table, with other columns
FIELD_HEADER = ["site", "date", "count"]


def step(action: str, **arguments) -> str:
    return json.dumps({"action": action, "arguments": arguments})


def validate_params_of(request: dict) -> dict:
    """The params schema a validate_params step must follow in a request the server received."""
    schema = request["response_format"]["json_schema"]["schema"]
    option = next(o for o in schema["oneOf"] if o["properties"].get("action", {}).get("const") == "validate_params")
    return option["properties"]["arguments"]["properties"]["params"]


def sent_schema(request: dict) -> dict:
    return request["response_format"]["json_schema"]["schema"]


@pytest.fixture
def json_chat(openai_server, make_conversation, agent_registry):
    """Factory: (Conversation in json mode, its scripted server) over a registry with a second table and a
    FASTA file in the data roots."""
    (agent_registry / "data" / "lab").mkdir()
    (agent_registry / FIELD).write_text(",".join(FIELD_HEADER) + "\nnorth,2024-05-01,3\nsouth,2024-05-02,4\n")
    (agent_registry / "data" / "lab" / "reference.fa").write_text(">chr1\nACGT\n")

    def make(replies):
        server = openai_server(replies)
        backend = OpenAIBackend(server.base_url, DEFAULT_MODEL, timeout=10, tool_mode="json")
        return make_conversation(backend), server

    return make


def penguin_header(root) -> list[str]:
    with open(root / PENGUINS, newline="") as fh:
        return next(csv.reader(fh))


def test_the_column_list_offers_exactly_the_named_tables_header(json_chat, agent_registry):
    convo, server = json_chat([step("describe_workflow", workflow="tabular-profile"),
                               step("validate_params", workflow="tabular-profile",
                                    params={"dataset_file": PENGUINS, "columns": ["species", "body_mass_g"]}),
                               json.dumps({"say": "Ready."})])
    events = convo.send(f"profile {PENGUINS}, only species and body_mass_g")
    params = validate_params_of(server.requests[1])
    assert params["properties"]["columns"]["items"]["enum"] == penguin_header(agent_registry)
    # a file param offers the tables, never the FASTA file beside them
    assert params["properties"]["dataset_file"]["enum"] == [PENGUINS, FIELD]
    assert any(isinstance(e, DraftReady) for e in events)


def test_a_column_outside_the_header_cannot_be_drafted(json_chat):
    invented = {"dataset_file": PENGUINS, "columns": ["species", "flipper_colour"]}
    convo, server = json_chat([step("describe_workflow", workflow="tabular-profile"),
                               step("validate_params", workflow="tabular-profile", params=invented),
                               json.dumps({"say": "That column does not exist."})])
    events = convo.send(f"profile {PENGUINS}")
    wanted = {"action": "validate_params", "arguments": {"workflow": "tabular-profile", "params": invented}}
    # a server that enforces the schema it was sent cannot produce this step ...
    with pytest.raises(jsonschema.ValidationError, match="flipper_colour"):
        jsonschema.validate(wanted, sent_schema(server.requests[1]))
    jsonschema.validate({**wanted, "arguments": {**wanted["arguments"], "params": {
        "dataset_file": PENGUINS, "columns": ["species", "island"]}}}, sent_schema(server.requests[1]))
    # ... and one that ignores it still gets no draft: the gate refuses the column
    (validate,) = [e for e in events if isinstance(e, ActionCalled) and e.name == "validate_params"]
    assert not validate.ok and "params.columns[1] [column_missing]" in validate.summary
    assert convo.draft is None


def test_the_table_the_model_chose_gives_the_columns_of_its_next_try(json_chat):
    convo, server = json_chat([step("describe_workflow", workflow="tabular-profile"),
                               step("validate_params", workflow="tabular-profile",
                                    params={"dataset_file": FIELD, "columns": ["place"]}),
                               json.dumps({"say": "Which columns?"})])
    convo.send("profile my field table")   # two tables fit, and the researcher named neither
    before, after = (validate_params_of(r)["properties"]["columns"]["items"] for r in server.requests[1:3])
    assert "enum" not in before        # no table chosen yet: any bounded name, the gate checks it
    assert after["enum"] == FIELD_HEADER


def test_a_table_outside_the_data_roots_is_never_opened_for_its_columns(json_chat, tmp_path):
    private = tmp_path / "private.csv"
    private.write_text("patient_name,diagnosis\nAda,flu\n")
    convo, server = json_chat([step("describe_workflow", workflow="tabular-profile"),
                               step("validate_params", workflow="tabular-profile",
                                    params={"dataset_file": str(private)}),
                               json.dumps({"say": "That file is outside the data roots."})])
    convo.send(f"profile my table {private}")
    assert "patient_name" not in json.dumps(server.requests[2])
    assert convo.draft is None
