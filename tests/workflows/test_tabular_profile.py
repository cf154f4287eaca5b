"""Tests for the tabular-profile workflow, run standalone with the real Snakemake.

The statistics in profile.json are checked against pandas computed here, from the
raw input, independently of the workflow's scripts.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "workflows" / "tabular-profile"
SNAKEFILE = WORKFLOW / "Snakefile"
SMALL = WORKFLOW / "test" / "data" / "penguins-small.csv"
OUTPUTS = ["results/cleaned.csv", "results/profile.json", "results/profile.png"]
DEFAULTS = {"missing_strategy": "remove", "drop_duplicates": True}
FILL_MEAN_COLUMNS = ["species", "bill_depth_mm", "body_mass_g", "sex"]
NUMERIC_STATS = {"count": "count", "mean": "mean", "std": "std", "min": "min",
                 "25%": "25%", "50%": "50%", "75%": "75%", "max": "max"}


def snakemake(workdir, params, *extra):
    """Run the workflow standalone on `params` (a params-only mapping) into workdir."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    configfile = workdir.parent / f"{workdir.name}-params.json"
    configfile.write_text(json.dumps({**DEFAULTS, **params}))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(SNAKEFILE), "--configfile", str(configfile),
         "-d", str(workdir), "--cores", "2", *extra],
        capture_output=True, text=True, env=env, cwd=workdir, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def profile_of(workdir):
    return json.loads((Path(workdir) / "results" / "profile.json").read_text())


def expected_clean(path, missing_strategy, drop_duplicates, columns=None):
    """The cleaned table as the issue defines it, written with plain pandas."""
    raw = pd.read_csv(path)
    table = raw[columns] if columns else raw
    if drop_duplicates:
        table = table.drop_duplicates()
    if missing_strategy != "remove":
        numeric = table.select_dtypes("number").columns
        fill = table[numeric].mean() if missing_strategy == "fill_mean" else table[numeric].median()
        table = table.fillna(fill)
    return table.dropna()


def assert_profile_matches(profile, table, rows_in):
    assert profile["rows_in"] == rows_in
    assert profile["rows_out"] == len(table)
    assert profile["column_order"] == list(table.columns)
    assert sorted(profile["columns"]) == sorted(table.columns)
    numeric = table.select_dtypes("number")
    described = numeric.describe()
    for name in numeric.columns:
        got = profile["columns"][name]
        assert got["kind"] == "numeric" and got["missing"] == 0
        for key, row in NUMERIC_STATS.items():
            assert got[key] == pytest.approx(float(described.loc[row, name]), rel=1e-8, abs=1e-12), (name, key)
    for name in table.columns.difference(numeric.columns):
        got = profile["columns"][name]
        counts = table[name].value_counts()
        assert got["kind"] == "categorical" and got["missing"] == 0
        assert got["count"] == int(counts.sum())
        assert got["unique"] == len(counts)
        assert got["freq"] == int(counts.max())
        assert got["top"] == min(counts[counts == counts.max()].index)


@pytest.fixture(scope="module")
def default_runs(tmp_path_factory):
    """Two runs with the defaults on the small test table, in two directories."""
    base = tmp_path_factory.mktemp("tabular_default")
    for name in ("a", "b"):
        snakemake(base / name, {"dataset_file": str(SMALL)})
    return base / "a", base / "b"


@pytest.fixture(scope="module")
def fill_mean_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("tabular_fill_mean") / "run"
    snakemake(workdir, {"dataset_file": str(SMALL), "missing_strategy": "fill_mean",
                        "drop_duplicates": False, "columns": FILL_MEAN_COLUMNS})
    return workdir


