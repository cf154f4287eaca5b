"""The plan actions through the model's door: a model proposes a plan, changes a step, validates it; the
whole plan goes through the plan gate each time; a passing plan is a draft the person approves, and each
refusal comes back naming its step and field, with the question to ask.

A real scripted OpenAI-compatible server, the real OpenAIBackend, controller, actions and plan gate
(Snakemake builds each plan's DAG). Nothing here runs a plan (the guided, TUI and MCP tests do).
"""

from __future__ import annotations

import copy
import json
import stat

import pytest

from openai_server import ScriptedOpenAI, call, refuse
from plan_registry import BENCH, CLEAN, PENGUINS, make_plan_registry
from snakegate.agent.actions.platform import ActionContext, call_action
from snakegate.agent.backends.choose import OpenAIBackend
from snakegate.agent.controller import Conversation
from snakegate.agent.events import ActionCalled, BackendFailed, DraftReady
from snakegate.config.read import read_run_config
from snakegate.plan.prove import gate_plan
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry

from conftest import SECRET_NOTE

SECRET = "plan-s3cret-token-77"
FOREST = {"name": "forest", "workflow": "classifier-benchmark",
          "params": {"dataset": {"from": "clean", "output": "cleaned"}, "label_column": "sex",
                     "model": "random_forest"}}


@pytest.fixture
def registry(tmp_path):
    return make_plan_registry(tmp_path / "registry", {"secret-note": SECRET_NOTE})


@pytest.fixture
def chat(registry):
    """Factory: `chat(replies)` -> (Conversation over the real OpenAIBackend, its scripted server)."""
    servers = []

    def make(replies):
        server = ScriptedOpenAI(replies)
        servers.append(server)
        backend = OpenAIBackend(server.start(), "scripted-model", api_key="test-key", timeout=120)
        return Conversation(Registry.load(registry), load_settings(registry), backend, conversation_id="c-plan",
                            max_steps=12), server

    yield make
    for server in servers:
        server.stop()


def plan(*steps, label: str | None = None) -> dict:
    return {"steps": [copy.deepcopy(s) for s in steps], **({"label": label} if label else {})}


def with_params(step: dict, **params) -> dict:
    out = copy.deepcopy(step)
    out["params"].update(params)
    return out


def results(server: ScriptedOpenAI, name: str) -> list[dict]:
    """What the model got back from each call of action `name`, in order (from the next requests' history)."""
    body = server.requests[-1]["messages"]
    ids = [tc["id"] for m in body for tc in m.get("tool_calls") or [] if tc["function"]["name"] == name]
    return [json.loads(m["content"]) for m in body if m.get("role") == "tool" and m["tool_call_id"] in ids]


# ---- a plan becomes a draft ---------------------------------------------------------------------
def test_a_plan_that_passes_the_gate_becomes_a_draft_named_after_its_label(chat, registry):
    convo, server = chat([[call("propose_plan", plan(CLEAN, BENCH, label="penguins"))], "Ready to approve."])
    events = convo.send("clean the penguins, then classify their sex")
    assert [type(e).__name__ for e in events] == ["ActionCalled", "DraftReady", "AssistantSaid"]
    draft = events[1].draft
    assert draft.config_path == registry / "drafts" / f"penguins-{draft.invocation_id[:12]}.yaml"
    assert stat.S_IMODE(draft.config_path.stat().st_mode) == 0o600
    assert [(s.name, s.workflow, s.takes) for s in draft.plan.steps] == [
        ("clean", "tabular-profile", ()), ("bench", "classifier-benchmark", (("dataset", "clean", "cleaned"),))]
    text = draft.config_path.read_text()
    assert "#   bench: classifier-benchmark 1.0.0\n#     dataset ← clean.cleaned\n" in text
    # the draft is a plan config that gates again, to the very invocation the person approves
    config, error = read_run_config(draft.config_path)
    assert error is None and config["steps"]["bench"]["params"]["dataset"] == {"from": "clean", "output": "cleaned"}
    again = gate_plan(Registry.load(registry), config, load_settings(registry), check_dag=False)
    assert again.ok and again.invocation_id == draft.invocation_id
    (answer,) = results(server, "propose_plan")
    assert answer["ok"] and answer["order"] == ["clean", "bench"]
    assert answer["steps"][1]["takes"] == [{"param": "dataset", "from": "clean", "output": "cleaned"}]
    assert answer["config_path"] == f"drafts/penguins-{draft.invocation_id[:12]}.yaml"


