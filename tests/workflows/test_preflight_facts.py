"""Each workflow's gate refuses what its jobs would refuse, from the inputs' cheap facts (a table's profile
and cells, a detector's delays, a reference's sequence names and lines), with the fix; and keeps passing
what runs. Gated in-process (the real gate, its preflight in the sandbox) in a throw-away registry.
"""
import shutil

import numpy as np
import pytest

from registry_copies import ROOT, make_registry
from snakegate.gate.prove import gate
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry

WORKFLOWS = ("surrogate-design", "pump-probe", "pl-power-series", "variant-calling")


@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    root = make_registry(tmp_path_factory.mktemp("facts") / "reg")
    for wf in WORKFLOWS:
        shutil.copytree(ROOT / "workflows" / wf, root / "workflows" / wf,
                        ignore=shutil.ignore_patterns("__pycache__", ".snakemake", "test"))
    for name in ("surrogate-alloys.csv", "pl-campaign.csv"):
        shutil.copy(ROOT / "data" / "examples" / name, root / "data" / "examples" / name)
    shutil.copytree(ROOT / "data" / "examples" / "pump-probe", root / "data" / "examples" / "pump-probe")
    shutil.copytree(ROOT / "data" / "examples" / "variant-calling", root / "data" / "examples" / "variant-calling")
    return root


def errors(reg, workflow, **params):
    result = gate(Registry.load(reg), {"workflow": workflow, "params": params}, load_settings(reg), check_dag=False)
    return [] if result.ok else result.errors


def write(reg, name, content):
    path = reg / "data" / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return f"data/{name}"


# ---- tabular-profile ------------------------------------------------------------------------------------------

def test_a_numeric_column_holding_inf_after_cleaning_is_refused_and_leaving_it_out_passes(reg):
    path = write(reg, "inf.csv", "a,b\n1,x\n2,y\ninf,z\n")
    [e] = errors(reg, "tabular-profile", dataset_file=path)
    assert e.path == "params.dataset_file" and "`a` of the cleaned table holds an infinite number" in e.message
    assert errors(reg, "tabular-profile", dataset_file=path, columns=["b"]) == []


def test_an_inf_in_a_row_the_cleaning_removes_is_not_refused(reg):
    path = write(reg, "inf-dropped.csv", "a,b\n1,x\n2,y\ninf,\n")
    assert errors(reg, "tabular-profile", dataset_file=path, missing_strategy="remove") == []


def test_a_row_longer_than_the_header_past_the_format_checks_first_rows_is_refused(reg):
    # the cheap format check reads the first rows; the profile reads them all
    path = write(reg, "long-row.csv", "a,b\n" + "1,2\n" * 10 + "5,6,7\n")
    [e] = errors(reg, "tabular-profile", dataset_file=path)
    assert e.code == "format" and "line 12 has 3 fields but the header has 2" in e.message


def test_text_that_is_not_utf8_past_the_first_64_kib_is_refused(reg):
    path = write(reg, "latin1.csv", ("name,v\n" + "Zurich,1\n" * 9000 + "Z\xfcrich,1\n").encode("latin-1"))
    [e] = errors(reg, "tabular-profile", dataset_file=path)
    assert e.code == "format" and "not UTF-8" in e.message


# ---- surrogate-design -----------------------------------------------------------------------------------------

ALLOYS = "data/examples/surrogate-alloys.csv"
FEATURES = ["Fe", "Ni", "Co", "Cr"]


def alloys(rows=None, edit=None):
    lines = (ROOT / "data" / "examples" / "surrogate-alloys.csv").read_text().splitlines()
    body = lines[1:1 + rows] if rows else lines[1:]
    if edit:
        body = [edit(i, line) for i, line in enumerate(body)]
    return "\n".join([lines[0]] + body) + "\n"


def test_the_alloy_example_passes(reg):
    assert errors(reg, "surrogate-design", dataset_file=ALLOYS, feature_columns=FEATURES,
                  target_properties=["hardness_hv"], constraints={"Cr": {"min": 15, "max": 30}}) == []


def test_a_used_column_with_text_is_refused_naming_the_row(reg):
    path = write(reg, "alloys-text.csv", alloys(edit=lambda i, l: l.replace(",265.2,", ",n.d.,") if i == 0 else l))
    [e] = errors(reg, "surrogate-design", dataset_file=path, feature_columns=FEATURES,
                 target_properties=["hardness_hv"])
    assert e.path == "params.target_properties[0]" and "not numeric (data row 1: `n.d.`)" in e.message


def test_a_used_column_with_a_gap_is_refused(reg):
    path = write(reg, "alloys-gap.csv", alloys(edit=lambda i, l: l.replace(",265.2,", ",,") if i == 0 else l))
    [e] = errors(reg, "surrogate-design", dataset_file=path, feature_columns=FEATURES,
                 target_properties=["hardness_hv"])
    assert "1 missing value(s) (data rows [1])" in e.message


