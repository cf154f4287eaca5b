"""A value the researcher gives a parameter by naming it in words reaches the reading of the request (issue 26
§1, bugs the hidden-request bench found): "signal ROI 8 16 12 20", "500 bootstrap samples", "feature columns
Fe, Ni, Co and Cr", "target hardness_hv", "power column P_uW", "only gene and exon features", "sample alpha
from …alpha.fq.gz", "seed 42." as the integer 42 — and nothing is guessed. Pure: the real curated contracts."""

from __future__ import annotations

import json
from pathlib import Path

from snakegate.agent.actions.registry import param_table
from snakegate.agent.faithful import differences
from snakegate.agent.guided.named import files_as, named_values
from snakegate.agent.guided.stated import param_numbers
from snakegate.agent.prefill import prefilled

ROOT = Path(__file__).resolve().parents[3]
ALLOYS = "data/examples/surrogate-alloys.csv"
ALLOYS_HEADER = ["alloy_id", "Fe", "Ni", "Co", "Cr", "hardness_hv", "yield_strength_mpa"]
READS = "data/examples/variant-calling/alpha.fq.gz"


def params(workflow: str) -> list[dict]:
    return param_table(json.loads((ROOT / "workflows" / workflow / "schema.json").read_text()))


def test_a_four_number_region_after_its_name_is_read_and_the_next_phrase_is_not_swallowed():
    text = ("Analyse frames.npz with signal ROI 8 16 12 20, background ROI 24 32 8 24 and 500 bootstrap "
            "samples.")
    assert named_values(text, params("pump-probe")) == {"signal_roi": [8, 16, 12, 20],
                                                         "background_roi": [24, 32, 8, 24], "n_bootstrap": 500}


def test_a_count_before_the_params_words_is_read_only_within_the_contracts_bounds():
    assert named_values("use 50 bootstrap samples", params("pump-probe")) == {}   # minimum 100: not read
    assert named_values("with 2 threads", params("variant-calling")) == {"threads": 2}


def test_columns_after_the_params_words_end_where_the_next_phrase_starts():
    text = "Suggest alloys with feature columns Fe, Ni, Co and Cr, target hardness_hv, a random forest model."
    found = named_values(text, params("surrogate-design"), {"dataset_file": ALLOYS_HEADER})
    assert found == {"feature_columns": ["Fe", "Ni", "Co", "Cr"], "target_properties": ["hardness_hv"]}


def test_one_word_of_a_column_params_name_is_no_cue_without_the_tables_header():
    text = "feature columns Fe and Ni, target hardness_hv"
    assert "target_properties" not in named_values(text, params("surrogate-design"))
    assert named_values(text, params("surrogate-design"), {"dataset_file": ["Fe", "Ni"]}) == \
        {"feature_columns": ["Fe", "Ni"]}                          # hardness_hv is no column of that table


def test_a_column_named_after_its_params_full_words_is_taken_as_said_even_when_the_table_lacks_it():
    # the gate then refuses photon_counts by name: what the researcher said is never silently replaced
    text = "Run the PL power series with wavelengths in um, power column P_uW and counts column photon_counts."
    assert named_values(text, params("pl-power-series")) == {"power_column": "P_uW",
                                                              "counts_column": "photon_counts"}


def test_allowed_items_before_the_params_first_word_are_read_after_only():
    text = "Annotate calls.vcf with features.gff3, only gene and exon features."
    assert named_values(text, params("variant-annotation")) == {"feature_types": ["gene", "exon"]}
    assert named_values("annotate with features.gff3", params("variant-annotation")) == {}


def test_a_sample_with_its_reads_file_fills_one_item_of_the_samples_list():
    text = f"Call variants for sample alpha from {READS} against reference.fa."
    assert named_values(text, params("variant-calling")) == {"samples": [{"name": "alpha", "reads": READS}]}
    # a file that is no FASTQ is never a sample's reads
    assert named_values("sample alpha from ref/reference.fa", params("variant-calling")) == {}


def test_seed_at_a_sentences_end_is_the_integer_not_a_float():
    found = param_numbers("with a test fraction of 0.3 and seed 42.", params("classifier-benchmark"))
    assert found == {"test_fraction": 0.3, "seed": 42} and isinstance(found["seed"], int)


def test_a_draft_that_drops_the_stated_feature_types_is_flagged():
    text = ("Annotate data/examples/variant-annotation/calls.vcf with data/examples/variant-annotation/"
            "features.gff3, only gene and exon features.")
    draft = {"vcf": "data/examples/variant-annotation/calls.vcf",
             "features": "data/examples/variant-annotation/features.gff3"}
    (said,) = [d.says for d in differences(text, params("variant-annotation"), draft, {})]
    assert said == 'you asked for feature_types ["gene", "exon"]; the draft leaves it out'
    assert prefilled(text, params("variant-annotation"), {}, [])["feature_types"] == ["gene", "exon"]


def test_the_prefill_keeps_features_and_target_apart():
    text = (f"Suggest new alloys from {ALLOYS} with feature columns Fe, Ni, Co and Cr, target hardness_hv, a "
            "random forest model and leave-one-out validation.")
    filled = prefilled(text, params("surrogate-design"), {"dataset_file": ALLOYS_HEADER}, [ALLOYS])
    assert filled["feature_columns"] == ["Fe", "Ni", "Co", "Cr"]
    assert filled["target_properties"] == ["hardness_hv"]


def test_a_param_name_spelled_by_the_beginnings_of_the_words_takes_the_number_after_them():
    text = f"Call variants for sample alpha from {READS} with a minimum mapping quality of 30 and 2 threads."
    assert named_values(text, params("variant-calling"))["min_mapq"] == 30
    assert named_values("with a minimum mapping quality of 99", params("variant-calling")) == {}  # maximum 60
    # a one- or two-letter part of a name is no beginning of a word: "class 3" is no C
    assert "C" not in named_values("predict the class 3", params("classifier-benchmark"))


def test_a_sample_reading_the_named_file_is_no_difference():
    text = f"Call variants for sample alpha from {READS} against data/examples/variant-calling/reference.fa."
    draft = {"reference": "data/examples/variant-calling/reference.fa",
             "samples": [{"name": "alpha", "reads": READS}]}
    assert differences(text, params("variant-calling"), draft, {}) == []


def test_a_file_said_as_the_reference_is_prefilled_as_said_so_the_gate_refuses_it_by_name():
    text = (f"Call variants in data/examples/variant-calling/beta.fq.gz using {READS} as the reference.")
    files = [READS, "data/examples/variant-calling/beta.fq.gz", "data/examples/variant-calling/reference.fa"]
    assert files_as(text, params("variant-calling")) == {"reference": READS}
    assert prefilled(text, params("variant-calling"), {}, files)["reference"] == READS


def test_an_everyday_word_after_columns_is_no_column_unless_the_table_has_it():
    tabular = params("tabular-profile")
    assert named_values("profile it keeping all columns except sex", tabular, {"dataset_file": ["sex"]}) == {}
    assert named_values("columns species and island", tabular) == {}        # no header known: not guessed
    assert named_values("columns species and island", tabular, {"dataset_file": ["species", "island"]}) == \
        {"columns": ["species", "island"]}
