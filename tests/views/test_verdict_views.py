"""A run's verdict on the report page (issue 25 §1), and the verdict views read from records anyone may have
edited (pure).

Real runs of a copy of the tiny `scored` workflow whose check sentence holds HTML (tests/verdict_runs.py), the
session's real plan run; hand-made records for the shapes an attacker can write into run.json.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from registry_copies import new_run, run_names, snakegate
from verdict_runs import SCORED, scored_config, scored_registry
from snakegate.views import verdict as verdicts

HTML_SAYS = "The score is <b>below</b> the floor & <script>alert(1)</script>; raise score."


@pytest.fixture(scope="module")
def html_registry(tmp_path_factory) -> Path:
    manifest = SCORED["workflow.yaml"].replace("id: scored", "id: scored-html").replace(
        "says: The score is below the floor; raise score.", f"says: {json.dumps(HTML_SAYS)}")
    return scored_registry(tmp_path_factory.mktemp("verdictreport") / "registry",
                           **{"scored-html": dict(SCORED, **{"workflow.yaml": manifest})})


def _run(root: Path, name: str, **params) -> Path:
    config = scored_config(root / f"{name}.yaml", **params)
    config.write_text(config.read_text().replace("workflow: scored", "workflow: scored-html"))
    before = run_names(root)
    proc = snakegate(root, "run", config)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return new_run(root, before)


@pytest.fixture(scope="module")
def failing_page(html_registry) -> str:
    run_dir = _run(html_registry, "low", score=0.3, floor=0.4)
    proc = snakegate(html_registry, "report", run_dir.name)
    assert proc.returncode == 0, proc.stderr
    return (run_dir / "report.html").read_text()


def test_the_report_shows_the_verdict_near_the_top_each_check_with_its_value_and_advice(failing_page):
    page = failing_page
    assert page.index('<section id="verdict"') < page.index('<section id="summary"')
    assert '<h2>Verdict <span class="badge fail">fail</span></h2>' in page
    assert "<p>fail: 1 of 3 checks failed (score)</p>" in page
    score = page.split('<tr class="fail"><td><code>score</code></td>', 1)[1].split("</tr>", 1)[0]
    assert "/score = 0.3, needs &gt;= 0.4 (param floor)" in score
    assert 'Params to look at:</span> <code>score</code>' in score
    assert '<tr class="pass"><td><code>values_mean</code></td>' in page
    assert "mean(v) = 2, needs &gt;= 1.5" in page


def test_a_check_sentence_holding_html_is_escaped_on_the_page(failing_page):
    assert "<script>alert(1)</script>" not in failing_page and "<b>below</b>" not in failing_page
    assert "The score is &lt;b&gt;below&lt;/b&gt; the floor &amp; &lt;script&gt;alert(1)&lt;/script&gt;" in failing_page


def test_a_report_of_a_run_whose_verdict_was_rewritten_warns_at_the_top(html_registry):
    run_dir = _run(html_registry, "rewritten", score=0.1)
    record = json.loads((run_dir / "run.json").read_text())
    record["verdict"]["status"] = "pass"  # someone makes a failing run look good
    (run_dir / "run.json").write_text(json.dumps(record))
    assert snakegate(html_registry, "report", run_dir.name).returncode == 0
    page = (run_dir / "report.html").read_text()
    warning = page.split('<div class="problem" id="proof">', 1)[1].split("</div>", 1)[0]
    assert "Warning: this record does not prove itself" in warning
    assert "<li>run.json: changed after the seal" in warning
    assert f"`snakegate verify {run_dir.name}` lists what changed" in warning
    assert page.index('id="proof"') < page.index('<section id="verdict"')


def test_the_report_of_a_plan_names_each_check_after_its_step(plan_registry, plan_run, tmp_path):
    page_path = tmp_path / "plan.html"
    assert snakegate(plan_registry, "report", plan_run.name, "-o", page_path).returncode == 0
    page = page_path.read_text()
    record = json.loads((plan_run / "run.json").read_text())
    for check in record["verdict"]["checks"]:
        assert f"<td><code>{check['name']}</code></td>" in page
    assert "<td><code>clean.rows_kept</code></td>" in page


# ---- records anyone may have edited (pure) -------------------------------------------------------------
@pytest.mark.parametrize("verdict", ["pass", ["pass"], {"status": "great", "checks": []},
                                     {"status": "pass", "checks": "all"}])
def test_a_verdict_that_is_not_the_recorded_shape_reads_as_unknown_saying_so(verdict):
    found = verdicts.read({"verdict": verdict})
    assert found["status"] == "unknown" and found["checks"] == []
    assert found["reason"].startswith("the recorded verdict cannot be read")
    assert verdicts.mark({"verdict": verdict}) == "?"


def test_a_hostile_check_keeps_only_what_a_person_can_read():
    check = {"name": "x" * 500, "status": "excellent", "value": math.inf, "test": "; rm -rf /",
             "threshold": "0.5", "says": "line one\n\x1b[31mred\x1b[0m " + "a" * 5000, "params": ["p", 3, None],
             "values": [{"at": "/a", "value": True, "status": "pass"}] * 500, "extra": "<script>"}
    (found,) = verdicts.read({"verdict": {"status": "fail", "checks": [check, "not a check"]}})["checks"]
    assert found["status"] == "unknown" and found["value"] is None and found["test"] is None
    assert found["threshold"] is None and found["params"] == ["p"] and "extra" not in found
    assert len(found["name"]) <= 120 and len(found["says"]) <= 600
    assert "\n" not in found["says"] and "\x1b" not in found["says"]  # no terminal control reaches a screen
    assert len(found["values"]) == 50 and found["values"][0]["value"] is None


def test_a_record_without_a_verdict_shows_none():
    assert verdicts.read({"status": "running"}) is None
    assert verdicts.for_list({}) == {"verdict": None} and verdicts.for_model({}, full=True) is None
    assert verdicts.changes({}, {}) is None and verdicts.key_checks({}) == []


def test_the_model_gets_failing_checks_with_their_advice_and_the_rest_by_name():
    checks = [{"name": f"c{i}", "status": "fail", "value": i, "test": ">", "threshold": 100, "says": "low",
               "params": ["p"], "measure": "/v"} for i in range(12)]
    checks.append({"name": "gone", "status": "unknown", "value": None, "reason": "output `o` was not written"})
    out = verdicts.for_model({"verdict": {"status": "fail", "checks": checks}}, full=False)
    assert [c["name"] for c in out["failing"]] == [f"c{i}" for i in range(10)]
    assert out["failing"][0] == {"name": "c0", "value": 0, "test": ">", "threshold": 100, "measure": "/v",
                                 "says": "low", "look_at": ["p"]}
    assert out["failing_not_shown"] == ["c10", "c11"]
    assert out["unknown"] == [{"name": "gone", "reason": "output `o` was not written"}]
    assert "checks" not in out


def test_the_key_checks_put_failing_ones_first_and_leave_out_what_was_not_measured():
    record = {"verdict": {"status": "fail", "checks": [
        {"name": "ok", "status": "pass", "value": 1}, {"name": "bad", "status": "fail", "value": 0.2},
        {"name": "gone", "status": "unknown", "value": None}]}}
    assert verdicts.key_checks(record) == [("bad", 0.2, "fail"), ("ok", 1, "pass")]