def test_too_few_rows_and_too_few_for_ten_folds_are_refused(reg):
    four = write(reg, "alloys-4.csv", alloys(rows=4))
    [e] = errors(reg, "surrogate-design", dataset_file=four, feature_columns=FEATURES, target_properties=["hardness_hv"])
    assert e.path == "params.dataset_file" and "has 4 data row(s)" in e.message
    eight = write(reg, "alloys-8.csv", alloys(rows=8))
    [e] = errors(reg, "surrogate-design", dataset_file=eight, feature_columns=FEATURES,
                 target_properties=["hardness_hv"], validation_strategy="10-fold")
    assert e.path == "params.validation_strategy" and e.choices == ["leave-one-out", "5-fold"]


def test_a_bound_outside_the_tables_range_leaves_an_empty_range(reg):
    # Fe runs from 2.34 to 51.33 in the table: a max of 1 leaves min (the table's 2.34) above it
    [e] = errors(reg, "surrogate-design", dataset_file=ALLOYS, feature_columns=FEATURES,
                 target_properties=["hardness_hv"], constraints={"Fe": {"max": 1}})
    assert e.path == "params.constraints.Fe" and "from 2.34 to 1" in e.message


def test_composition_bounds_that_cannot_sum_to_100_are_refused(reg):
    [e] = errors(reg, "surrogate-design", dataset_file=ALLOYS, feature_columns=FEATURES,
                 target_properties=["hardness_hv"], constraints={n: {"min": 30} for n in FEATURES})
    assert e.path == "params.constraints" and "minimums add up to 120" in e.message


def test_composition_bounds_too_tight_for_the_candidates_asked_are_refused(reg):
    tight = {"Fe": {"min": 24.9, "max": 25.1}, "Ni": {"min": 24.9, "max": 25.1}, "Co": {"min": 24.9, "max": 25.1},
             "Cr": {"min": 0, "max": 50}}
    [e] = errors(reg, "surrogate-design", dataset_file=ALLOYS, feature_columns=FEATURES,
                 target_properties=["hardness_hv"], constraints=tight, n_candidates=1000)
    assert e.path == "params.constraints" and "fewer than n_candidates 1000" in e.message


# ---- pump-probe -----------------------------------------------------------------------------------------------

FRAMES = "data/examples/pump-probe/frames.npz"
ROIS = {"signal_roi": [8, 16, 12, 20], "background_roi": [24, 32, 8, 24]}


def test_a_time_zero_before_every_delay_is_refused(reg):
    [e] = errors(reg, "pump-probe", data_file=FRAMES, time_zero_ps=-5, **ROIS)
    assert e.path == "params.time_zero_ps" and "delays run from -2 to 8 ps" in e.message
    assert errors(reg, "pump-probe", data_file=FRAMES, time_zero_ps=0, **ROIS) == []


def test_a_delay_that_is_not_a_number_is_refused(reg, tmp_path):
    with np.load(ROOT / FRAMES) as data:
        delays = data["delays_ps"].copy()
        delays[3] = np.nan
        np.savez(reg / "data" / "nan-delay.npz", frames=data["frames"], delays_ps=delays)
    [e] = errors(reg, "pump-probe", data_file="data/nan-delay.npz", **ROIS)
    assert e.path == "params.data_file" and "not a finite number" in e.message


# ---- pl-power-series ------------------------------------------------------------------------------------------

def test_a_table_without_a_numeric_row_is_refused(reg):
    path = write(reg, "no-numbers.csv", "power_uW,wavelength_nm,counts\n1,800,n.d.\n2,n.d.,5\n")
    [e] = errors(reg, "pl-power-series", spectra_file=path)
    assert e.path == "params.spectra_file" and "no spectrum to fit" in e.message
    assert errors(reg, "pl-power-series", spectra_file="data/examples/pl-campaign.csv") == []


# ---- variant-calling ------------------------------------------------------------------------------------------

READS = "data/examples/variant-calling/alpha.fq.gz"


def test_a_reference_with_a_repeated_sequence_name_is_refused(reg):
    path = write(reg, "dup.fa", ">chr1\nACGTACGT\n>chr1 again\nGGGGCCCC\n")
    [e] = errors(reg, "variant-calling", reference=path, samples=[{"name": "a", "reads": READS}])
    assert e.path == "params.reference" and "(`chr1`)" in e.message and "samtools" in e.message


def test_a_reference_with_ragged_lines_is_refused_naming_the_line(reg):
    path = write(reg, "ragged.fa", ">chr1\nACGTA\nAC\nACGTA\n")
    [e] = errors(reg, "variant-calling", reference=path, samples=[{"name": "a", "reads": READS}])
    assert "cannot be indexed" in e.message and "line 3" in e.message


def test_the_example_reference_passes(reg):
    assert errors(reg, "variant-calling", reference="data/examples/variant-calling/reference.fa",
                  samples=[{"name": "a", "reads": READS}]) == []
