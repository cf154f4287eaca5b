"""Tests for the pump-probe workflow: real Snakemake runs on the synthetic detector stack.

workflows/pump-probe/test/data/make_data.py: a 32 x 32 detector, 12 delays (-2 to
8 ps), 16 shots each, Poisson counts on a flat 100-count background and a
Gaussian pump-induced spot (centre row 12, column 16, sigma 4 px) that is zero
before time zero. The clean case's background ROI is far from the spot, the
contaminated one sits on its wing. Both cases run side by side, plus a run with
a time zero before every delay (no reference; the gate refuses it, so it runs with plain Snakemake)
that must stop with a clear message.
"""
import filecmp
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from registry_copies import ROOT, make_registry
from snakegate.gate.prove import gate
from snakegate.registry.workflows import Registry
from snakegate.registry.settings import load_settings

WF = ROOT / "workflows" / "pump-probe"
OUTPUTS = ["results/delay_curve.csv", "results/diagnostics.json", "results/curve.png", "results/pvalue_hist.png"]
SIGNAL_ROI = [8, 16, 12, 20]


def make_data():
    spec = importlib.util.spec_from_file_location("pump_probe_make_data", WF / "test" / "data" / "make_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def params_of(case: str, **overrides) -> dict:
    data = yaml.safe_load((WF / "test" / case / "config.yaml").read_text())
    data["params"] |= overrides
    result = gate(Registry.load(ROOT), data, load_settings(ROOT).with_data_roots(WF / "test"), check_dag=False)
    assert result.ok, result.errors
    return result.resolved_params


def start(params: dict, workdir: Path, *targets: str) -> subprocess.Popen:
    workdir.mkdir(parents=True)
    (workdir / "params.yaml").write_text(yaml.safe_dump(params))
    with open(workdir / "snakemake.out", "w") as out:  # a file, not a pipe: parallel runs never block
        return subprocess.Popen([sys.executable, "-m", "snakemake", "-s", str(WF / "Snakefile"), "--configfile",
                                 str(workdir / "params.yaml"), "-d", str(workdir), "--cores", "1", *targets],
                                stdout=out, stderr=subprocess.STDOUT)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("pump_probe")
    jobs = {
        "clean": start(params_of("clean"), base / "clean"),
        "contaminated": start(params_of("contaminated"), base / "contaminated"),
        # the gate refuses this time zero (tests/workflows/test_preflight_facts.py); run with plain Snakemake,
        # past the gate, the script still stops with its own message
        "no_reference": start(params_of("clean") | {"time_zero_ps": -5.0}, base / "no_reference",
                              "results/intermediate/pvalues.npz"),
    }
    for proc in jobs.values():
        proc.wait(timeout=600)
    for name in ("clean", "contaminated"):
        assert jobs[name].returncode == 0, (base / name / "snakemake.out").read_text()[-3000:]
    return {name: base / name for name in jobs} | {"no_reference_rc": jobs["no_reference"].returncode}


def diagnostics(workdir: Path) -> dict:
    return json.loads((workdir / "results" / "diagnostics.json").read_text())


def curve(workdir: Path) -> pd.DataFrame:
    return pd.read_csv(workdir / "results" / "delay_curve.csv")


def test_clean_background_gets_verdict_clean_with_mean_p_near_one_half(runs):
    diag = diagnostics(runs["clean"])
    bg = diag["background"]
    assert diag["verdict"] == "clean", diag["message"]
    assert 0.45 <= bg["mean_p"] <= 0.55 and bg["ks_pvalue"] > 0.01 and abs(bg["z_score"]) < 2
    assert diag["message"].startswith("clean: the background ROI [24, 32, 8, 24] behaves like pure background")


def test_background_on_the_signal_wing_is_contaminated_and_the_message_says_where_to_move_it(runs):
    diag = diagnostics(runs["contaminated"])
    bg = diag["background"]
    assert diag["verdict"] == "contaminated"
    assert bg["mean_p"] < 0.4 and bg["ks_pvalue"] < 1e-6 and bg["z_score"] < -3
    # The responsive pixels are the rows next to the signal ROI, where the spot's wing reaches.
    assert bg["responsive_bbox_rows_cols"][0] == 16 and bg["responsive_bbox_rows_cols"][1] <= 19
    message = diag["message"]
    assert "rows 16-" in message and "Move the background ROI away from the signal ROI [8, 16, 12, 20]" in message
    assert f"background_roi: {bg['suggested_background_roi']}" in message


def test_the_suggested_background_roi_passes_the_gate_and_leaves_the_responsive_rows(runs):
    suggested = diagnostics(runs["contaminated"])["background"]["suggested_background_roi"]
    assert suggested[0] > diagnostics(runs["contaminated"])["background"]["responsive_bbox_rows_cols"][1]
    data = yaml.safe_load((WF / "examples" / "contaminated-background.yaml").read_text())
    data["params"]["background_roi"] = suggested
    assert gate(Registry.load(ROOT), data, load_settings(ROOT), check_dag=False).ok


def test_clean_delay_curve_recovers_the_planted_pump_response(runs):
    m = make_data()
    spot = m.spot()
    r0, r1, c0, c1 = SIGNAL_ROI
    truth = m.amplitude(m.DELAYS_PS) * spot[r0:r1, c0:c1].mean()  # the background ROI sees ~0 of the spot
    table = curve(runs["clean"])
    assert np.allclose(table["delay_ps"], m.DELAYS_PS)
    inside = (table["change_ci95_low"] - 0.5 <= truth) & (truth <= table["change_ci95_high"] + 0.5)
    assert inside.sum() >= 11, table[["delay_ps", "change_from_reference", "change_ci95_low", "change_ci95_high"]]
    assert (np.abs(table["change_from_reference"] - truth) < 4 * table["change_se"] + 0.5).all()


def test_signal_is_found_after_time_zero_and_never_before(runs):
    sig = diagnostics(runs["clean"])["signal"]
    assert sig["n_reference_delays"] == 3 and sig["time_zero_ps"] == 0.0
    assert all(d > 0 for d in sig["delays_with_signal_ps"])
    assert {0.5, 1.0, 1.5, 2.0, 3.0} <= set(sig["delays_with_signal_ps"])
    assert sig["peak_delay_ps"] in (1.0, 1.5)


def test_a_contaminated_background_biases_the_curve_low(runs):
    clean, dirty = diagnostics(runs["clean"])["signal"], diagnostics(runs["contaminated"])["signal"]
    assert dirty["peak_change_from_reference"] < clean["peak_change_ci95"][0]


def test_outputs_match_the_expected_files_byte_for_byte(runs):
    for case in ("clean", "contaminated"):
        for rel in OUTPUTS:
            assert filecmp.cmp(runs[case] / rel, WF / "test" / case / "expected" / rel, shallow=False), (case, rel)


def test_data_without_a_pre_pump_reference_stops_with_a_clear_message(runs):
    assert runs["no_reference_rc"] != 0
    log = (runs["no_reference"] / "logs" / "pvalues.log").read_text()
    assert "no delay before time_zero_ps = -5 ps" in log and "record some negative delays" in log


# ---- the preflight, through the gate (nothing runs) --------------------------------------------

def gate_errors(tmp_path: Path | None = None, frames_npz: dict | None = None, **params) -> list:
    root = ROOT
    data_file = "data/examples/pump-probe/frames.npz"
    if frames_npz is not None:
        root = make_registry(tmp_path / "reg")
        shutil.copytree(WF, root / "workflows" / "pump-probe", ignore=shutil.ignore_patterns("test"))
        np.savez(root / "data" / "odd.npz", **frames_npz)
        data_file = "data/odd.npz"
    invocation = {"workflow": "pump-probe", "params": {"data_file": data_file, "signal_roi": SIGNAL_ROI,
                                                       "background_roi": [24, 32, 8, 24]} | params}
    result = gate(Registry.load(root), invocation, load_settings(root), check_dag=False)
    return [] if result.ok else result.errors


def test_roi_outside_the_detector_is_refused_naming_its_size():
    errors = gate_errors(signal_roi=[8, 16, 12, 40])
    assert [(e.path, e.code) for e in errors] == [("params.signal_roi", "preflight")]
    assert "32 rows (0-31) and 32 columns (0-31)" in errors[0].message


def test_overlapping_rois_are_refused_naming_the_shared_pixels():
    errors = gate_errors(background_roi=[10, 20, 8, 24])
    assert [(e.path, e.code) for e in errors] == [("params.background_roi", "preflight")]
    assert "rows 10-15, columns 12-19" in errors[0].message


@pytest.mark.parametrize("roi, says", [([16, 16, 8, 24], "is empty"), ([20, 18, 8, 24], "is empty"),
                                       ([24, 27, 8, 12], "has 12 pixels")])
def test_empty_or_tiny_background_roi_is_refused(roi, says):
    errors = gate_errors(background_roi=roi)
    assert [(e.path, e.code) for e in errors] == [("params.background_roi", "preflight")]
    assert says in errors[0].message


@pytest.mark.parametrize("arrays, says", [
    ({"images": np.zeros((3, 2, 8, 8))}, "no array named frames or delays_ps"),
    ({"frames": np.zeros((3, 8, 8)), "delays_ps": np.arange(3.0)}, "expected 4 axes"),
    ({"frames": np.zeros((4, 2, 32, 32)), "delays_ps": np.arange(3.0)}, "one delay per first-axis entry"),
    ({"frames": np.zeros((4, 1, 32, 32)), "delays_ps": np.arange(4.0)}, "at least 3 delays and 2 shots"),
    ({"frames": np.zeros((3, 2, 32, 32), dtype=bool), "delays_ps": np.arange(3.0)}, "dtype bool"),
])
def test_an_archive_without_the_right_arrays_is_refused_before_any_job(tmp_path, arrays, says):
    errors = gate_errors(tmp_path, frames_npz=arrays)
    assert errors and all(e.code == "preflight" and e.path == "params.data_file" for e in errors), errors
    assert any(says in e.message for e in errors), [e.message for e in errors]
