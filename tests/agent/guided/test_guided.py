"""The offline guided dialogue, driven through the real Conversation, actions and gate.

Each test talks to `Conversation(registry, settings, GuidedBackend())` in a
throw-away registry (the real top-level Snakefile and schemas, the curated
workflows, the demo tables) as a researcher would, and asserts on the events
the UI would show and on the draft config the gate accepted.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from registry_copies import REPO, make_registry
from snakegate.registry.workflows import Registry
from snakegate.registry.settings import load_settings

from snakegate.agent.controller import Conversation
from snakegate.agent.events import ActionCalled, AssistantSaid, DraftReady
from snakegate.agent.guided.dialogue import GuidedBackend
from snakegate.agent.actions.wire import openai_tools

OTHER_WORKFLOWS = ("classifier-benchmark", "pl-power-series", "surrogate-design")

# A tiny workflow with a sensitive parameter: copies its table; the token only reaches a rule's params.
SENSITIVE_WORKFLOW = {
    "workflow.yaml": """\
        id: token-copy
        version: 0.1.0
        title: Token copy
        description: Copies a table; a service token rides along as a rule parameter.
        tags: [test]
        maintainers: [{name: snakegate tests}]
        trust: community
        rules:
          copy: {input: {table: csv-table}, output: {copied: csv-table}}
        outputs:
          copied: {path: results/copy.csv, type: csv-table, description: The copy.}
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "additionalProperties": False, "required": ["table", "token"],
        "properties": {
            "table": {"type": "string", "x-artifact": "csv-table", "description": "Any CSV table."},
            "token": {"type": "string", "x-sensitive": True, "description": "The service token."},
        },
    }),
    "Snakefile": """\
        rule all:
            input:
                "results/copy.csv",


        rule copy:
            input:
                table=config["table"],
            output:
                copied="results/copy.csv",
            params:
                token=config["token"],
            shell:
                "cp {input.table} {output.copied}"
        """,
}


# ---- fixtures and helpers ------------------------------------------------------------------------
def chat_registry(root: Path, extra: dict | None = None) -> Path:
    """make_registry (tabular-profile) plus the other curated workflows and every demo table."""
    make_registry(root, extra)
    for wf in OTHER_WORKFLOWS:
        shutil.copytree(REPO / "workflows" / wf, root / "workflows" / wf,
                        ignore=shutil.ignore_patterns(".snakemake", "__pycache__"))
    for table in (REPO / "data" / "examples").glob("*.csv"):
        shutil.copy(table, root / "data" / "examples" / table.name)
    return root


@pytest.fixture
def root(tmp_path) -> Path:
    return chat_registry(tmp_path / "registry")


def guided_chat(root: Path) -> Conversation:
    conv = Conversation(Registry.load(root), load_settings(root), GuidedBackend(), conversation_id="c-guidedtest")
    conv.opening()
    return conv


def said(events) -> str:
    return "\n".join(e.text for e in events if isinstance(e, AssistantSaid))


def actions(events) -> list[ActionCalled]:
    return [e for e in events if isinstance(e, ActionCalled)]


def drafts(events):
    return [e.draft for e in events if isinstance(e, DraftReady)]


def number_of(text: str, needle: str) -> str:
    """The number of the numbered choice line that mentions `needle`."""
    for line in text.splitlines():
        m = re.match(r"^(\d+)\. `([^`]*)`", line)
        if m and needle in m.group(2):
            return m.group(1)
    raise AssertionError(f"no numbered choice with {needle!r} in:\n{text}")


def start_tabular(conv: Conversation) -> str:
    """Pick tabular-profile and answer its file question with the penguins table; returns the last text."""
    text = said(conv.send("profile my table"))  # "my penguins table" would name the file (test_guided_cues.py)
    return said(conv.send(number_of(text, "tabular-penguins.csv")))


def start_classifier_on_wine(conv: Conversation) -> str:
    text = said(conv.send("benchmark a classifier"))
    return said(conv.send(number_of(text, "classifier-wine.csv")))


# ---- opening and choosing a workflow -------------------------------------------------------------
def test_greeting_says_what_it_can_do_and_names_list_and_help(root):
    conv = Conversation(Registry.load(root), load_settings(root), GuidedBackend())
    text = said(conv.opening())
    assert "workflow" in text and "`list`" in text and "`help`" in text


