"""Issue 25 §1 (last point) and issue 22 §4 at the CLI: every finished run's verdict is shown by `runs`,
`show-run`, `diff` and after `run`/`fork`; show-run names a refinement a run belongs to and warns, at the top,
when the record does not prove itself.

Real runs of the tiny `scored` workflow (tests/verdict_view_runs.py) and the session's real plan run, read at
COLUMNS=80 as a person at a narrow terminal reads them.
"""

from __future__ import annotations

import json
import subprocess

from registry_copies import snakegate
from verdict_runs import scored_config, scored_registry


def sg80(root, *args) -> subprocess.CompletedProcess:
    return snakegate(root, *args, COLUMNS="80")


def row_of(out: str, run_id: str) -> str:
    (line,) = [line for line in out.splitlines() if line.startswith(run_id)]
    return line


def test_runs_marks_each_verdict_beside_the_status_and_says_what_the_marks_mean(
        judged_registry, passing_run, failing_run, unknown_run):
    out = sg80(judged_registry, "runs").stdout
    assert "  succeeded ✓  " in row_of(out, passing_run.name)
    assert "  succeeded ✗  " in row_of(out, failing_run.name)
    assert "  failed       " in row_of(out, unknown_run.name)  # its status says it: no mark to widen the column
    assert "verdict: ✓ every check passed, ✗ a check failed, ? a check could not be measured\n" \
           "(`snakegate show-run RUN` says which and why)\n" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_runs_filters_by_verdict_and_its_json_names_the_failing_checks(
        judged_registry, passing_run, failing_run, unknown_run):
    out = sg80(judged_registry, "runs", "--verdict", "fail").stdout
    shown = [line.split()[0] for line in out.splitlines()[1:] if line.startswith("2")]
    assert failing_run.name in shown and passing_run.name not in shown and unknown_run.name not in shown
    rows = {r["run_id"]: r for r in json.loads(sg80(judged_registry, "runs", "--json").stdout)["runs"]}
    assert rows[failing_run.name]["verdict"] == "fail" and rows[failing_run.name]["failing_checks"] == ["score"]
    assert rows[passing_run.name]["verdict"] == "pass" and "failing_checks" not in rows[passing_run.name]
    assert rows[unknown_run.name]["verdict"] == "unknown"
    only = json.loads(sg80(judged_registry, "runs", "--json", "--verdict", "unknown").stdout)
    assert [r["run_id"] for r in only["runs"]] == [unknown_run.name]


def test_runs_refuses_a_verdict_filter_that_is_no_verdict_naming_the_close_one(judged_registry):
    proc = sg80(judged_registry, "runs", "--verdict", "failed")
    assert proc.returncode == 2
    assert "--verdict 'failed' is not a verdict; did you mean `fail`?" in proc.stderr


def test_show_run_of_a_failing_verdict_gives_each_checks_value_threshold_meaning_and_params(
        judged_registry, failing_run):
    out = sg80(judged_registry, "show-run", failing_run.name).stdout
    assert "status          succeeded\nverdict         fail: 1 of 3 checks failed (score)\n" in out
    assert ("checks\n"
            "  score        fail  /score = 0.3, needs >= 0.4 (param floor)\n"
            "               The score is below the floor; raise score.\n"
            "               look at: score\n"
            "  values_mean  pass  mean(v) = 2, needs >= 1.5\n"
            "  summarized   pass  /count = 3, needs >= 1\n"
            "outputs\n") in out
    assert "warning" not in out  # an untouched record proves itself


def test_show_run_of_a_failed_run_says_which_check_could_not_be_measured_and_why(judged_registry, unknown_run):
    out = sg80(judged_registry, "show-run", unknown_run.name).stdout
    assert "verdict         unknown: 1 of 3 could not be measured (summarized)\n" in out
    assert "  summarized   unknown  output `summary` was not written\n" in out
    assert "  score        pass  /score = 0.9, needs >= 0.5 (param floor)\n" in out


