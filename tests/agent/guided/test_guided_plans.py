"""The offline guided dialogue builds plans: "profile my table, then benchmark a classifier on the cleaned
result" proposes the chain (the edge dataset ← profile.cleaned, where types allow), asks each step's
missing params naming the step, shows the gated plan, and runs it once the person approves; a follow-up
"then also …" adds a step; a gate refusal comes back as the question of the step and field it names.

The real Conversation, GuidedBackend, actions, plan gate, runner and Snakemake, in a throw-away registry.
"""

from __future__ import annotations

import json

import pytest

from plan_registry import PENGUINS, SIZE_COLUMNS, make_plan_registry
from snakegate.agent.controller import Conversation
from snakegate.agent.events import ActionCalled, AssistantSaid, DraftReady
from snakegate.agent.guided.dialogue import GuidedBackend
from snakegate.errors import UserError
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry

CHAIN = "profile my table, then benchmark a classifier on the cleaned result"


@pytest.fixture
def registry(tmp_path):
    return make_plan_registry(tmp_path / "registry", with_git=True)


@pytest.fixture
def convo(registry):
    return Conversation(Registry.load(registry), load_settings(registry), GuidedBackend(), max_steps=20)


class Talk:
    """The researcher's side: send a message, keep what came back."""

    def __init__(self, convo: Conversation):
        self.convo = convo
        self.events: list = []

    def __call__(self, text: str) -> str:
        self.events = self.convo.send(text)
        return "\n\n".join(e.text for e in self.events if isinstance(e, AssistantSaid))

    def actions(self) -> list[tuple[str, bool]]:
        return [(e.name, e.ok) for e in self.events if isinstance(e, ActionCalled)]

    def draft(self):
        drafts = [e.draft for e in self.events if isinstance(e, DraftReady)]
        return drafts[-1] if drafts else None


def to_plan_draft(say: Talk):
    """The chain request, then its questions answered: the penguins table, the size columns, sex, and every
    other column as the benchmark's features."""
    say(CHAIN)
    say(PENGUINS)
    say(", ".join(SIZE_COLUMNS))
    say("sex")
    return say("skip")


def test_a_chain_request_proposes_the_chain_asks_each_step_and_runs_the_gated_plan_once_approved(convo, registry):
    say = Talk(convo)
    text = say(CHAIN)
    # the chain, found by search and describe as a model would, with the edge its declared types allow
    assert [name for name, _ in say.actions()][:4] == ["search_workflows", "describe_workflow", "search_workflows",
                                                        "describe_workflow"]
    assert "A plan of 2 steps" in text and "1. `profile`: **Tabular profile** (`tabular-profile`)" in text
    assert "2. `benchmark`: **Classifier benchmark** (`classifier-benchmark`), `dataset` ← `profile.cleaned`" \
        in text
    # the first missing param, naming its step
    assert "Step 1/2 `profile` (tabular-profile)\n**1/2 `dataset_file`**" in text and PENGUINS in text
    text = say(PENGUINS)
    assert "Step 1/2 `profile` (tabular-profile)\n**2/2 `columns`**" in text
    text = say(", ".join(SIZE_COLUMNS))
    # step 2 asks only what it lacks: its table comes from step 1, whose declared columns are the choices
    assert "Step 2/2 `benchmark` (classifier-benchmark)\n**1/2 `label_column`**" in text
    assert "`dataset`" not in text.split("label_column", 1)[1]
    assert [line for line in text.splitlines() if line[:1].isdigit()] == [
        f"{i}. `{c}`" for i, c in enumerate(SIZE_COLUMNS, 1)]
    assert "island" not in text  # dropped by step 1's columns: not offered
    text = say("sex")
    # its feature columns are a choice of step 1's columns too; skipped, every column but the label
    assert "Step 2/2 `benchmark` (classifier-benchmark)\n**2/2 `feature_columns`**" in text
    assert "island" not in text and "`skip` leaves it out" in text
    text = say("skip")
    assert say.actions() == [("propose_plan", True)]
    draft = say.draft()
    assert draft is not None and [(s.name, s.workflow) for s in draft.plan.steps] == [
        ("profile", "tabular-profile"), ("benchmark", "classifier-benchmark")]
    assert draft.plan.steps[1].params["label_column"] == "sex"
    assert "The gate accepts the plan" in text and "2. `benchmark`: classifier-benchmark 1.0.0, `dataset` ← " \
                                                   "`profile.cleaned`" in text
    assert "ctrl+r" in text  # approving is the person's, in the panel

    approval = convo.approve("Ada Tester")
    outcome = convo.execute(approval)
    assert outcome.status == "succeeded", outcome.record
    record = json.loads((outcome.run_dir / "run.json").read_text())
    assert record["kind"] == "plan" and record["invocation_id"] == draft.invocation_id
    assert record["origin"]["approved_by"] == "Ada Tester" and record["origin"]["proposed_by_backend"] == "guided"
    # the benchmark learned from exactly the rows step 1 kept
    profile = json.loads((outcome.run_dir / "steps" / "profile" / "results" / "profile.json").read_text())
    metrics = json.loads((outcome.run_dir / "steps" / "benchmark" / "results" / "metrics.json").read_text())
    assert metrics["n_train"] + metrics["n_test"] == profile["rows_out"] < profile["rows_in"]
    with pytest.raises(UserError, match="already used"):  # one approval, one run
        convo.execute(approval)