def test_a_label_that_is_no_plain_word_never_names_the_draft_file(chat, registry):
    convo, _ = chat([[call("propose_plan", plan(CLEAN, label="../../outside"))], "Ready."])
    draft = next(e.draft for e in convo.send("clean it") if isinstance(e, DraftReady))
    assert draft.config_path.parent == registry / "drafts" and draft.config_path.name.startswith("plan-")
    assert list(registry.parent.glob("outside*")) == []  # nothing written where the label points
    assert "plan: ../../outside" in draft.config_path.read_text()  # the label itself is kept, as text


# ---- refusals are questions naming step and field -----------------------------------------------
def test_each_refusal_names_its_step_and_field_with_a_question_and_no_draft_is_written(chat, registry):
    everything = {"name": "clean", "workflow": "tabular-profile", "params": {"dataset_file": PENGUINS}}
    typo = with_params(BENCH, label_column="speceis")
    wrong_output = {"name": "bench_2", "workflow": "classifier-benchmark",
                    "params": {"dataset": {"from": "clean", "output": "cleand"}, "label_column": "sex"}}
    convo, server = chat([[call("propose_plan", plan(everything, typo, wrong_output))], "Which column?"])
    events = convo.send("classify the penguins twice")
    assert not [e for e in events if isinstance(e, DraftReady)] and convo.draft is None
    assert not (registry / "drafts").exists() or not list((registry / "drafts").iterdir())
    (answer,) = results(server, "propose_plan")
    assert answer["ok"] is False
    errors = {(e["step"], e["field"]): e for e in answer["errors"]}
    label = errors[("bench", "label_column")]
    assert label["code"] == "column_missing" and label["hint"] == "did you mean `species`?"
    assert label["question"].startswith("Step `bench` (classifier-benchmark), `label_column`: value `speceis` "
                                        "is not a column of step clean's output `cleaned`")
    assert label["question"].endswith("What should `label_column` be?")
    output = errors[("bench_2", "dataset")]
    assert output["code"] == "plan_unknown_output" and output["hint"] == "did you mean `cleaned`?"
    assert "cleaned" in output["choices"]
    summary = next(e for e in events if isinstance(e, ActionCalled)).summary
    assert "steps.bench.params.label_column [column_missing]" in summary


def test_replace_and_remove_step_fix_a_refused_plan_that_keeps_every_other_step(chat):
    convo, server = chat([[call("propose_plan", plan(CLEAN, with_params(BENCH, label_column="sexx"), FOREST))],
                          [call("replace_step", BENCH)],
                          [call("remove_step", {"name": "forest"})], "Ready."])
    events = convo.send("clean then classify")
    outcomes = [(e.name, e.ok) for e in events if isinstance(e, ActionCalled)]
    assert outcomes == [("propose_plan", False), ("replace_step", True), ("remove_step", True)]
    drafts = [e.draft for e in events if isinstance(e, DraftReady)]
    assert [s.name for s in drafts[0].plan.steps] == ["clean", "bench", "forest"]  # replace kept the others
    assert [s.name for s in drafts[1].plan.steps] == ["clean", "bench"]
    assert convo.draft is drafts[1] and drafts[1].plan.steps[1].params["label_column"] == "sex"