def test_show_run_of_a_plan_names_each_check_after_its_step(plan_registry, plan_run):
    out = sg80(plan_registry, "show-run", plan_run.name).stdout
    record = json.loads((plan_run / "run.json").read_text())
    names = [c["name"] for c in record["verdict"]["checks"]]
    assert "clean.rows_kept" in names and any(n.startswith("bench.") for n in names)
    section = out.split("\nchecks\n", 1)[1]
    for name in names:
        assert f"\n  {name} " in "\n" + section
    assert f"verdict         {record['verdict']['status']}: " in out


def test_show_run_of_a_refinement_run_names_the_refinement_and_its_point(judged_registry, refined_run, failing_run):
    record = json.loads((refined_run / "run.json").read_text())
    out = sg80(judged_registry, "show-run", refined_run.name).stdout
    assert f"fork_of         {failing_run.name} (score: 0.6)\n" in out
    assert f"refinement      {record['refinement']['id']}, point 1 of 1\n" in out
    assert "verdict         pass: all 3 checks passed\n" in out


def test_show_run_of_an_edited_invocation_warns_at_the_top_that_the_params_may_not_have_run(
        judged_registry, tampered_run):
    proc = sg80(judged_registry, "show-run", tampered_run.name)
    assert proc.returncode == 0
    out = proc.stdout
    assert out.startswith("warning: this record does not prove itself: the params, status and verdict below\n"
                          "  may not be what ran:\n"
                          "  - invocation.json names invocation ")
    assert "but holds one that hashes to" in out and "it was edited after the gate" in out
    assert f"  `snakegate verify {tampered_run.name}` lists what changed\nrun_id " in out
    assert "  score  0.99\n" in out  # the params are still shown, under the warning
    shown = json.loads(sg80(judged_registry, "show-run", tampered_run.name, "--json").stdout)
    assert shown["record_check"]["proves_itself"] is False
    assert any("it was edited after the gate" in p for p in shown["record_check"]["problems"])


def test_show_run_json_of_an_untouched_run_says_it_proves_itself(judged_registry, passing_run):
    shown = json.loads(sg80(judged_registry, "show-run", passing_run.name, "--json").stdout)
    assert shown["record_check"] == {"proves_itself": True, "problems": [], "seal": "intact"}
    assert shown["verdict"]["status"] == "pass"


def test_diff_shows_each_check_that_changed_from_a_to_b_with_its_values(judged_registry, passing_run, forked_run):
    out = sg80(judged_registry, "diff", passing_run.name, forked_run.name).stdout
    assert out.endswith("verdict: pass -> fail (1 of 3 checks changed):\n"
                        "  score: pass -> fail (0.75 -> 0.2, needs >= 0.5 (param floor))\n")
    result = json.loads(sg80(judged_registry, "diff", passing_run.name, forked_run.name, "--json").stdout)
    assert result["verdict"]["status"] == ["pass", "fail"]
    assert result["verdict"]["checks"] == [{"name": "score", "status": ["pass", "fail"], "value": [0.75, 0.2],
                                            "threshold": [0.5, 0.5],
                                            "needs": [">= 0.5 (param floor)", ">= 0.5 (param floor)"]}]
    assert result["verdict"]["same"] == ["values_mean", "summarized"]
    same = sg80(judged_registry, "diff", passing_run.name, passing_run.name).stdout
    assert same.endswith("verdict: pass in both (all 3 checks the same)\n")


def test_a_run_ends_with_its_verdict_and_where_to_read_why(tmp_path):
    root = scored_registry(tmp_path / "registry")
    proc = sg80(root, "run", scored_config(tmp_path / "low.yaml", score=0.1))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run_id = proc.stdout.split("· run ", 1)[1].split(" ", 1)[0]
    said = proc.stdout.split("\nverdict ", 1)[1]
    assert " ".join(said.split()) == f"fail: 1 of 3 checks failed (score); `snakegate show-run {run_id}` says why"
    assert all(len(line) <= 80 for line in said.splitlines())
