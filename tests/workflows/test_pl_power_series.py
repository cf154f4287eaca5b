"""Tests for the pl-power-series workflow: real Snakemake runs on the synthetic PL campaign.

The campaign (workflows/pl-power-series/test/data/make_data.py) has known power-law
exponents b = 1.00 below 10 uW and b = 0.60 above, Poisson noise and cosmic-ray spikes.
Each run config is turned into a standalone params file the way the gate would:
schema defaults filled in, artifact paths resolved against the registry root.
"""
import filecmp
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WF = ROOT / "workflows" / "pl-power-series"
OUTPUTS = ["results/fits.csv", "results/powerlaw.json", "results/spectra.png", "results/powerlaw.png"]
B_LOW, B_HIGH = 1.00, 0.60


def params_from(run_config: Path, **overrides) -> dict:
    """Params of a run config with schema defaults filled and artifact paths made absolute."""
    schema = json.loads((WF / "schema.json").read_text())
    params = {k: v["default"] for k, v in schema["properties"].items() if "default" in v}
    params |= yaml.safe_load(run_config.read_text())["params"]
    params |= overrides
    for key, prop in schema["properties"].items():
        if "x-artifact" in prop and key in params:
            params[key] = str((ROOT / params[key]).resolve())
    return params


def _start(params: dict, workdir: Path) -> subprocess.Popen:
    workdir.mkdir(parents=True, exist_ok=True)
    cfg = workdir / "params.yaml"
    cfg.write_text(yaml.safe_dump(params, sort_keys=True))
    # Output goes to a file, not a pipe, so parallel runs never block on a full pipe.
    with open(workdir / "snakemake.out", "w") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "snakemake", "-s", str(WF / "Snakefile"), "--configfile", str(cfg),
             "-d", str(workdir), "--cores", "1"],
            stdout=out, stderr=subprocess.STDOUT)


def run_all(*jobs: tuple[dict, Path]) -> None:
    """Run several standalone Snakemake invocations side by side (each single-core)."""
    procs = [(_start(params, workdir), workdir) for params, workdir in jobs]
    for proc, workdir in procs:
        proc.wait(timeout=300)
        assert proc.returncode == 0, (workdir / "snakemake.out").read_text()[-3000:]