def test_clear_request_goes_straight_to_the_workflow_summary_and_first_question(root):
    events = guided_chat(root).send("profile my table")
    assert [a.name for a in actions(events)] == ["search_workflows", "describe_workflow", "inspect_data"]
    text = said(events)
    assert "**Tabular profile** (`tabular-profile` 1.0.0)" in text
    assert "Outputs: `cleaned` (csv-table), `profile` (json), `plot` (png)." in text
    assert "1/4 `dataset_file`" in text and "data/examples/tabular-penguins.csv" in text


def test_ambiguous_request_gets_a_numbered_choice(root):
    events = guided_chat(root).send("materials")
    assert [a.name for a in actions(events)] == ["search_workflows"]
    text = said(events)
    assert "1. `pl-power-series`: Photoluminescence power series" in text
    assert "2. `surrogate-design`: Surrogate model and candidate design" in text
    assert "number or id" in text


def test_choosing_by_number_describes_that_workflow(root):
    conv = guided_chat(root)
    conv.send("materials")
    events = conv.send("2")
    assert actions(events)[0].name == "describe_workflow"
    assert actions(events)[0].arguments == {"workflow": "surrogate-design"}
    assert "1/9 `dataset_file`" in said(events)


def test_exact_workflow_id_goes_straight_to_its_questions(root):
    events = guided_chat(root).send("classifier-benchmark")
    assert actions(events)[1].arguments == {"workflow": "classifier-benchmark"}
    assert "1/10 `dataset`" in said(events)


def test_request_with_no_match_lists_every_workflow(root):
    events = guided_chat(root).send("quantum chromodynamics")
    assert [a.arguments["query"] for a in actions(events)] == ["quantum chromodynamics", ""]
    text = said(events)
    assert "No workflow matches “quantum chromodynamics”" in text
    for i, wf in enumerate(["classifier-benchmark", "pl-power-series", "surrogate-design", "tabular-profile"], 1):
        assert f"{i}. `{wf}`" in text


def test_list_then_a_number_picks_that_workflow_even_mid_questions(root):
    conv = guided_chat(root)
    start_tabular(conv)
    listed = said(conv.send("list"))
    assert "`back` returns to `missing_strategy`" in listed
    events = conv.send(number_of(listed, "pl-power-series"))
    assert actions(events)[0].arguments == {"workflow": "pl-power-series"}
    assert "1/12 `spectra_file`" in said(events)


def test_number_outside_the_list_asks_again_without_an_action(root):
    conv = guided_chat(root)
    conv.send("materials")
    events = conv.send("7")
    assert actions(events) == []
    assert "Pick a number from 1 to 2" in said(events)


# ---- answering questions -------------------------------------------------------------------------
def test_researcher_reaches_a_valid_tabular_profile_draft_by_answering_the_questions(root, cli):
    conv = guided_chat(root)
    text = start_tabular(conv)
    assert "2/4 `missing_strategy`" in text and "1. `remove` (default)" in text
    text = said(conv.send(number_of(text, "fill_median")))
    assert "3/4 `drop_duplicates`" in text and "yes or no" in text
    events = conv.send("no")
    assert actions(events) == []  # the table's columns came with the check of its path
    text = said(events)
    assert "4/4 `columns`" in text and "1. `species`" in text
    events = conv.send("species, 3")
    (draft,) = drafts(events)
    assert draft.params == {"dataset_file": "data/examples/tabular-penguins.csv", "missing_strategy": "fill_median",
                            "drop_duplicates": False, "columns": ["species", "bill_length_mm"]}
    text = said(events)
    assert f"`{draft.invocation_id[:12]}`" in text
    assert f"`drafts/tabular-profile-{draft.invocation_id[:12]}.yaml`" in text
    assert "ctrl+r" in text and "`set name=value`" in text
    code, out, err = cli("--registry", root, "validate", draft.config_path)
    assert code == 0, out + err
    assert draft.invocation_id[:8] in out


def test_unconvertible_value_is_reasked_with_the_expected_type_and_no_action(root):
    conv = guided_chat(root)
    start_classifier_on_wine(conv)
    conv.send("quality_class")                # label_column (its default `target` is no column of this table)
    conv.send("skip")                         # feature_columns: every column but the label
    conv.send("default")                      # categorical_encoding
    events = conv.send("a fifth")             # test_fraction is a number
    assert actions(events) == []
    text = said(events)
    assert "`a fifth` is not a number" in text and "e.g. `0.2`" in text
    assert "5/10 `test_fraction`" in text
    assert "6/10 `model`" in said(conv.send("0.25"))


