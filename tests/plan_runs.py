"""Real plan runs for the tests of the views (runs, show-run, report, diff, export, the chat, MCP), made once
per pytest session in one throw-away git registry. tests/conftest.py imports the fixtures, so every test folder
shares the same runs (a fixture imported into several test modules would be made again for each).

- plan_run: `snakegate run` of a plan of three steps: clean (tabular-profile) -> bench (classifier-benchmark on
  clean's cleaned table) and, beside them, note (secret-note: an x-sensitive `token`, PLAN_SECRET);
- plan_fork_run: `snakegate fork` of it with bench.model=random_forest (only bench runs again);
- plan_interrupted_run: a plan clean -> wait (slow-second sleeping on clean's table) whose `snakegate run` and
  Snakemake were killed whole (SIGKILL to both process groups) inside the wait job: nobody wrote its end.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from prov_runs import SLOW
from registry_copies import REPO, TOKEN_PARAM, git, make_registry, new_run, note_workflow, run_names, snakegate
from run_faults import killed_mid_job

PLAN_SECRET = "plan-s3cret-0077"
PLAN_LABEL = "sex-from-size"
COLUMNS = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "sex"]
CLEAN_PARAMS = {"dataset_file": "data/examples/tabular-penguins.csv", "columns": COLUMNS}
PLAN = {"plan": PLAN_LABEL, "steps": {
    "clean": {"workflow": "tabular-profile", "params": CLEAN_PARAMS},
    "bench": {"workflow": "classifier-benchmark",
              "params": {"dataset": {"from": "clean", "output": "cleaned"}, "label_column": "sex"}},
    "note": {"workflow": "secret-note", "params": {"token": PLAN_SECRET, "label": "plan-note"}}}}
SLOW_PLAN = {"plan": "slow-after-clean", "steps": {
    "clean": {"workflow": "tabular-profile", "params": CLEAN_PARAMS},
    "wait": {"workflow": "slow-second", "params": {"table": {"from": "clean", "output": "cleaned"}, "sleep": 60}}}}


@pytest.fixture(scope="session")
def plan_registry(tmp_path_factory) -> Path:
    secret_note = note_workflow("secret-note", "Secret note", "Writes a note; its token never leaves the machine.",
                                {"token": TOKEN_PARAM,
                                 "label": {"type": "string", "default": "note", "description": "The note's text."}})
    root = make_registry(tmp_path_factory.mktemp("planviews") / "registry",
                         {"secret-note": secret_note, "slow-second": SLOW}, with_git=True)
    shutil.copytree(REPO / "workflows" / "classifier-benchmark", root / "workflows" / "classifier-benchmark",
                    ignore=shutil.ignore_patterns("__pycache__", ".snakemake"))
    (root / "plan.yaml").write_text(yaml.safe_dump(PLAN, sort_keys=False))
    (root / "slow-plan.yaml").write_text(yaml.safe_dump(SLOW_PLAN, sort_keys=False))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "the plans and the classifier")
    return root


@pytest.fixture(scope="session")
def plan_run(plan_registry) -> Path:
    before = run_names(plan_registry)
    proc = snakegate(plan_registry, "run", "plan.yaml", "--cores", "2", timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return new_run(plan_registry, before)


@pytest.fixture(scope="session")
def plan_fork_run(plan_registry, plan_run) -> Path:
    before = run_names(plan_registry)
    proc = snakegate(plan_registry, "fork", plan_run.name, "--set", "bench.model=random_forest", timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return new_run(plan_registry, before)


@pytest.fixture(scope="session")
def plan_interrupted_run(plan_registry) -> Path:
    return killed_mid_job(plan_registry, "slow-plan.yaml", "steps/wait/logs/wait.log")
