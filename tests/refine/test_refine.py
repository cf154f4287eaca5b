"""Bounded refinement, approved once (issue 25.3), on the pump-probe scenario: a run whose background ROI sits
on the signal's wing (verdict contaminated), refined over candidate ROIs until the background check passes.

Every point is gated before anything runs; each run is a fork of the run before it and names the one
approval (id and sha256) in run.json and PROV; the loop stops at the first passing verdict, at the budget,
or when cancelled by a signal sent to the refine process; nothing outside the approved points can run.
Real Snakemake, real files, real signals.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
import yaml
from prov_iris import run_ident
from registry_copies import REPO, clean_env, make_registry, run_names, snakegate

ON_THE_WING = [16, 24, 8, 24]      # the parent's ROI: contaminated (KS p ~ 1e-9)
STILL_ON_IT = [17, 25, 8, 24]      # one row further: still contaminated (KS p ~ 3e-6)
CLEAR = [20, 28, 8, 24]            # clear of the spot: KS p ~ 0.13
FAR = [24, 32, 8, 24]


def roi(value) -> str:
    return f"background_roi={json.dumps(value)}"


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    root = make_registry(tmp_path_factory.mktemp("refine") / "registry", with_git=True)
    shutil.copytree(REPO / "workflows" / "pump-probe", root / "workflows" / "pump-probe",
                    ignore=shutil.ignore_patterns("__pycache__", ".snakemake"))
    (root / "data" / "pp").mkdir(parents=True)
    shutil.copy(REPO / "workflows" / "pump-probe" / "test" / "data" / "frames.npz", root / "data" / "pp")
    (root / "contaminated.yaml").write_text(yaml.safe_dump({"workflow": "pump-probe", "params": {
        "data_file": "data/pp/frames.npz", "signal_roi": [8, 16, 12, 20], "background_roi": ON_THE_WING,
        "n_bootstrap": 100, "seed": 0}}))
    return root


@pytest.fixture(scope="module")
def parent(registry):
    before = run_names(registry)
    proc = snakegate(registry, "run", "contaminated.yaml")
    assert proc.returncode == 1 or proc.returncode == 0, proc.stderr
    (name,) = run_names(registry) - before
    record = json.loads((registry / "runs" / name / "run.json").read_text())
    checks = {c["name"]: c["status"] for c in record["verdict"]["checks"]}
    assert checks["background_uniform"] == "fail", record["verdict"]  # the scenario: a contaminated background
    return name


def records(registry) -> list[dict]:
    folder = registry / ".snakegate" / "refinements"
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []


def run_json(registry, name) -> dict:
    return json.loads((registry / "runs" / name / "run.json").read_text())


def test_a_refinement_stops_at_the_first_clean_verdict_each_run_a_fork_of_the_one_before(registry, parent):
    before, known = run_names(registry), len(records(registry))
    proc = snakegate(registry, "refine", parent, "--try", roi(ON_THE_WING), "--try", roi(STILL_ON_IT),
                     "--try", roi(CLEAR), "--try", roi(FAR), "--budget", "3", "--until", "background_uniform",
                     "--yes")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    # the whole space, shown before anything ran: the parent's own point left out, the check's advice quoted
    assert "1. background_roi=[17, 25, 8, 24]" in out and "3. background_roi=[24, 32, 8, 24]" in out
    assert "left out: background_roi=[16, 24, 8, 24] (the parent run" in out
    assert "Move background_roi away from the signal" in out
    (record,) = records(registry)[known:]
    assert record["state"] == "reached" and len(record["runs"]) == 2, record
    first, second = (r["run_id"] for r in record["runs"])
    assert run_names(registry) - before == {first, second}  # the third point never ran
    assert [r["check"]["status"] for r in record["runs"]] == ["fail", "pass"]
    assert f"reached · run {second} passes background_uniform" in out
    # each run is a fork of its predecessor, and names the one approval
    a, b = run_json(registry, first), run_json(registry, second)
    assert (a["parent_run"], b["parent_run"]) == (parent, first)
    assert a["fork_changes"] == {"background_roi": STILL_ON_IT} and b["fork_changes"] == {"background_roi": CLEAR}
    for rec, n in ((a, 1), (b, 2)):
        assert rec["refinement"] == {"id": record["refinement"], "approval_sha256": record["approval_sha256"],
                                     "point": n, "points": 3}
    assert [p["invocation_id"] for p in record["approval"]["points"][:2]] == [a["invocation_id"], b["invocation_id"]]
    # the table of variants with their verdicts
    table = [line for line in out.splitlines() if first in line or second in line]
    assert any("[17, 25, 8, 24]" in line and "fail" in line for line in table)
    assert any("[20, 28, 8, 24]" in line and "pass" in line for line in table)
    # PROV: the run used the approval, a prov:Plan of snakegate's type, carrying its sha256
    prov = snakegate(registry, "prov", second).stdout
    assert f"used({run_ident(registry / 'runs' / second)}, refinement:{record['refinement']}" in prov
    assert f'sg:approvalSha256="{record["approval_sha256"]}"' in prov
    # and the records prove themselves
    assert snakegate(registry, "verify", second).returncode == 0


def test_a_refinement_stops_at_its_budget_and_reports_the_rule_unmet(registry, parent):
    before, known = run_names(registry), len(records(registry))
    proc = snakegate(registry, "refine", parent, "--try", roi(STILL_ON_IT), "--try", roi(CLEAR), "--budget", "1",
                     "--until", "background_uniform", "--yes")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (record,) = records(registry)[known:]
    assert record["state"] == "budget" and len(record["runs"]) == 1
    assert len(run_names(registry) - before) == 1
    assert "the budget of 1 run(s) is spent" in proc.stdout
    assert "2. background_roi=[20, 28, 8, 24]  (beyond the budget)" in proc.stdout


def test_a_space_with_a_point_the_gate_refuses_runs_nothing_and_names_the_point(registry, parent):
    before, known = run_names(registry), len(records(registry))
    proc = snakegate(registry, "refine", parent, "--try", roi(CLEAR), "--try", "background_roi=[0, 8, 0]",
                     "--budget", "2", "--until", "background_uniform", "--yes")
    assert proc.returncode == 1
    assert "refinement point background_roi=[0, 8, 0] has 1 problem" in proc.stderr and "background_roi" in proc.stderr
    assert "1 of the 2 points do not pass the gate; nothing was run" in proc.stderr
    assert run_names(registry) == before and len(records(registry)) == known


def test_refine_asks_once_and_without_a_terminal_or_yes_runs_nothing(registry, parent):
    before, known = run_names(registry), len(records(registry))
    proc = snakegate(registry, "refine", parent, "--try", roi(CLEAR), "--budget", "1", "--until",
                     "background_uniform")
    assert proc.returncode == 2, proc.stderr
    assert "1. background_roi=[20, 28, 8, 24]" in proc.stdout  # the proposal is shown
    assert "pass --yes" in proc.stderr
    assert run_names(registry) == before and len(records(registry)) == known


def test_a_stop_rule_must_name_a_check_of_the_workflow(registry, parent):
    proc = snakegate(registry, "refine", parent, "--try", roi(CLEAR), "--budget", "1", "--until",
                     "background_uniformity", "--yes")
    assert proc.returncode == 1
    assert "did you mean `background_uniform`?" in proc.stderr
    proc = snakegate(registry, "refine", parent, "--try", roi(CLEAR), "--budget", "0", "--until",
                     "background_uniform", "--yes")
    assert proc.returncode == 2 and "--budget is a number of runs, at least 1 (got 0)" in proc.stderr


def test_sigterm_to_the_refine_process_cancels_the_running_variant_and_starts_no_other(registry, parent):
    before, known = run_names(registry), len(records(registry))
    # a long bootstrap (minutes) in the first point: the cancel arrives while its job runs
    proc = subprocess.Popen([sys.executable, "-m", "snakegate.cli", "refine", parent, "--try", "n_bootstrap=100000",
                             "--try", roi(CLEAR), "--budget", "4", "--until", "background_uniform", "--yes"],
                            cwd=registry, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            new = run_names(registry) - before
            if new:
                folder = registry / "runs" / next(iter(new))
                stderr = folder / "stderr"
                if stderr.is_dir() and any(p.name.startswith("delay_curve") for p in stderr.iterdir()):
                    break
            time.sleep(0.5)
        else:
            pytest.fail("the first variant's delay_curve job never started")
        os.kill(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out + err
    assert "Traceback" not in out + err
    (name,) = run_names(registry) - before  # no second variant started
    assert run_json(registry, name)["status"] == "cancelled"
    (record,) = records(registry)[known:]
    assert record["state"] == "cancelled" and [r["run_id"] for r in record["runs"]] == [name]
    assert f"refinement {record['refinement']}: cancelled" in out


def test_a_point_whose_input_changed_after_the_approval_is_not_run(registry, parent, tmp_path):
    """Nothing outside the approved space: the data file re-exported between approval and run makes the point
    another invocation, which the loop refuses before a run folder exists."""
    from snakegate.refine import loop
    from snakegate.refine.space import propose
    from snakegate.registry.settings import settings_for
    from snakegate.registry.workflows import Registry
    from snakegate.run.runner import RunOptions

    settings = settings_for(str(registry))
    reg = Registry.load(registry)
    proposal = propose(reg, settings, registry / "runs" / parent, [("background_roi", CLEAR)], 1,
                       until="background_uniform")
    data = registry / "data" / "pp" / "frames.npz"
    saved = tmp_path / "frames.npz"
    shutil.copy2(data, saved)
    before = run_names(registry)
    try:
        data.write_bytes(saved.read_bytes() + b"\0")  # the colleague's re-export
        outcome = loop.run(reg, settings, proposal, lambda **kw: RunOptions(**kw), approved_by="test")
    finally:
        shutil.copy2(saved, data)
    assert outcome.state == loop.STOPPED and not outcome.variants
    assert "nothing outside the approved space runs" in outcome.why or "not the approved" in outcome.why
    assert run_names(registry) == before
