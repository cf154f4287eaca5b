"""Plots a scientist keeps: tabular-profile's chart per column and surrogate-design's candidates plot, from
real standalone Snakemake runs on small tables. What each panel is drawn as is read from the plot rule's
log (the script says per column how it binned it); the PNGs must decode and be byte-identical on a rerun.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

TABLE = """\
station,year,count,depth_m,visited,kind
A,2019,3,1.25,true,reef
B,2020,41,2.5,false,reef
C,2020,7,3.75,true,sand
D,2021,12,0.5,true,reef
E,2023,18,1.0,false,kelp
F,2023,5,4.5,true,sand
"""


def standalone(workflow: str, params: dict, workdir: Path) -> subprocess.CompletedProcess:
    config = workdir.parent / f"{workdir.name}.json"
    config.write_text(json.dumps(params))
    return subprocess.run([sys.executable, "-m", "snakemake", "-s", str(ROOT / "workflows" / workflow / "Snakefile"),
                           "--configfile", str(config), "-d", str(workdir), "--cores", "1"],
                          capture_output=True, text=True, env=ENV, timeout=600)


@pytest.fixture(scope="module")
def profiled(tmp_path_factory) -> list[Path]:
    base = tmp_path_factory.mktemp("plots")
    table = base / "stations.csv"
    table.write_text(TABLE)
    out = []
    for name in ("first", "second"):
        proc = standalone("tabular-profile", {"dataset_file": str(table), "missing_strategy": "remove",
                                              "drop_duplicates": True}, base / name)
        assert proc.returncode == 0, proc.stderr[-3000:]
        out.append(base / name)
    return out


def test_integer_columns_are_binned_on_whole_numbers(profiled):
    log = (profiled[0] / "logs" / "plot.log").read_text()
    assert "year: integer, one bar per whole number from 2019 to 2023" in log
    assert "count: integer, 20 bins of 2 whole numbers, edges at 2.5, 4.5, 6.5" in log
    assert "depth_m: numeric, 20 equal bins" in log


def test_categorical_columns_get_bar_charts(profiled):
    log = (profiled[0] / "logs" / "plot.log").read_text()
    assert "station: categorical, a bar chart of 6 values" in log
    assert "visited: categorical, a bar chart of 2 values" in log
    assert "kind: categorical, a bar chart of 3 values" in log
    assert "plotted 6 columns: 2 integer, 1 numeric, 3 categorical" in log


def test_the_profile_plot_decodes_and_is_byte_identical_on_a_rerun(profiled):
    first, second = (p / "results" / "profile.png" for p in profiled)
    with Image.open(first) as image:
        assert image.format == "PNG" and image.width > 800 and image.height > 500
    assert first.read_bytes() == second.read_bytes()


def test_surrogate_design_plots_candidates_against_training_rows_and_bounds(tmp_path):
    params = {"dataset_file": str(ROOT / "workflows/surrogate-design/test/data/alloys.csv"),
              "feature_columns": ["Fe", "Ni", "Co", "Cr"], "target_properties": ["hardness_hv"],
              "validation_strategy": "5-fold", "model": "random_forest",
              "constraints": {"Co": {"max": 10}}, "objective": {"hardness_hv": "maximize"},
              "n_candidates": 12, "seed": 3}
    proc = standalone("surrogate-design", params, tmp_path / "run")
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = (tmp_path / "run" / "logs" / "plot_candidates.log").read_text()
    assert "plotted 12 candidates against 80 training rows, 4 features, 1 targets; constraint bounds: Co -..10" in log
    with Image.open(tmp_path / "run" / "results" / "candidates.png") as image:
        assert image.format == "PNG" and image.width >= 800
