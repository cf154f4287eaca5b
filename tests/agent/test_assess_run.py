"""`assess_run`: a model's score of a finished run, on a rubric it states, with quotes that must be found in the
run's own summary; kept beside the sealed record (owner-only, labelled model-written, naming the seal it
assessed), never inside it, so `snakegate verify` still proves the run. The real action layer over real runs
(tests/science_runs.py); the console command in a fresh process.
"""

from __future__ import annotations

import json
import stat

from registry_copies import snakegate

from snakegate.agent.actions.platform import ActionContext, call_action
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry


def _ctx(root):
    ctx = ActionContext(Registry.load(root), load_settings(root))
    ctx.author = {"model": "scripted-model", "backend": "openai", "conversation": "c-assess"}
    return ctx


def test_an_assessment_quoting_the_record_is_kept_beside_it_and_shown_labelled_and_the_run_still_verifies(
        science, tmp_path):
    run = science.contaminated.name
    ctx = _ctx(science.root)
    outcome = call_action(ctx, "assess_run", {
        "run_id": run, "rubric": "usable background for the signal (1 unusable, 5 clean)", "score": 2,
        "evidence": ["fail"], "comment": "The background check fails."})
    assert outcome.ok, outcome.result
    path = science.root / outcome.result["recorded"]
    assert path.parent == science.root / ".snakegate" / "annotations"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((science.root / ".snakegate").stat().st_mode) == 0o700
    note = json.loads(path.read_text().splitlines()[-1])
    assert (note["written_by"], note["model"], note["score"], note["scale"]) == ("model", "scripted-model", 2, [1, 5])
    assert note["seal_sha256"]  # which record it judged
    assert not any(p.name.endswith(".jsonl") for p in science.contaminated.rglob("*"))  # nothing in the run
    proc = snakegate(science.root, "verify", run)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # shown, labelled, after everything the record says: in show-run (text and --json) and on the report page
    shown = snakegate(science.root, "show-run", run).stdout
    section = shown[shown.index("assessments (model-written; not part of the record)"):]
    assert "model-written assessment by scripted-model via openai: 2 on a scale of 1 to 5" in section
    assert "quotes: “fail”" in section and "says: The background check fails." in section
    (listed,) = json.loads(snakegate(science.root, "show-run", run, "--json").stdout)["assessments"]
    assert listed["current"] is True and listed["score"] == 2
    page = tmp_path / "report.html"
    assert snakegate(science.root, "report", run, "-o", page).returncode == 0
    html = page.read_text()
    assert 'id="assessments"' in html and "model-written assessment by scripted-model" in html


def test_an_assessment_citing_what_the_record_does_not_say_is_refused_and_nothing_is_written(science):
    run = science.alloys.name
    ctx = _ctx(science.root)
    before = sorted((science.root / ".snakegate").rglob("*.jsonl"))
    sizes = {p: p.stat().st_size for p in before}
    outcome = call_action(ctx, "assess_run", {
        "run_id": run, "rubric": "fit quality (1 bad, 5 good)", "score": 5,
        "evidence": ["R2 = 0.99 on every target"]})
    assert not outcome.ok and outcome.result["error"]["code"] == "evidence_not_in_record"
    bad_scale = call_action(ctx, "assess_run", {
        "run_id": run, "rubric": "fit quality (1 bad, 5 good)", "score": 9, "evidence": ["succeeded"]})
    assert not bad_scale.ok and bad_scale.result["error"]["code"] == "bad_score"
    after = sorted((science.root / ".snakegate").rglob("*.jsonl"))
    assert after == before and {p: p.stat().st_size for p in after} == sizes
