"""Types decide which file fits which parameter: the request parser and the guided dialogue never put a file
of another artifact type in a file param (variant-calling's FASTA `reference` is never the FASTQ reads).

Real Conversation, actions and registry (variant-calling with its example data); nothing runs.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from snakegate.agent.actions.registry import param_table
from snakegate.agent.controller import Conversation
from snakegate.agent.guided.dialogue import GuidedBackend
from snakegate.agent.guided.parse import fits, request_values
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry
from registry_copies import REPO, make_registry
from test_guided import actions, said

READS = "data/examples/variant-calling/alpha.fq.gz"
REFERENCE = "data/examples/variant-calling/reference.fa"


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = make_registry(tmp_path_factory.mktemp("types") / "registry")
    shutil.copytree(REPO / "workflows" / "variant-calling", root / "workflows" / "variant-calling",
                    ignore=shutil.ignore_patterns(".snakemake", "__pycache__"))
    shutil.copytree(REPO / "data" / "examples" / "variant-calling", root / "data" / "examples" / "variant-calling")
    return root


@pytest.fixture(scope="module")
def calling_params(root) -> list[dict]:
    return param_table(Registry.load(root).get("variant-calling").schema)


def chat(root: Path) -> Conversation:
    conv = Conversation(Registry.load(root), load_settings(root), GuidedBackend())
    conv.opening()
    return conv


def test_a_reads_file_does_not_fit_a_fasta_param_and_a_fasta_does():
    assert not fits(READS, "fasta") and not fits("genome.fa.gz", "fasta")
    assert fits(REFERENCE, "fasta") and fits(READS, "fastq.gz")
    assert fits("data/examples/variant-calling", "fasta")  # a folder: its files are offered next


def test_request_parser_never_sets_the_reference_to_the_reads_file(calling_params):
    assert "reference" not in request_values(f"call variants on {READS}", calling_params)


def test_request_parser_sets_the_reference_to_the_fasta_named_beside_the_reads(calling_params):
    found = request_values(f"call variants of {READS} against {REFERENCE}", calling_params)
    assert found == {"reference": REFERENCE}


def test_guided_dialogue_never_offers_the_reads_as_the_reference(root):
    text = said(chat(root).send(f"call variants on {READS} with bwa"))
    assert "`reference` = " not in text and "`reference`" in text
    choices = [line for line in text.splitlines() if line[:1].isdigit() and ". `" in line]
    assert any(REFERENCE in line for line in choices)
    assert not any(".fq" in line for line in choices)


def test_reads_typed_as_the_reference_are_refused_naming_the_type_without_an_action(root):
    conv = chat(root)
    conv.send("call variants with bwa")
    events = conv.send(READS)
    text = said(events)
    assert f"`{READS}` is a fastq.gz file, not a fasta file" in text and ".fa, .fasta" in text
    assert actions(events) == []


def test_reference_named_as_reads_file_in_the_request_is_not_taken_and_said(root):
    text = said(chat(root).send(f"call variants with bwa, reference={READS}"))
    assert "I did not take `reference` from your request" in text and "fastq.gz file" in text
