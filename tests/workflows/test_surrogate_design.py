"""Tests for the surrogate-design workflow: real Snakemake runs on the synthetic alloy table.

The table (workflows/surrogate-design/test/data/make_data.py) holds 80 Fe-Ni-Co-Cr
alloys summing to 100 at.% whose hardness and yield strength are smooth functions
of composition plus small noise, so a working Gaussian process must reach a high
cross-validated R^2, and candidates must respect the constraints and the sum.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "workflows" / "surrogate-design"
TABLE = WORKFLOW / "test" / "data" / "alloys.csv"

GP_R2_FLOOR = 0.9  # cross-validated R^2 every target must reach with a GP on the test table
FEATURES = ["Fe", "Ni", "Co", "Cr"]
TARGETS = ["hardness_hv", "yield_strength_mpa"]
CONSTRAINTS = {"Cr": {"min": 15, "max": 30}, "Ni": {"min": 10, "max": 40}}
OUTPUTS = ["results/cv_metrics.json", "results/candidates.csv", "results/parity.png", "results/candidates.png"]
INTERMEDIATES = ["results/table.csv", "results/cv_predictions.csv", "results/model.pkl"]
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def make_params(**overrides):
    params = {
        "dataset_file": str(TABLE),
        "feature_columns": FEATURES,
        "target_properties": TARGETS,
        "validation_strategy": "5-fold",
        "model": "gaussian_process",
        "constraints": CONSTRAINTS,
        "objective": {},
        "n_candidates": 50,
        "seed": 0,
    }
    params.update(overrides)
    return params


def snakemake_cmd(workdir, params, *extra):
    """The standalone snakemake command; the params-only config file sits beside the workdir."""
    config = workdir.parent / f"{workdir.name}-{params['validation_strategy']}.json"
    config.write_text(json.dumps(params))
    return [sys.executable, "-m", "snakemake", "-s", str(WORKFLOW / "Snakefile"),
            "--configfile", str(config), "-d", str(workdir), "--cores", "1", *extra]


def run(workdir, params, *extra):
    return subprocess.run(snakemake_cmd(workdir, params, *extra), capture_output=True, text=True,
                          env=ENV, timeout=600)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two independent runs of the same invocation (concurrently, one core each)."""
    base = tmp_path_factory.mktemp("surrogate-design")
    dirs = [base / "run1", base / "run2"]
    procs = [subprocess.Popen(snakemake_cmd(d, make_params()), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, env=ENV) for d in dirs]
    for proc in procs:
        out, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0, out[-4000:]
    return dirs


def test_gp_5fold_cross_validated_r2_at_least_0_9_for_every_target(runs):
    metrics = json.loads((runs[0] / "results/cv_metrics.json").read_text())
    assert metrics["model"] == "gaussian_process"
    assert metrics["validation_strategy"] == "5-fold" and metrics["n_folds"] == 5
    assert metrics["n_rows"] == 80
    for target in TARGETS:
        assert metrics["targets"][target]["r2"] >= GP_R2_FLOOR, metrics["targets"][target]
        assert metrics["targets"][target]["rmse"] > 0
    preds = pd.read_csv(runs[0] / "results/cv_predictions.csv")
    assert len(preds) == 80 * len(TARGETS)  # one out-of-fold prediction per row and target


def test_candidates_satisfy_constraints_and_sum_to_100(runs):
    cands = pd.read_csv(runs[0] / "results/candidates.csv")
    table = pd.read_csv(TABLE)
    assert len(cands) == 50
    np.testing.assert_allclose(cands[FEATURES].sum(axis=1), 100.0, atol=1e-6 * 100)
    for col, bounds in CONSTRAINTS.items():
        assert (cands[col] >= bounds["min"] - 1e-9).all(), col
        assert (cands[col] <= bounds["max"] + 1e-9).all(), col
    for col in ("Fe", "Co"):  # unconstrained features stay inside the range seen in the table
        assert cands[col].between(table[col].min() - 1e-9, table[col].max() + 1e-9).all(), col
    for target in TARGETS:
        assert (cands[f"{target}_std"] > 0).all()


def test_candidates_sorted_by_summed_standardized_objective(runs):
    cands = pd.read_csv(runs[0] / "results/candidates.csv")
    table = pd.read_csv(TABLE)
    assert list(cands["rank"]) == list(range(1, len(cands) + 1))
    assert (np.diff(cands["score"]) <= 0).all()
    # objective {} maximizes both targets: score = sum of (prediction - mean) / std.
    expected = sum((cands[f"{t}_predicted"] - table[t].mean()) / table[t].std(ddof=0)
                   for t in TARGETS)
    np.testing.assert_allclose(cands["score"], expected, rtol=1e-6, atol=1e-6)
    # The best candidates should beat the average measured alloy on both properties.
    for t in TARGETS:
        assert cands[f"{t}_predicted"].iloc[0] > table[t].mean()


def test_outputs_byte_identical_across_two_runs(runs):
    for rel in OUTPUTS + INTERMEDIATES:
        assert (runs[0] / rel).read_bytes() == (runs[1] / rel).read_bytes(), rel


def test_changing_only_validation_strategy_reruns_only_cross_validate_and_parity(runs, tmp_path):
    # Work on a copy (mtimes preserved) so the other tests' directories stay untouched.
    workdir = tmp_path / "rerun"
    shutil.copytree(runs[1], workdir)
    loo = make_params(validation_strategy="leave-one-out")

    dry = run(workdir, loo, "-n")
    assert dry.returncode == 0, dry.stderr[-4000:]
    text = dry.stdout + dry.stderr
    stats = text.split("Job stats:")[1].split("total")[0]
    jobs = {line.split()[0] for line in stats.splitlines()[3:] if line.strip()}
    assert jobs == {"cross_validate", "parity", "all"}, text[-4000:]

    untouched = ["results/table.csv", "results/model.pkl", "results/candidates.csv"]
    before = {rel: (workdir / rel).stat().st_mtime_ns for rel in untouched}
    real = run(workdir, loo)
    assert real.returncode == 0, real.stderr[-4000:]
    assert {rel: (workdir / rel).stat().st_mtime_ns for rel in untouched} == before
    metrics = json.loads((workdir / "results/cv_metrics.json").read_text())
    assert metrics["validation_strategy"] == "leave-one-out" and metrics["n_folds"] == 80
    for target in TARGETS:
        assert metrics["targets"][target]["r2"] >= GP_R2_FLOOR
    assert (workdir / "results/parity.png").read_bytes() != (runs[1] / "results/parity.png").read_bytes()


def test_target_also_listed_as_feature_stops_load_with_clear_error(tmp_path):
    bad = make_params(feature_columns=FEATURES + ["hardness_hv"])
    result = run(tmp_path / "bad", bad)
    assert result.returncode != 0
    assert "a target may not also be a feature" in result.stdout + result.stderr
    assert not (tmp_path / "bad" / "results" / "table.csv").exists()
