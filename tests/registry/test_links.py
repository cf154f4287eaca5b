"""Which registry workflows fit together (snakegate.registry.links), from what they declare: an output feeds
a file param of the same type (or a table of the same delimiter); what the output's columns are, which of
the consumer's params name them, and a default a fixed column list lacks; a patterned output is flagged.

Read-only on the checkout's curated workflows, plus a throw-away registry of small made-up ones.
"""

from __future__ import annotations

import json

import pytest

from registry_copies import ROOT, make_registry
from snakegate.registry import links
from snakegate.registry.workflows import Registry


@pytest.fixture(scope="module")
def curated() -> Registry:
    return Registry.load(ROOT)


def pairs(found: list[links.Link], side: str) -> list[tuple[str, str]]:
    return [(link.consumer, link.param) if side == "consumer" else (link.producer, link.output) for link in found]


def test_a_cleaned_table_feeds_every_workflow_that_takes_a_csv_table_and_no_other(curated):
    assert pairs(links.consumers(curated, "tabular-profile", "cleaned"), "consumer") == [
        ("classifier-benchmark", "dataset"), ("pl-power-series", "spectra_file"),
        ("surrogate-design", "dataset_file"), ("tabular-profile", "dataset_file")]
    assert links.consumers(curated, "tabular-profile", "profile") == []  # json: nothing takes it
    assert links.consumers(curated, "tabular-profile", "no-such-output") == []


def test_called_variants_are_what_annotation_takes_and_nothing_makes_its_features(curated):
    assert pairs(links.producers(curated, "variant-annotation", "vcf"), "producer") == [
        ("variant-annotation", "annotated"), ("variant-calling", "calls")]
    assert links.producers(curated, "variant-annotation", "features") == []


def test_only_top_level_file_params_are_offered_never_a_file_inside_a_list(curated):
    assert links.inputs(curated.get("variant-calling").schema) == {"reference": "fasta"}
    assert links.producers(curated, "variant-calling", "samples") == []


def test_a_fixed_column_list_without_a_consumers_default_column_asks_to_set_it(curated):
    (fits,) = [link for link in links.producers(curated, "classifier-benchmark", "dataset")
               if link.producer == "pl-power-series"]
    assert fits.column_params == ("label_column", "feature_columns") and fits.unmet_defaults == ("label_column",)
    assert fits.as_dict()["set_these"] == ["label_column"]
    assert fits.columns.startswith("power_uW, center_nm, fwhm_nm")
    (cleaned,) = [link for link in links.producers(curated, "classifier-benchmark", "dataset")
                  if link.producer == "tabular-profile"]
    assert cleaned.unmet_defaults == ()  # its columns follow the params: nothing can be said yet


def test_declared_columns_are_worded_as_they_follow_from_the_params(curated):
    outputs = {(w, o): d for w in curated.ids() for o, d in curated.get(w).manifest.outputs.items()}
    assert links.columns_text(outputs[("tabular-profile", "cleaned")]) == (
        "the columns of `dataset_file` (only those in `columns` when it is given, in that list's order)")
    assert links.columns_text(outputs[("surrogate-design", "candidates")]) == (
        "rank, then each of `feature_columns`, then `{}_predicted`, `{}_std` for each of `target_properties`, "
        "then score")
    assert links.columns_text(outputs[("variant-calling", "coverage")]) == "contig, start, end, then each of `samples.name`"
    assert links.columns_text(outputs[("tabular-profile", "profile")]) is None


def _workflow(wf_id: str, outputs: str, properties: dict) -> dict:
    return {
        "workflow.yaml": f"""\
            id: {wf_id}
            version: 0.1.0
            title: {wf_id}
            description: A made-up workflow for the links tests.
            tags: [test]
            maintainers: [{{name: snakegate tests}}]
            trust: community
            rules: {{}}
            outputs:
            {outputs}
            """,
        "schema.json": json.dumps({"type": "object", "additionalProperties": False, "properties": properties}),
    }


def test_tables_fit_by_delimiter_and_a_patterned_output_is_flagged(tmp_path):
    table = {"type": "string", "description": "A table."}
    root = make_registry(tmp_path / "registry", {
        "maker": _workflow("maker", "  per_sample: {path: 'results/{name}.csv', type: csv-table, description: x}\n"
                                    "              tabbed: {path: results/t.tsv, type: tsv, description: x}",
                           {"name": {"type": "string", "description": "A name."}}),
        "taker": _workflow("taker", "  out: {path: results/o.txt, type: text, description: x}",
                           {"csv": {**table, "x-artifact": "csv-table"}, "tsv": {**table, "x-artifact": "tsv-table"},
                            "sheet": {**table, "x-artifact": "csv-table", "x-sample-sheet": {"type": "object"}}}),
    })
    registry = Registry.load(root)
    found = links.links_between(registry.get("maker"), registry.get("taker"))
    assert [(link.output, link.param, link.one_file) for link in found] == [
        ("per_sample", "csv", False), ("tabbed", "tsv", True)]  # tsv and tsv-table share a delimiter
    assert found[0].as_dict()["one_file"] is False  # a file per value of {name}: a plan takes it only as one


def test_step_names_are_valid_and_numbered_when_taken():
    assert links.step_name("classifier-benchmark") == "benchmark"
    assert links.step_name("tabular-profile", {"profile"}) == "profile_2"
    assert links.step_name("2024-data") == "data"
    assert links.step_name("123") == "step"