def test_removing_a_step_others_take_from_is_refused_naming_each_taker(chat):
    convo, server = chat([[call("propose_plan", plan(CLEAN, BENCH))], [call("add_step", FOREST)],
                          [call("remove_step", {"name": "clean"})], "It feeds both benchmarks."])
    events = convo.send("clean, classify twice, then drop the cleaning")
    drafts = [e.draft for e in events if isinstance(e, DraftReady)]
    assert [len(d.plan.steps) for d in drafts] == [2, 3]  # add_step extended the plan and re-gated it
    assert drafts[1].plan.steps[2].params["model"] == "random_forest"
    (removed,) = results(server, "remove_step")
    assert {(e["step"], e["field"], e["code"]) for e in removed["errors"]} == {
        ("bench", "dataset", "plan_unknown_step"), ("forest", "dataset", "plan_unknown_step")}
    assert convo.draft is drafts[1]  # a refused change never withdraws the draft on screen


def test_changes_the_arguments_make_impossible_are_refused_and_leave_the_plan_as_it_was(chat):
    convo, server = chat([
        [call("validate_plan", {})],
        [call("propose_plan", plan(CLEAN, BENCH))],
        [call("replace_step", with_params(BENCH, label_column="island") | {"name": "bnch"})],
        [call("add_step", CLEAN)],
        [call("propose_plan", plan(CLEAN, CLEAN))],
        [call("propose_plan", plan(CLEAN, label="two\nlines"))],
        [call("remove_step", {"name": "cleen"})],
        [call("validate_plan", {})], "Done."])
    events = convo.send("plan it")
    calls = [e for e in events if isinstance(e, ActionCalled)]
    codes = [e.summary.split(" — ")[0] for e in calls if not e.ok]
    assert codes == ["validate_plan: no_plan", "replace_step: unknown_step", "add_step: step_exists",
                     "propose_plan: step_exists", "propose_plan: bad_arguments", "remove_step: unknown_step"]
    assert "did you mean `bench`?" in results(server, "replace_step")[0]["error"]["hint"]
    assert "replace_step" in results(server, "add_step")[0]["error"]["hint"]
    drafts = [e.draft for e in events if isinstance(e, DraftReady)]
    assert len(drafts) == 2 and drafts[0].invocation_id == drafts[1].invocation_id  # validate_plan: unchanged


def test_a_failed_turn_takes_its_plan_changes_back(chat):
    convo, _ = chat([[call("propose_plan", plan(CLEAN, BENCH))], "Ready.",
                     [call("add_step", FOREST)], refuse(500, "the server fell over"),
                     [call("validate_plan", {})], "Still ready."])
    drafted = next(e.draft for e in convo.send("clean then classify") if isinstance(e, DraftReady))
    failed = convo.send("and a random forest too")
    assert any(isinstance(e, BackendFailed) for e in failed) and convo.draft is drafted
    again = next(e.draft for e in convo.send("check it again") if isinstance(e, DraftReady))
    assert [s.name for s in again.plan.steps] == ["clean", "bench"]  # the forest of the failed turn is gone
    assert again.invocation_id == drafted.invocation_id


# ---- sensitive values ---------------------------------------------------------------------------
def test_a_sensitive_value_in_a_plan_step_reaches_the_draft_but_never_the_model_or_the_audit_log(chat):
    note = {"name": "note", "workflow": "secret-note", "params": {"label": "hello", "token": "<redacted>"}}
    in_plain = {"name": "note", "workflow": "secret-note", "params": {"label": "bye", "token": SECRET + "-2"}}
    convo, server = chat([[call("propose_plan", plan(CLEAN, note))], "Type the token in its field.",
                          [call("validate_plan", {})], "Ready.",
                          [call("replace_step", in_plain)], "Ready again.", "Fine."])
    convo.send("clean the penguins and write a note")
    (refused,) = results(server, "propose_plan")
    assert [(e["step"], e["field"], e["code"]) for e in refused["errors"]] == [("note", "token", "required")]
    assert "masked field" in refused["errors"][0]["hint"]
    convo.set_sensitive("secret-note", "token", SECRET)
    draft = next(e.draft for e in convo.send("I entered it") if isinstance(e, DraftReady))
    assert SECRET in draft.config_path.read_text()
    assert draft.plan.steps[1].params["token"] == SECRET
    convo.send("change the label")  # the model sends a token in plain: history and log keep it redacted
    convo.send("thanks")
    for value in (SECRET, SECRET + "-2"):
        assert all(value not in body for body in server.raw_bodies), value
        assert value not in convo.audit.path.read_text(), value


