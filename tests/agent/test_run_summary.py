"""A finished run's summary, as it enters the conversation (snakegate/agent/results.py): what it carries, the
budget it keeps, and what it never shows or reads. Real runs by the real runner and Snakemake
(tests/science_runs.py; the agent conftest's `ran`; the session's plan run).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from science_runs import LEAKY_TOKEN, OUTSIDE_PATH, PROVIDER_KEY, SUGGESTED
from plan_runs import PLAN_SECRET
from snakegate.agent import results
from snakegate.agent.actions.limits import OUTSIDE, PathView
from snakegate.agent.redact import PLACEHOLDER


def summary_of(run_dir: Path, root: Path, known=()) -> dict:
    return results.summarize(run_dir, PathView(root, [root / "data"]), known)


def test_a_succeeded_runs_summary_carries_its_verdict_key_numbers_and_first_rows(science):
    s = summary_of(science.alloys, science.root)
    assert (s["status"], s["workflow"], s["verdict"]["status"]) == ("succeeded", "surrogate-design", "pass")
    (check,) = s["verdict"]["checks"]
    assert check["name"] == "cv_r2" and check["value"] >= 0.5 and "says" not in check  # a pass needs no advice
    numbers = s["numbers"]["cv_metrics"]
    assert {"targets.hardness_hv.r2", "targets.hardness_hv.rmse", "n_rows"} <= set(numbers)
    table = s["tables"]["candidates"]
    # the workflow's declared columns, in its order: rank, the features, prediction and uncertainty, score
    assert table["columns"] == ["rank", "Fe", "Ni", "Co", "Cr", "hardness_hv_predicted", "hardness_hv_std", "score"]
    assert table["total_rows"] == 10 and [row[0] for row in table["rows"]] == ["1", "2", "3"]
    note = results.note(s)
    assert results.NOTE_RE.match(note) and "not a request from the researcher" in note.splitlines()[0]
    assert f"targets.hardness_hv.r2 = {numbers['targets.hardness_hv.r2']:.4g}" in note
    assert "candidates, first 3 of 10 rows: rank | Fe | Ni | Co | Cr" in note


def test_a_failing_check_says_what_it_means_which_params_to_look_at_and_what_the_run_suggests(science):
    s = summary_of(science.contaminated, science.root)
    checks = {c["name"]: c for c in s["verdict"]["checks"]}
    uniform = checks["background_uniform"]
    assert uniform["status"] == "fail" and uniform["value"] < uniform["threshold"] == 0.001
    assert "Move background_roi away from the signal" in uniform["says"] and uniform["params"] == ["background_roi"]
    assert {"check": "background_uniform", "param": "background_roi", "value": SUGGESTED,
            "from": "diagnostics /background/suggested_background_roi"} in s["suggestions"]
    text = results.text(s)
    assert "background_uniform: fail, value" in text and "(needs >= 0.001)" in text
    # one line for the one suggested ROI, naming both checks that point at it
    assert text.count("the run suggests background_roi = [22, 30, 8, 24]") == 1
    assert "for the failing checks background_uniform, background_mean_p" in text


def test_a_failed_runs_summary_names_the_failing_rule_and_its_real_error(ran):
    s = summary_of(ran.failed, ran.root)
    assert s["status"] == "failed"
    assert s["failure"]["rule"] == "note" and s["failure"]["error"] == "ValueError: the column flux is empty"
    assert "failed in rule note: ValueError: the column flux is empty" in results.text(s)


def test_the_summary_keeps_its_budget_dropping_params_rows_and_numbers_before_the_verdict(science):
    s = summary_of(science.alloys, science.root)
    whole = results.text(s, 100_000)
    assert "params: " in whole and whole.count("\n  ") == 3  # three rows
    for budget in (900, 500, 250):
        short = results.text(s, budget)
        assert len(short) <= budget, (budget, short)
        assert short.startswith(f"run {s['run_id']}: surrogate-design 1.0.0, succeeded")
    one_short = results.text(s, len(whole) - 1)
    assert "params: " not in one_short and one_short.count("\n  ") == 3  # the params go first, the rows stay
    assert "verdict: pass" in results.text(s, 500) and "cv_r2: pass" in results.text(s, 250)
    assert len(results.note(s, 600)) <= 600


def test_no_sensitive_value_secret_shaped_key_or_outside_path_reaches_the_summary(science):
    s = summary_of(science.leaky, science.root)
    shown = json.dumps(s) + results.note(s)
    for leaked in (LEAKY_TOKEN, PROVIDER_KEY, OUTSIDE_PATH):
        assert leaked not in shown, leaked
    rows = {row[0]: row[1] for row in s["tables"]["table"]["rows"]}
    assert rows == {"token": PLACEHOLDER, "key": PLACEHOLDER, "path": OUTSIDE}
    assert s["params"]["token"] == PLACEHOLDER


def test_a_value_the_conversation_knows_to_be_secret_is_masked_too(science):
    s = summary_of(science.alloys, science.root, known=["surrogate-alloys"])
    assert s["params"]["dataset_file"] == f"data/examples/{PLACEHOLDER}.csv"
    assert "surrogate-alloys" not in json.dumps(s)


def test_each_plan_steps_sensitive_value_is_masked_by_its_own_contract(plan_run):
    root = plan_run.parents[1]
    s = summary_of(plan_run, root)
    assert PLAN_SECRET not in json.dumps(s) + results.note(s)
    assert s["params"]["note"]["token"] == PLACEHOLDER and s["params"]["clean"]["dataset_file"].endswith("penguins.csv")
    assert any(name.startswith("bench.") for name in s.get("numbers", {})), s.get("numbers")


def _copy(run_dir: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "runs" / run_dir.name
    shutil.copytree(run_dir, copy, symlinks=True)
    return copy


def test_an_output_changed_after_its_job_is_not_read(science, tmp_path):
    run = _copy(science.alloys, tmp_path)
    metrics = run / "results" / "cv_metrics.json"
    metrics.write_text(metrics.read_text().replace('"r2": 0.', '"r2": 1.'))
    s = summary_of(run, tmp_path)
    assert "cv_metrics" not in s.get("numbers", {})
    assert "its sha256 differs" in s["unreadable_outputs"]["cv_metrics"]
    assert "cv_metrics: not read, is not the file its job recorded" in results.text(s)


def test_an_output_replaced_by_a_link_out_of_the_run_folder_is_not_followed(science, tmp_path):
    run = _copy(science.alloys, tmp_path)
    outside = tmp_path / "elsewhere.csv"
    outside.write_text("rank,Fe\nplanted,1\n")
    (run / "results" / "candidates.csv").unlink()
    (run / "results" / "candidates.csv").symlink_to(outside)
    s = summary_of(run, tmp_path)
    assert "candidates" not in s.get("tables", {}) and "planted" not in json.dumps(s)
    assert "symbolic link is not followed" in s["unreadable_outputs"]["candidates"]


_OPENED: list | None = None


def _record_open(event: str, args: tuple) -> None:
    if _OPENED is not None and event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        _OPENED.append(os.path.abspath(os.fsdecode(args[0])))


def test_the_summary_opens_no_file_of_the_registry_outside_the_run_folder(science):
    global _OPENED
    summary_of(science.contaminated, science.root)  # modules imported first: their files are not the run's
    sys.addaudithook(_record_open)
    _OPENED = []
    try:
        summary_of(science.contaminated, science.root)
        opened = list(_OPENED)
    finally:
        _OPENED = None
    root, run = str(science.root.resolve()), str(science.contaminated.resolve())
    mine = [p for p in opened if p.startswith(root + os.sep)]
    assert mine and all(p.startswith(run + os.sep) for p in mine), [p for p in mine if not p.startswith(run)]
    assert any(p.endswith("diagnostics.json") for p in mine)  # it did read the outputs it summarises