def powerlaw(workdir: Path) -> dict:
    return json.loads((workdir / "results" / "powerlaw.json").read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The test/basic case twice (two folders) and the micrometre example, run in parallel."""
    base = tmp_path_factory.mktemp("pl_power_series")
    jobs = {
        "basic_a": params_from(WF / "test" / "basic" / "config.yaml"),
        "basic_b": params_from(WF / "test" / "basic" / "config.yaml"),
        "um": params_from(WF / "examples" / "campaign-um-columns.yaml"),
    }
    run_all(*[(params, base / name) for name, params in jobs.items()])
    return {name: base / name for name in jobs} | {"basic_params": jobs["basic_a"]}


@pytest.fixture(scope="module")
def basic(runs):
    return runs["basic_params"], (runs["basic_a"], runs["basic_b"])


def test_recovered_exponents_within_0_02_of_truth(basic):
    _, (out, _) = basic
    segs = {s["name"]: s for s in powerlaw(out)["segments"]}
    assert set(segs) == {"below_boundary", "above_boundary"}
    assert abs(segs["below_boundary"]["b"] - B_LOW) < 0.02
    assert abs(segs["above_boundary"]["b"] - B_HIGH) < 0.02
    # 21 log-spaced powers from 0.1 to 100 uW: 14 below 10 uW, 7 above.
    assert (segs["below_boundary"]["n_points"], segs["above_boundary"]["n_points"]) == (14, 7)
    for s in segs.values():
        assert s["b_se"] > 0 and s["a_se"] > 0 and s["r2"] > 0.999


def test_every_spectrum_fit_is_accepted_on_clean_data(basic):
    _, (out, _) = basic
    fits = pd.read_csv(out / "results" / "fits.csv")
    assert len(fits) == 21
    assert fits["accepted"].all()
    assert (fits["r2"] >= 0.85).all()
    assert fits["center_nm"].between(849.0, 852.0).all()


def test_despiking_finds_every_injected_cosmic_ray(basic):
    _, (out, _) = basic
    spec = importlib.util.spec_from_file_location("pl_make_data", WF / "test" / "data" / "make_data.py")
    make_data = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_data)
    fits = pd.read_csv(out / "results" / "fits.csv")
    injected = pd.Series([p for p, _, _ in make_data.SPIKES]).value_counts()
    for power_index, count in injected.items():
        assert fits["n_spikes"].iloc[power_index] >= count
    # The spike sitting on the weakest peak's maximum must not reach the reported height.
    weakest = fits.iloc[0]
    assert weakest["height"] < 1.1 * make_data.HEIGHT_AT_MIN_POWER


def test_outputs_byte_identical_across_two_runs(basic):
    _, (a, b) = basic
    for rel in OUTPUTS:
        assert filecmp.cmp(a / rel, b / rel, shallow=False), rel


def test_expected_outputs_match_a_fresh_run(basic):
    _, (out, _) = basic
    expected = WF / "test" / "basic" / "expected" / "results"
    got, want = pd.read_csv(out / "results" / "fits.csv"), pd.read_csv(expected / "fits.csv")
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-6)
    got, want = powerlaw(out), json.loads((expected / "powerlaw.json").read_text())
    for s_got, s_want in zip(got["segments"], want["segments"], strict=True):
        for key in ("a", "b", "b_se", "r2", "n_points"):
            assert s_got[key] == pytest.approx(s_want[key], rel=1e-6), key
    for rel in ["results/spectra.png", "results/powerlaw.png"]:
        assert (expected.parent / rel).read_bytes()[:8] == bytes.fromhex("89504e470d0a1a0a"), rel


def test_micrometre_example_gives_the_same_exponents_as_nanometre_example(runs):
    # The nm example holds the test campaign byte for byte, so the test/basic run is its run.
    nm_example = params_from(WF / "examples" / "campaign-nm.yaml")
    assert Path(nm_example["spectra_file"]).read_bytes() == (WF / "test" / "data" / "pl_campaign.csv").read_bytes()
    nm_dir, um_dir = runs["basic_a"], runs["um"]
    nm, um = powerlaw(nm_dir)["segments"], powerlaw(um_dir)["segments"]
    assert [s["name"] for s in nm] == [s["name"] for s in um]
    for s_nm, s_um in zip(nm, um):
        assert s_um["n_points"] == s_nm["n_points"]
        assert s_um["b"] == pytest.approx(s_nm["b"], abs=1e-6)
        assert s_um["a"] == pytest.approx(s_nm["a"], rel=1e-6)
    fits_nm = pd.read_csv(nm_dir / "results" / "fits.csv")
    fits_um = pd.read_csv(um_dir / "results" / "fits.csv")
    assert fits_um["center_nm"].to_numpy() == pytest.approx(fits_nm["center_nm"].to_numpy(), abs=1e-6)


def test_null_boundary_gives_one_segment_and_reruns_only_the_power_law(basic, tmp_path):
    params, (out, _) = basic
    work = tmp_path / "single"
    # Start from a finished run so Snakemake can decide what the new boundary invalidates.
    subprocess.run(["cp", "-a", str(out), str(work)], check=True)
    fits_mtime = (work / "results" / "fits.csv").stat().st_mtime_ns
    spectra_mtime = (work / "results" / "spectra.png").stat().st_mtime_ns
    run_all((params | {"saturation_boundary": None}, work))
    law = powerlaw(work)
    assert law["saturation_boundary_uW"] is None
    assert len(law["segments"]) == 1
    (seg,) = law["segments"]
    assert seg["name"] == "all" and seg["n_points"] == 21
    # A single line through a broken power law has a slope between the two exponents.
    assert B_HIGH < seg["b"] < B_LOW
    assert (work / "results" / "fits.csv").stat().st_mtime_ns == fits_mtime
    assert (work / "results" / "spectra.png").stat().st_mtime_ns == spectra_mtime
