"""Issue 25 §1: `snakegate test` proves each test case's verdict is the one its test/<case>/verdict.yaml expects.

Real Snakemake runs tabular-profile's test cases in a throw-away registry whose verdict.yaml files and
workflow.yaml checks a test edits; the comparison itself is also held to hand-made verdicts (it is pure).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from snakegate.contribute.testcases import compare_verdict, read_expected_verdict


@pytest.fixture
def tabular(tmp_registry) -> Path:
    return tmp_registry / "workflows" / "tabular-profile"


def test_the_curated_cases_get_the_verdicts_they_expect(tmp_registry, cli):
    code, out, err = cli("--registry", tmp_registry, "test", "tabular-profile")
    assert code == 0, out + err
    assert "as expected      verdict (test/basic/verdict.yaml): pass: rows_kept pass (32; needs >= 10)" in out
    assert "as expected      verdict (test/fill-mean/verdict.yaml): pass: rows_kept pass (39; needs >= 10)" in out


def test_a_case_whose_run_gets_another_verdict_fails_naming_the_check_and_its_value(tabular, tmp_registry, cli):
    (tabular / "test/basic/verdict.yaml").write_text("verdict: fail\nchecks: {rows_kept: fail}\n")
    code, out, err = cli("--registry", tmp_registry, "test", "tabular-profile", "--case", "basic")
    assert code == 1 and "FAIL  tabular-profile/basic" in out
    assert ("not as expected  verdict (test/basic/verdict.yaml): pass (expected fail, expected rows_kept fail): "
            "rows_kept pass (32; needs >= 10)") in out
    assert "identical        profile (results/profile.json)" in out  # the outputs are right: only the verdict differs


def test_a_check_whose_threshold_fails_a_good_case_fails_the_registry_ci(tabular, tmp_registry, cli):
    manifest = tabular / "workflow.yaml"
    manifest.write_text(manifest.read_text().replace("    threshold: 10\n", "    threshold: 35\n"))
    code, out, err = cli("--registry", tmp_registry, "test", "tabular-profile")
    assert code == 1 and "1 passed, 1 failed" in out  # fill-mean keeps 39 rows, basic only 32
    assert ("not as expected  verdict (test/basic/verdict.yaml): fail (expected pass, expected rows_kept pass): "
            "rows_kept fail (32; needs >= 35)") in out


def test_without_a_verdict_file_a_case_is_expected_to_pass_every_check(tabular, tmp_registry, cli):
    (tabular / "test/fill-mean/verdict.yaml").unlink()
    code, out, err = cli("--registry", tmp_registry, "test", "tabular-profile", "--case", "fill-mean")
    assert code == 0, out + err
    assert "as expected      verdict (no test/fill-mean/verdict.yaml: pass expected): pass: rows_kept pass" in out


@pytest.mark.parametrize("text, problem", [
    ("verdict: maybe\n", "verdict.yaml is not a verdict; write `verdict: pass|fail|unknown`"),
    ("verdict: pass\nchecks: [rows_kept]\n", "verdict.yaml: `checks` must map check names to pass, fail, unknown"),
    ("verdict: pass\nwhy: because\n", "verdict.yaml is not a verdict"),
    ("verdict: [pass\n", "verdict.yaml cannot be read (ParserError)"),
])
def test_a_verdict_file_that_is_not_a_verdict_fails_the_case_saying_how_to_write_one(tmp_path, text, problem):
    path = tmp_path / "verdict.yaml"
    path.write_text(text)
    expected, found = read_expected_verdict(path)
    assert expected == {} and found.startswith(problem), found


def test_an_expected_check_the_workflow_does_not_declare_is_not_as_expected():
    found = {"status": "pass", "checks": [{"name": "rows_kept", "status": "pass", "value": 32, "test": ">=",
                                           "threshold": 10}]}
    status, detail = compare_verdict(found, {"verdict": "pass", "checks": {"row_kept": "pass"}})
    assert status == "not as expected"
    assert detail == ("pass (check `row_kept` is not in workflow.yaml `evaluate:`): rows_kept pass (32; "
                      "needs >= 10)")


def test_an_unknown_check_shows_its_reason():
    found = {"status": "unknown", "checks": [{"name": "fit", "status": "unknown", "value": None,
                                              "reason": "output `fits` was not written"}]}
    assert compare_verdict(found, {"verdict": "unknown", "checks": {}}) == \
        ("as expected", "unknown: fit unknown (output `fits` was not written)")