def test_all_declared_outputs_exist_and_png_is_a_png(default_runs):
    for rel in OUTPUTS:
        assert (default_runs[0] / rel).stat().st_size > 0, rel
    assert (default_runs[0] / "results/profile.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_outputs_are_byte_identical_across_two_runs(default_runs):
    a, b = default_runs
    for rel in OUTPUTS + ["results/loaded.csv"]:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_default_profile_matches_pandas_after_dropping_duplicates_and_incomplete_rows(default_runs):
    raw = pd.read_csv(SMALL)
    assert raw.isna().any(axis=None) and raw.duplicated().any()  # the test data exercises both
    table = expected_clean(SMALL, "remove", True)
    assert_profile_matches(profile_of(default_runs[0]), table, rows_in=len(raw))
    cleaned = pd.read_csv(default_runs[0] / "results/cleaned.csv")
    assert not cleaned.duplicated().any() and not cleaned.isna().any(axis=None)


def test_fill_mean_fills_numeric_gaps_keeps_duplicates_and_selects_columns(fill_mean_run):
    raw = pd.read_csv(SMALL)
    subset = raw[FILL_MEAN_COLUMNS]
    table = expected_clean(SMALL, "fill_mean", False, FILL_MEAN_COLUMNS)
    profile = profile_of(fill_mean_run)
    assert_profile_matches(profile, table, rows_in=len(raw))
    # Only rows missing a categorical value are lost; numeric gaps are filled.
    categorical = subset.select_dtypes(exclude="number").columns
    assert profile["rows_out"] == len(raw) - int(subset[categorical].isna().any(axis=1).sum())
    assert subset.select_dtypes("number").isna().any(axis=None)
    cleaned = pd.read_csv(fill_mean_run / "results/cleaned.csv")
    assert list(cleaned.columns) == FILL_MEAN_COLUMNS
    assert cleaned.duplicated().sum() == subset.dropna(subset=categorical).duplicated().sum() > 0


def test_drop_duplicates_false_keeps_duplicate_rows_true_drops_them(default_runs, tmp_path):
    snakemake(tmp_path / "keep", {"dataset_file": str(SMALL), "drop_duplicates": False})
    kept = pd.read_csv(tmp_path / "keep/results/cleaned.csv")
    dropped = pd.read_csv(default_runs[0] / "results/cleaned.csv")
    raw = pd.read_csv(SMALL)
    assert kept.duplicated().sum() == raw.dropna().duplicated().sum() > 0
    assert dropped.duplicated().sum() == 0
    assert profile_of(tmp_path / "keep")["rows_out"] == len(raw.dropna())
    assert len(kept) - len(dropped) == raw.dropna().duplicated().sum()


def test_changing_only_missing_strategy_reruns_clean_profile_plot_but_not_load(default_runs, tmp_path):
    # copytree keeps mtimes and the .snakemake metadata, i.e. a finished run.
    workdir = tmp_path / "run"
    shutil.copytree(default_runs[0], workdir)
    params = {"dataset_file": str(SMALL), "missing_strategy": "fill_median"}
    summary = snakemake(workdir, params, "--summary").stdout.splitlines()
    header = next(i for i, line in enumerate(summary) if line.startswith("output_file\t"))
    cols = summary[header].split("\t")
    plan = {}
    for line in summary[header + 1:]:
        fields = dict(zip(cols, line.split("\t")))
        plan[fields["rule"]] = fields["plan"]
    assert plan == {"load": "no update", "clean": "update pending",
                    "profile": "update pending", "plot": "update pending"}

    before = {p: (workdir / p).stat().st_mtime_ns for p in OUTPUTS + ["results/loaded.csv"]}
    proc = snakemake(workdir, params)
    after = {p: (workdir / p).stat().st_mtime_ns for p in before}
    assert after["results/loaded.csv"] == before["results/loaded.csv"]
    assert all(after[p] != before[p] for p in OUTPUTS)
    assert "rule load:" not in proc.stderr and "rule clean:" in proc.stderr
    table = expected_clean(SMALL, "fill_median", True)
    assert_profile_matches(profile_of(workdir), table, rows_in=len(pd.read_csv(SMALL)))
    assert profile_of(workdir)["rows_out"] > profile_of(default_runs[0])["rows_out"]


@pytest.mark.parametrize("case", ["basic", "fill-mean"])
def test_committed_expected_outputs_match_a_fresh_run(case, default_runs, fill_mean_run):
    # The fixture runs use exactly the params of the committed test cases.
    workdir, params = {
        "basic": (default_runs[0], {}),
        "fill-mean": (fill_mean_run, {"missing_strategy": "fill_mean", "drop_duplicates": False,
                                      "columns": FILL_MEAN_COLUMNS}),
    }[case]
    config = YAML(typ="safe").load((WORKFLOW / "test" / case / "config.yaml").read_text())
    assert config["workflow"] == "tabular-profile"
    assert config["params"] == {"dataset_file": str(SMALL.relative_to(ROOT)), **params}
    for rel in ("results/cleaned.csv", "results/profile.json"):
        expected = WORKFLOW / "test" / case / "expected" / rel
        assert (workdir / rel).read_bytes() == expected.read_bytes(), (case, rel)