def test_a_follow_up_then_also_adds_a_step_through_add_step(convo):
    say = Talk(convo)
    to_plan_draft(say)
    text = say("then also benchmark a random forest on it")
    assert "3. `benchmark_2`: **Classifier benchmark** (`classifier-benchmark`), `dataset` ← " \
           "`profile.cleaned`" in text
    assert "From your request: `model` = `random_forest`." in text
    assert "Step 3/3 `benchmark_2` (classifier-benchmark)\n**1/2 `label_column`**" in text
    say("sex")
    text = say("skip")
    assert say.actions() == [("add_step", True)]
    draft = say.draft()
    assert [s.name for s in draft.plan.steps] == ["profile", "benchmark", "benchmark_2"]
    assert draft.plan.steps[2].params["model"] == "random_forest"
    assert draft.plan.steps[2].takes == (("dataset", "profile", "cleaned"),)
    assert "3. `benchmark_2`: classifier-benchmark 1.0.0, `dataset` ← `profile.cleaned`" in text


def test_a_gate_refusal_comes_back_as_the_question_of_the_step_and_field_it_names(convo):
    say = Talk(convo)
    first = to_plan_draft(say) and say.draft()
    # dropping `sex` from step 1 leaves step 2's label without its column: the gate names step and field
    text = say("set profile.columns=bill_length_mm, body_mass_g")
    assert say.actions() == [("replace_step", False)] and say.draft() is None
    assert "`steps.benchmark.params.label_column` value `sex` is not a column of step profile's output " \
           "`cleaned`" in text
    assert "Step 2/2 `benchmark` (classifier-benchmark)\n**1/2 `label_column`**" in text
    assert "1. `bill_length_mm`\n2. `body_mass_g`" in text  # the gate's choices
    assert convo.draft is first  # the draft on screen stays until a new one passes
    say("body_mass_g")
    assert say.actions() == [("replace_step", True)]
    assert say.draft().plan.steps[1].params["label_column"] == "body_mass_g"


def test_removing_a_step_others_take_from_asks_the_taker_for_its_input(convo):
    say = Talk(convo)
    to_plan_draft(say)
    text = say("remove step profile")
    assert say.actions()[0] == ("remove_step", False)
    assert "takes from step `profile`, which the plan does not have" in text
    assert "Step 1/1 `benchmark` (classifier-benchmark)" in text and "`dataset`" in text
    say(PENGUINS)
    assert say.actions()[-1] == ("replace_step", True)
    assert [s.name for s in say.draft().plan.steps] == ["benchmark"]


def test_a_single_workflow_draft_grows_into_a_plan_with_then_also(convo):
    say = Talk(convo)
    say(f"profile {PENGUINS}")
    say("done")
    assert say.draft().plan is None  # one workflow, as before
    text = say("then also benchmark a classifier on the cleaned result")
    assert "A plan of 2 steps" in text and "`dataset` ← `profile.cleaned`" in text
    say("species")
    say("skip")  # feature_columns: every column but the label
    assert say.actions() == [("propose_plan", True)]  # the plan is new to the gate: proposed whole
    assert [s.workflow for s in say.draft().plan.steps] == ["tabular-profile", "classifier-benchmark"]


def test_show_gives_each_steps_params_and_done_keeps_the_defaults_of_the_rest(convo):
    say = Talk(convo)
    say(f"profile {PENGUINS}, then benchmark a classifier on the cleaned result with label_column=sex")
    text = say("show")
    assert "Step 1 `profile` (tabular-profile) (current):" in text and "- `dataset`: ← `profile.cleaned`" in text
    assert "(Current question: `columns`.)" in text
    say("done")
    draft = say.draft()
    assert draft is not None and draft.plan.steps[1].params["label_column"] == "sex"
