"""Real runs of the curated science workflows, made once per pytest session, for the tests of what a finished
run says to the conversation (tests/agent/: the summary, the recovery, the follow-ups, the assessment).

One throw-away registry with surrogate-design and pump-probe copied from the checkout, their demo data,
and `leaky-table`, a workflow whose one output table holds its x-sensitive token, a provider-shaped key and
an absolute path outside the registry (outputs are never rewritten, so whatever reads them must mask).
The runs, by the real runner and Snakemake:
- `alloys`: surrogate-design on the alloy table (one target, ten candidates): succeeds, verdict pass;
- `contaminated`: pump-probe with the background ROI on the signal's wing: succeeds, verdict fail, and its
  diagnostics suggest another ROI;
- `leaky`: leaky-table with LEAKY_TOKEN.
tests/agent/conftest.py imports the fixture, so every test module there shares the same runs.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from registry_copies import REPO, TOKEN_PARAM, make_registry, note_workflow

LEAKY_TOKEN = "tok-leaky-7e3b9a1f"
PROVIDER_KEY = "sk-proj-" + "Q" * 32
OUTSIDE_PATH = "/etc/hostname"
ALLOY_PARAMS = {"dataset_file": "data/examples/surrogate-alloys.csv", "feature_columns": ["Fe", "Ni", "Co", "Cr"],
                "target_properties": ["hardness_hv"], "n_candidates": 10}
WING = [16, 24, 8, 24]               # the background ROI on the signal's wing: contaminated
SUGGESTED = [22, 30, 8, 24]          # what the diagnostics of that run suggest instead
PUMP_PROBE_PARAMS = {"data_file": "data/pp/frames.npz", "signal_roi": [8, 16, 12, 20], "background_roi": WING,
                     "n_bootstrap": 100, "seed": 0}

LEAKY = note_workflow("leaky-table", "Leaky table", "Writes a table holding its own token, for masking tests.",
                      {"token": TOKEN_PARAM})
LEAKY["workflow.yaml"] = LEAKY["workflow.yaml"].replace(
    "note: {output: {note: text}}", "table: {output: {table: csv-table}}").replace(
    "note: {path: results/note.txt, type: text, description: The note.}",
    "table: {path: results/table.csv, type: csv-table, description: Names and values., columns: [name, value]}")
LEAKY["Snakefile"] = f"""\
    rule all:
        input:
            "results/table.csv",


    rule table:
        output:
            table="results/table.csv",
        params:
            token=config["token"],
        shell:
            "printf 'name,value\\\\ntoken,{{params.token}}\\\\nkey,{PROVIDER_KEY}\\\\npath,{OUTSIDE_PATH}\\\\n' > {{output.table}}"
    """


@dataclass
class ScienceRuns:
    root: Path
    alloys: Path
    contaminated: Path
    leaky: Path


def science_registry(root: Path) -> Path:
    """A registry with surrogate-design, pump-probe, leaky-table and their data (data/pp/frames.npz)."""
    make_registry(root, {"leaky-table": LEAKY})
    for wf in ("surrogate-design", "pump-probe"):
        shutil.copytree(REPO / "workflows" / wf, root / "workflows" / wf,
                        ignore=shutil.ignore_patterns("__pycache__", ".snakemake"))
    shutil.copy(REPO / "data" / "examples" / "surrogate-alloys.csv", root / "data" / "examples")
    (root / "data" / "pp").mkdir()
    shutil.copy(REPO / "workflows" / "pump-probe" / "test" / "data" / "frames.npz", root / "data" / "pp")
    return root


@pytest.fixture(scope="session")
def science(tmp_path_factory) -> ScienceRuns:
    from snakegate.registry.settings import load_settings
    from snakegate.registry.workflows import Registry
    from snakegate.run import runner

    root = science_registry(tmp_path_factory.mktemp("science") / "registry")
    registry, settings = Registry.load(root), load_settings(root)

    def run(workflow: str, params: dict):
        return runner.execute(registry, settings, {"workflow": workflow, "params": params},
                              runner.RunOptions(cores=2))

    alloys = run("surrogate-design", ALLOY_PARAMS)
    contaminated = run("pump-probe", PUMP_PROBE_PARAMS)
    leaky = run("leaky-table", {"token": LEAKY_TOKEN})
    assert (alloys.status, contaminated.status, leaky.status) == ("succeeded",) * 3, \
        (alloys.record, contaminated.record, leaky.record)
    assert contaminated.record["verdict"]["status"] == "fail", contaminated.record["verdict"]
    return ScienceRuns(root, alloys.run_dir, contaminated.run_dir, leaky.run_dir)