def test_boolean_answers_accept_yes_no_words_and_refuse_others(root):
    conv = guided_chat(root)
    start_tabular(conv)
    conv.send("1")
    refused = said(conv.send("maybe"))
    assert "`maybe` is not a boolean" in refused and "3/4 `drop_duplicates`" in refused
    conv.send("n")
    (draft,) = drafts(conv.send("skip"))
    assert draft.params["drop_duplicates"] is False


def test_enum_typo_is_reasked_with_a_suggestion_and_no_action(root):
    conv = guided_chat(root)
    start_tabular(conv)
    events = conv.send("fill_mena")
    assert actions(events) == []
    assert "did you mean `fill_mean`?" in said(events)


def test_column_param_offers_the_tables_columns(root):
    conv = guided_chat(root)
    text = start_classifier_on_wine(conv)
    assert "2/10 `label_column`" in text and "4. `quality_class`" in text
    conv.send(number_of(text, "quality_class"))
    (draft,) = drafts(conv.send("done"))
    assert draft.params["dataset"] == "data/examples/classifier-wine.csv"
    assert draft.params["label_column"] == "quality_class"


def test_null_is_accepted_where_the_type_allows_it(root):
    conv = guided_chat(root)
    text = said(conv.send("photoluminescence power series"))
    conv.send(number_of(text, "pl-campaign.csv"))
    conv.send("set saturation_boundary=null")
    (draft,) = drafts(conv.send("done"))
    assert draft.params["saturation_boundary"] is None


def test_sensitive_param_is_announced_and_its_value_stays_out_of_the_model_view(tmp_path):
    root = chat_registry(tmp_path / "registry", {"token-copy": SENSITIVE_WORKFLOW})
    conv = guided_chat(root)
    text = said(conv.send("token-copy"))
    question = said(conv.send(number_of(text, "tabular-penguins.csv")))
    assert "2/2 `token`" in question and "stays on this machine" in question
    events = conv.send("s3cret-value")
    (draft,) = drafts(events)
    assert draft.params["token"] == "s3cret-value"
    assert actions(events)[0].arguments["params"]["token"] == "<redacted>"
    shown = said(events) + said(conv.send("show"))
    assert "s3cret-value" not in shown
    assert not any("s3cret-value" in json.dumps(m.get("tool_calls", "")) + str(m["content"] or "")
                   for m in conv.messages if m["role"] != "user")


# ---- gate refusals -------------------------------------------------------------------------------
def test_gate_error_reasks_the_offending_param_with_its_choices(root):
    conv = guided_chat(root)
    start_tabular(conv)
    conv.send("default")
    conv.send("yes")
    events = conv.send("species, species")  # columns must be unique: only the gate knows that
    assert drafts(events) == [] and actions(events)[0].name == "validate_params"
    text = said(events)
    assert "The gate refused this: `params.columns`" in text
    assert "4/4 `columns`" in text and "3. `bill_length_mm`" in text
    (draft,) = drafts(conv.send("1, 3"))
    assert draft.params["columns"] == ["species", "bill_length_mm"]


def test_missing_required_value_after_done_is_asked_for(root):
    conv = guided_chat(root)
    conv.send("tabular-profile")
    events = conv.send("done")
    assert actions(events)[0].arguments == {"workflow": "tabular-profile", "params": {}}
    text = said(events)
    assert "`params.dataset_file` is required" in text and "1/4 `dataset_file`" in text


# ---- commands ------------------------------------------------------------------------------------
def test_done_keeps_the_defaults_of_the_remaining_params(root):
    conv = guided_chat(root)
    start_tabular(conv)
    events = conv.send("done")
    assert actions(events)[0].arguments == {"workflow": "tabular-profile",
                                            "params": {"dataset_file": "data/examples/tabular-penguins.csv"}}
    (draft,) = drafts(events)
    assert draft.params == {"dataset_file": "data/examples/tabular-penguins.csv", "missing_strategy": "remove",
                            "drop_duplicates": True}


def test_set_changes_a_value_and_revalidates_to_a_new_invocation_id(root):
    conv = guided_chat(root)
    start_tabular(conv)
    (first,) = drafts(conv.send("done"))
    events = conv.send("set missing_strategy=fill_mean")
    (second,) = drafts(events)
    assert second.params["missing_strategy"] == "fill_mean"
    assert second.invocation_id != first.invocation_id
    assert f"`{second.invocation_id[:12]}`" in said(events)
    assert YAML(typ="safe").load(second.config_path.read_text())["params"]["missing_strategy"] == "fill_mean"


