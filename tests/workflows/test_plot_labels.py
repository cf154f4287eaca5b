"""Every curated plot reads on its own: labelled axes (with units where the data has them), a title, and a
legend wherever a panel draws more than one series.

One real `snakegate test` over every curated workflow's test cases (the session's: tests/curated_tests.py)
runs the workflows' own plot scripts with the plot probe on the path (tests/plot_probe/sitecustomize.py):
each figure, as it is saved, describes its panels (axis labels, titles, legend entries, how many data
series it draws). The same run still compares every output with the expected files, so the probe changes
no byte of any PNG. New plots are covered without a change here: every PNG a workflow.yaml declares must
have been seen being saved.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from curated_tests import CURATED, CuratedTestRun

ROOT = Path(__file__).resolve().parents[2]

# The units the test data has, as each plot must name them in its axis labels (or colour bar).
UNITS = {
    "classifier-benchmark": {"confusion.png": []},  # classes against classes: no unit
    "tabular-profile": {"profile.png": ["(mm)", "(g)"]},
    "pl-power-series": {"spectra.png": ["(nm)"], "powerlaw.png": ["(µW)", "(counts)"]},
    "surrogate-design": {"parity.png": ["(HV)", "(MPa)"], "candidates.png": ["(HV)", "(MPa)", "(% of the composition)"]},
    "pump-probe": {"curve.png": ["(ps)", "(counts per pixel per shot)"], "pvalue_hist.png": ["(pixel)"]},
    "variant-calling": {"depth.png": ["(kb)", "(x)"]},
    "variant-annotation": {},  # a VCF, a table and a JSON: no plots
}


def manifest(workflow: str) -> dict:
    return YAML(typ="safe").load((ROOT / "workflows" / workflow / "workflow.yaml").read_text())


def runnable(workflow: str) -> bool:
    """False when a tool the workflow declares is not installed (`snakegate test` then skips it, saying so)."""
    return all(shutil.which(tool["name"]) for tool in manifest(workflow).get("tools") or [])


def located(path: str) -> dict:
    """The workflow a saved file belongs to and its path in the run: `snakegate test` runs each case in
    <tmp>/snakegate-test-<id>-*/work."""
    (workflow,) = [w for w in CURATED if f"/snakegate-test-{w}-" in path] or [None]
    assert workflow, f"{path} was not written inside a `snakegate test` case folder"
    return {"workflow": workflow, "output": path.split(f"/snakegate-test-{workflow}-", 1)[1].split("/work/", 1)[1]}


@pytest.fixture(scope="module")
def probed(curated_test_run) -> tuple[CuratedTestRun, list[dict]]:
    """The session's `snakegate test` run (curated_tests.py), and [{workflow, path, suptitle, axes: [...]}] for
    every figure it saved (also when an output differs from its expected file, so a label test says what is
    missing)."""
    return curated_test_run, [{**r, **located(r["path"])} for r in curated_test_run.figures]


@pytest.fixture(scope="module")
def saved(probed) -> list[dict]:
    return probed[1]


def test_under_the_probe_every_output_still_matches_its_expected_file(probed):
    proc, _ = probed
    assert proc.returncode == proc.expected_returncode, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " passed, 0 failed" in proc.stdout


def panels(saved):
    """(where, panel) for every panel a reader looks at: shown, and not a colour bar."""
    for record in saved:
        for i, ax in enumerate(record["axes"]):
            if ax["shown"] and not ax["colorbar"]:
                yield f"{record['workflow']} {Path(record['path']).name} panel {i}", ax, record


def test_every_png_a_curated_workflow_declares_is_seen_being_saved_in_every_test_case(saved):
    expected, seen = Counter(), Counter((r["workflow"], r["output"]) for r in saved)
    for workflow in filter(runnable, CURATED):
        cases = list((ROOT / "workflows" / workflow / "test").glob("*/config.yaml"))
        for output in manifest(workflow)["outputs"].values():
            if output["type"] == "png":
                expected[(workflow, output["path"])] += len(cases)
    assert expected and seen == expected


def test_every_panel_has_an_x_label_a_y_label_and_a_title(saved):
    missing = []
    for where, ax, record in panels(saved):
        # a strip under a main panel shares its x axis, and one label under both is the convention
        x_label = ax["xlabel"] or any(record["axes"][j]["xlabel"] for j in ax["shares_x_with"])
        missing += [f"{where}: no {what}" for what, present in
                    (("x label", x_label), ("y label", ax["ylabel"]), ("title", ax["title"])) if not present]
    assert missing == [], "\n".join(missing)


def test_every_colour_bar_says_what_its_colours_mean(saved):
    bars = [(r, ax) for r in saved for ax in r["axes"] if ax["colorbar"]]
    assert bars, "pump-probe's p-value map has a colour bar"
    assert [Path(r["path"]).name for r, ax in bars if not (ax["ylabel"] or ax["xlabel"])] == []


def test_a_panel_drawing_more_than_one_series_has_a_legend_naming_them(saved):
    unexplained = [f"{where}: {ax['series']} series, legend {ax['legend']}" for where, ax, _ in panels(saved)
                   if ax["series"] > 1 and (len(ax["legend"]) < 2 or not all(e.strip() for e in ax["legend"]))]
    assert unexplained == [], "\n".join(unexplained)


def test_axes_name_the_units_of_the_test_data(saved):
    assert set(UNITS) == set(CURATED), "a new curated workflow: say which units its plots must show"
    unnamed = []
    for record in saved:
        labels = " ".join(ax["xlabel"] + " " + ax["ylabel"] for ax in record["axes"])
        name = Path(record["path"]).name
        unnamed += [f"{record['workflow']} {name}: no {unit}" for unit in UNITS[record["workflow"]][name]
                    if unit not in labels]
    assert unnamed == [], "\n".join(unnamed)