# ---- what a workflow declares, and what connects to it -------------------------------------------
@pytest.fixture
def ctx(registry) -> ActionContext:
    return ActionContext(Registry.load(registry), load_settings(registry))


def test_describe_shows_each_outputs_declared_type_columns_and_keys(ctx):
    outputs = {o["name"]: o for o in call_action(ctx, "describe_workflow", {"workflow": "tabular-profile"})
               .result["outputs"]}
    assert outputs["cleaned"]["type"] == "csv-table"
    assert outputs["cleaned"]["columns"] == {"of": "dataset_file", "keep": "columns", "order": "keep"}
    assert outputs["cleaned"]["columns_are"].startswith("the columns of `dataset_file` (only those in `columns`")
    assert outputs["profile"]["keys"] == ["/rows_in", "/rows_out", "/column_order", "/columns"]  # as declared
    assert "columns" not in outputs["plot"] and "keys" not in outputs["plot"]
    bench = {o["name"]: o for o in call_action(ctx, "describe_workflow", {"workflow": "classifier-benchmark"})
             .result["outputs"]}
    assert "/roc_auc" in bench["metrics"]["keys"]


def test_find_connections_answers_which_workflows_consume_an_output_and_produce_an_input(ctx):
    out = call_action(ctx, "find_connections", {"workflow": "tabular-profile"})
    assert out.ok, out.result
    by_output = {o["output"]: o for o in out.result["outputs"]}
    takers = {(c["consumer"], c["param"]): c for c in by_output["cleaned"]["consumed_by"]}
    assert set(takers) == {("classifier-benchmark", "dataset"), ("tabular-profile", "dataset_file")}
    assert takers[("classifier-benchmark", "dataset")]["column_params"] == ["label_column", "feature_columns"]
    assert by_output["profile"]["consumed_by"] == [] and by_output["plot"]["consumed_by"] == []
    (dataset_file,) = out.result["inputs"]
    assert [(p["producer"], p["output"]) for p in dataset_file["produced_by"]] == [("tabular-profile", "cleaned")]
    assert '{"from": "<that step\'s name>", "output": "<its output name>"}' in out.result["use"]
    into = call_action(ctx, "find_connections", {"workflow": "classifier-benchmark", "param": "dataset"}).result
    assert "outputs" not in into and [p["producer"] for p in into["inputs"][0]["produced_by"]] == ["tabular-profile"]
    wrong = call_action(ctx, "find_connections", {"workflow": "tabular-profile", "output": "cleand"})
    assert not wrong.ok and wrong.result["error"]["code"] == "unknown_output"
    assert wrong.result["error"]["hint"] == "did you mean `cleaned`?"


def test_describing_a_step_of_the_plan_keeps_its_draft_and_another_workflow_withdraws_it(chat):
    convo, _ = chat([[call("propose_plan", plan(CLEAN, BENCH))], "Ready.",
                     [call("describe_workflow", {"workflow": "classifier-benchmark"})], "It has these params.",
                     [call("describe_workflow", {"workflow": "secret-note"})], "Something else now."])
    drafted = next(e.draft for e in convo.send("clean then classify") if isinstance(e, DraftReady))
    kept = convo.send("what else can the benchmark do?")
    assert convo.draft is drafted and not [e for e in kept if type(e).__name__ == "DraftCleared"]
    moved = convo.send("write a secret note instead")
    assert convo.draft is None
    assert [e.reason for e in moved if type(e).__name__ == "DraftCleared"] == [
        "the conversation moved on to secret-note"]