def test_set_with_an_unknown_name_suggests_the_real_one_and_calls_nothing(root):
    conv = guided_chat(root)
    start_tabular(conv)
    events = conv.send("set missing_stratgy=fill_mean")
    assert actions(events) == []
    assert "did you mean `missing_strategy`" in said(events)


def test_back_returns_to_the_previous_question(root):
    conv = guided_chat(root)
    start_tabular(conv)
    conv.send("fill_mean")
    text = said(conv.send("back"))
    assert "2/4 `missing_strategy`" in text and "Current value: `fill_mean`." in text
    assert "3/4 `drop_duplicates`" in said(conv.send("remove"))


def test_show_lists_the_params_so_far_with_defaults(root):
    conv = guided_chat(root)
    start_tabular(conv)
    text = said(conv.send("show"))
    assert "- `dataset_file`: `data/examples/tabular-penguins.csv`" in text
    assert "- `missing_strategy`: `remove` (default)" in text
    assert "- `columns`: not set" in text
    assert "(Current question: `missing_strategy`.)" in text


def test_help_lists_the_commands_and_keeps_the_open_question(root):
    conv = guided_chat(root)
    start_tabular(conv)
    text = said(conv.send("help"))
    for command in ("`list`", "`show`", "`set name=value`", "`back`", "`done`", "`restart`"):
        assert command in text
    assert "3/4 `drop_duplicates`" in said(conv.send("fill_mean"))


def test_chatter_after_a_draft_points_to_the_panel_instead_of_listing_workflows(root):
    conv = guided_chat(root)
    start_tabular(conv)
    conv.send("done")
    events = conv.send("thanks!")
    assert [a.name for a in actions(events)] == ["search_workflows"]
    assert "Your draft is still ready to approve" in said(events)


def test_restart_forgets_the_workflow(root):
    conv = guided_chat(root)
    start_tabular(conv)
    assert "Starting over" in said(conv.send("restart"))
    assert "No workflow chosen yet" in said(conv.send("show"))


# ---- determinism ---------------------------------------------------------------------------------
SCRIPT = ["materials", "2", "4", "Fe, Ni, Co, Cr", "hardness_hv", "3", "lots", "set n_candidates=10", "done",
          "set seed=3"]


def transcript(events) -> list:
    out = []
    for e in events:
        if isinstance(e, AssistantSaid):
            out.append(("said", e.text))
        elif isinstance(e, ActionCalled):
            out.append(("action", e.name, json.dumps(e.arguments, sort_keys=True), e.ok, e.summary))
        elif isinstance(e, DraftReady):
            out.append(("draft", e.draft.invocation_id, e.draft.config_text))
    return out


def test_the_same_conversation_twice_gives_identical_replies(root):
    runs = []
    for _ in range(2):
        conv = guided_chat(root)
        runs.append([transcript(conv.send(text)) for text in SCRIPT])
    assert runs[0] == runs[1]
    assert sum(item[0] == "draft" for step in runs[0] for item in step) == 2


def test_tool_call_ids_count_up_from_g1(root):
    conv = guided_chat(root)
    start_tabular(conv)
    ids = [c["id"] for m in conv.messages for c in m.get("tool_calls") or []]
    assert ids == ["g1", "g2", "g3", "g4"]  # search, describe, list the files, check the chosen one


def test_a_fresh_backend_replaying_the_history_asks_for_the_same_action(root):
    conv = guided_chat(root)
    start_tabular(conv)
    conv.send("fill_mean")
    conv.send("yes")
    # The file answer led to inspect_data on the chosen table: a new backend given the same history up
    # to that message must ask for exactly that call.
    last_user = max(i for i, m in enumerate(conv.messages[:-1])
                    if m["role"] == "user" and conv.messages[i + 1].get("tool_calls"))
    reply = GuidedBackend().request(conv.messages[: last_user + 1], openai_tools())
    expected = conv.messages[last_user + 1]["tool_calls"][0]
    (call,) = reply.tool_calls
    assert (call.id, call.name, call.arguments) == (expected["id"], expected["function"]["name"],
                                                    json.loads(expected["function"]["arguments"]))
