"""A mistaken request is answered naming the mistake: what the researcher gave and why it does not fit (issue 26).

"predicting tensile_strength" on a table without that column, and "the variants in reference.fa" (a FASTA
where a VCF belongs), used to come back as "target_properties is required" / "vcf is required": a question
about something the researcher had already answered. Now what they said is taken, and the gate's refusal
(scripted model) or the guided dialogue's note names it. Real workflows, real demo files, real gate.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from openai_server import DEFAULT_MODEL, ScriptedOpenAI
from registry_copies import REPO, make_registry
from snakegate.agent.actions.registry import param_table
from snakegate.agent.backends.choose import OpenAIBackend
from snakegate.agent.controller import Conversation
from snakegate.agent.events import ActionCalled, AssistantSaid
from snakegate.agent.guided.dialogue import GuidedBackend
from snakegate.agent.guided.named import misplaced_file, named_values
from snakegate.agent.prefill import prefilled
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry

ALLOYS = "data/examples/surrogate-alloys.csv"
GENOME = "data/examples/variant-calling/reference.fa"
FEATURES = "data/examples/variant-annotation/features.gff3"
SURROGATE = f"Fit a surrogate on {ALLOYS} with features Fe, Ni and Cr predicting tensile_strength."
ANNOTATE = f"Annotate the variants in {GENOME} using {FEATURES}."
ALLOY_COLUMNS = ["alloy_id", "Fe", "Ni", "Co", "Cr", "hardness_hv", "yield_strength_mpa"]


def params_of(wf_id: str) -> list[dict]:
    return param_table(json.loads((REPO / "workflows" / wf_id / "schema.json").read_text()))


@pytest.fixture(scope="module")
def science_registry(tmp_path_factory) -> Path:
    """surrogate-design and variant-annotation with the demo files the requests name."""
    root = make_registry(tmp_path_factory.mktemp("mistakes") / "registry")
    for wf_id in ("surrogate-design", "variant-annotation"):
        shutil.copytree(REPO / "workflows" / wf_id, root / "workflows" / wf_id,
                        ignore=shutil.ignore_patterns(".snakemake", "__pycache__"))
    for rel in (ALLOYS, GENOME, FEATURES, "data/examples/variant-annotation/calls.vcf"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / rel, root / rel)
    return root


def test_the_column_a_request_predicts_is_read_even_when_the_table_lacks_it():
    found = named_values(SURROGATE, params_of("surrogate-design"), {"dataset_file": ALLOY_COLUMNS})
    assert found["target_properties"] == ["tensile_strength"]


def test_a_file_of_a_type_no_param_takes_goes_to_the_one_file_param_left():
    params = params_of("variant-annotation")
    assert misplaced_file(ANNOTATE, params, {"features"}) == {"vcf": GENOME}
    assert misplaced_file(ANNOTATE, params, set()) == {}    # two params left: which one is not guessed


def test_a_file_that_fits_a_param_is_never_moved_to_another():
    params = params_of("variant-annotation")
    text = f"Annotate data/examples/variant-annotation/calls.vcf using {FEATURES}."
    assert misplaced_file(text, params, {"features"}) == {}


def test_the_prefill_gives_the_gate_what_the_researcher_said_so_it_can_say_why_it_is_wrong():
    files = [ALLOYS, GENOME, FEATURES, "data/examples/variant-annotation/calls.vcf"]
    assert prefilled(ANNOTATE, params_of("variant-annotation"), {}, files) == {"vcf": GENOME, "features": FEATURES}
    surrogate = prefilled(SURROGATE, params_of("surrogate-design"), {"dataset_file": ALLOY_COLUMNS}, files)
    assert surrogate["target_properties"] == ["tensile_strength"]


def _conversation(root: Path, backend) -> Conversation:
    return Conversation(Registry.load(root), load_settings(root), backend, conversation_id="c-mistake")


@pytest.mark.parametrize("wf_id,text,named", [
    ("surrogate-design", SURROGATE, "`tensile_strength` is not a column of data/examples/surrogate-alloys.csv"
                                    " (columns: alloy_id, Fe, Ni, Co, Cr, hardness_hv, yield_strength_mpa)"),
    ("variant-annotation", ANNOTATE, f"`params.vcf` = `{GENOME}` is not a vcf"),
])
def test_a_model_that_adds_nothing_gets_the_refusal_naming_the_mistake(science_registry, wf_id, text, named):
    # the model describes the workflow and validates with no params of its own: the controller fills in
    # what the researcher said, so the gate's answer is about their mistake, not a param "required but missing"
    server = ScriptedOpenAI([[{"id": "c1", "type": "function", "function": {
        "name": "validate_params", "arguments": json.dumps({"workflow": wf_id, "params": {}})}}], "Refused."])
    server.start()
    try:
        backend = OpenAIBackend(server.base_url, DEFAULT_MODEL, api_key="k", timeout=10)
        convo = _conversation(science_registry, backend)
        events = convo.send(text)
        (refused,) = [e for e in events if isinstance(e, ActionCalled)]
        assert not refused.ok and "[required]" not in refused.summary
        result = json.loads(server.requests[1]["messages"][-1]["content"])
        assert any(named in e["message"] for e in result["errors"]), result["errors"]
    finally:
        server.stop()


@pytest.mark.parametrize("text,named", [
    (SURROGATE, "`tensile_strength` is not a column of data/examples/surrogate-alloys.csv"),
    (ANNOTATE, f"`{GENOME}` is a fasta file, not a vcf file"),
])
def test_the_guided_dialogue_names_the_mistake_in_its_reply(science_registry, text, named):
    convo = _conversation(science_registry, GuidedBackend())
    said = " ".join(e.text for e in convo.send(text) + convo.send("done") if isinstance(e, AssistantSaid))
    assert named in said and convo.draft is None
