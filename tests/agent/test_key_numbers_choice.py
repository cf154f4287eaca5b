"""After a run and after a fork, the numbers the chat shows are the ones that matter: the verdict's checks first
(failing ones first), then what changed against the fork's parent, then each output's other numbers — not the
first keys of a JSON output. For the model's note (agent/results.py, summary_text), the guided dialogue's
reading of it (guided/follow_text) and explain_run's numbers (views.facts.key_numbers). Real runs of the
session (tests/verdict_view_runs.py: `forked_run` is `snakegate fork passing_run --set score=0.2`,
`contaminated_run` is pump-probe failing both background checks)."""

from __future__ import annotations

import json

from snakegate.agent import results
from snakegate.agent.actions.limits import PathView
from snakegate.agent.guided.follow_text import run_summary_text
from snakegate.provenance import runstore
from snakegate.views.facts import inside_run, key_numbers, numeric_leaves


def _summary(run_dir):
    root = run_dir.parent.parent
    return results.summarize(run_dir, PathView(root, [root / "data"]))


def test_a_forks_summary_says_what_changed_against_its_parent_after_its_checks(forked_run, passing_run):
    s = _summary(forked_run)
    assert s["fork_of"] == passing_run.name
    assert s["changed_from_parent"] == [{"output": "metrics", "key": "score", "parent": 0.75, "value": 0.2}]
    lines = results.text(s).splitlines()
    check = next(i for i, line in enumerate(lines) if line.startswith("- score: fail"))
    changed = lines.index(f"changed against {passing_run.name}: score 0.75 → 0.2")
    numbers = next(i for i, line in enumerate(lines) if line.startswith("metrics: "))
    assert check < changed < numbers
    assert f"Changed against `{passing_run.name}`: score 0.75 → 0.2." in run_summary_text(s)


def test_a_run_that_is_no_fork_says_nothing_changed(passing_run):
    s = _summary(passing_run)
    assert "changed_from_parent" not in s and "changed against" not in results.text(s)


def _diagnostics(run_dir):
    record = runstore.read_run(run_dir)
    (path,) = [o["path"] for o in record["outputs"] if o.get("name") == "diagnostics"]
    return record, json.loads(inside_run(run_dir, path).read_text())


def test_the_numbers_a_runs_checks_read_come_before_the_outputs_first_keys(contaminated_run):
    record, document = _diagnostics(contaminated_run)
    checked = ["background.ks_pvalue", "background.z_score"]  # background_uniform, background_mean_p: both fail
    assert list(numeric_leaves(document))[:2] != checked  # the output's own first keys are others
    s = _summary(contaminated_run)
    assert [c["status"] for c in s["verdict"]["checks"]][:2] == ["fail", "fail"]
    assert list(s["numbers"]["diagnostics"])[:2] == checked
    assert list(key_numbers(record, contaminated_run)["diagnostics"])[:2] == checked  # explain_run's numbers
