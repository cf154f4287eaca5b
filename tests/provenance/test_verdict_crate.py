"""Issue 25 §1: a run's RO-Crate says its verdict to a reader who never opens prov.json: each check a DQV
QualityMeasurement (and a schema.org PropertyValue) of its Metric, computed on the output file it read, named by
the run's CreateAction, and a Verdict section in the crate's README; roc-validator's Provenance Run Crate profile
still passes at REQUIRED.

Real runs: pump-probe's contaminated-background example (tests/verdict_view_runs.py) and the session's plan run,
whose checks are named after their steps. roc-validator runs as its own command (SNAKEGATE_ROC_VALIDATOR).
"""

from __future__ import annotations

from test_plan_rocrate import _ids, _types, export
from verdict_view_runs import record_of  # the runs themselves: session fixtures in conftest.py
from snakegate.provenance.rocrate import validate as rocval

DQV = "http://www.w3.org/ns/dqv#"


def test_the_crate_names_each_check_as_a_measurement_of_the_file_it_read(judged_registry, contaminated_run, tmp_path):
    metadata = export(judged_registry, contaminated_run, tmp_path / "crate")
    terms = metadata["@context"][1]
    assert terms["QualityMeasurement"] == DQV + "QualityMeasurement" and terms["computedOn"] == DQV + "computedOn"
    graph = {e["@id"]: e for e in metadata["@graph"]}
    run = graph[f"#run-{contaminated_run.name}"]
    assert run["verdict"] == "fail"
    assert run["description"].endswith("; verdict fail: 2 of 2 checks failed (background_uniform, background_mean_p)")
    assert _ids(run["hasQualityMeasurement"]) == ["#check-background_uniform", "#check-background_mean_p"]
    check = graph["#check-background_uniform"]
    recorded = {c["name"]: c for c in record_of(contaminated_run)["verdict"]["checks"]}["background_uniform"]
    assert set(_types(check)) == {"QualityMeasurement", "PropertyValue"}
    assert (check["verdict"], check["value"], check["propertyID"]) == ("fail", recorded["value"], "background_uniform")
    assert check["description"].startswith("fail: /background/ks_pvalue = ") and "needs >= 0.001. " in \
        check["description"]
    diagnostics = f"runs/{contaminated_run.name}/results/diagnostics.json"
    assert check["computedOn"] == {"@id": diagnostics}
    assert set(_ids(graph[diagnostics]["hasQualityMeasurement"])) == {"#check-background_uniform",
                                                                      "#check-background_mean_p"}
    metric = graph[check["isMeasurementOf"]["@id"]]
    assert metric["@type"] == "Metric" and "Move background_roi away from the signal" in metric["description"]


def test_the_crates_readme_has_a_verdict_section(judged_registry, contaminated_run, tmp_path):
    export(judged_registry, contaminated_run, tmp_path / "crate")
    readme = (tmp_path / "crate" / "README.md").read_text()
    section = readme.split("## Verdict\n", 1)[1]
    assert section.startswith("\nBy its workflow's checks (workflow.yaml `evaluate:`) the run's verdict is **fail**: "
                              "2 of 2 checks failed (background_uniform, background_mean_p).\n")
    assert "- background_uniform fail: /background/ks_pvalue = " in section
    assert "  What it means: The background ROI's p-values are not uniform" in section


def test_a_plans_crate_names_each_check_after_its_step(plan_registry, plan_run, tmp_path):
    graph = {e["@id"]: e for e in export(plan_registry, plan_run, tmp_path / "crate")["@graph"]}
    run = graph[f"#run-{plan_run.name}"]
    names = [c["name"] for c in record_of(plan_run)["verdict"]["checks"]]
    assert _ids(run["hasQualityMeasurement"]) == [f"#check-{n}" for n in names]
    rows_kept = graph["#check-clean.rows_kept"]
    assert rows_kept["computedOn"]["@id"].endswith("/steps/clean/results/profile.json")


def test_a_crate_with_a_verdict_passes_the_profile_at_required(judged_registry, contaminated_run, tmp_path,
                                                               roc_validator):
    dest = tmp_path / "crate"
    export(judged_registry, contaminated_run, dest)
    issues = rocval.validate(dest, severity="required")
    assert [str(i) for i in issues] == []
