"""A plan's run whose every process was killed (SIGKILL to `snakegate run` and Snakemake, no word written) is
found by the next reader, `snakegate runs` or `show-run`, and completed as `interrupted`: the jobs that had
started, the step whose job was cut off, and a PROV record rebuilt from Snakemake's own records with a
sub-activity per step. It verifies and is sealed like any finished run.

The run is the session's (tests/plan_runs.py): clean -> wait, killed inside wait's job.
"""

from __future__ import annotations

import json

from registry_copies import snakegate
from prov_iris import run_ident


def _plain(value):
    return value["$"] if isinstance(value, dict) and "$" in value else value


def test_a_plan_run_nobody_finished_is_completed_as_interrupted_by_the_next_reader(plan_registry,
                                                                                  plan_interrupted_run):
    run = plan_interrupted_run
    listed = {r["run_id"]: r for r in json.loads(snakegate(plan_registry, "runs", "--json").stdout)["runs"]}
    assert listed[run.name]["status"] == "interrupted" and listed[run.name]["kind"] == "plan"
    record = json.loads((run / "run.json").read_text())
    assert record["status"] == "interrupted" and record["stage"] == "finished" and record["interrupted_detected_at"]
    assert record["running_jobs"] == ["wait__wait"]
    assert {"clean__load", "clean__clean"} <= set(record["jobs_executed"])
    assert "provenance_error" not in record
    shown = snakegate(plan_registry, "show-run", run.name).stdout
    assert "status          interrupted" in shown and "running_jobs    wait__wait" in shown
    assert "  wait.table ← clean.cleaned" in shown


def test_the_interrupted_plans_prov_record_is_rebuilt_with_a_sub_activity_per_step(plan_registry,
                                                                                  plan_interrupted_run):
    run = plan_interrupted_run
    snakegate(plan_registry, "show-run", run.name)  # the reader that completes it, if none came before
    prov = json.loads((run / "prov.json").read_text())
    activities = prov["activity"]
    assert _plain(activities[f"{run_ident(run)}"]["sg:status"]) == "interrupted"
    steps = {_plain(a["sg:step"]): ident for ident, a in activities.items()
             if "sg:PlanStep" in json.dumps(a.get("prov:type")) and "sg:step" in a}
    assert set(steps) == {"clean", "wait"}
    jobs = {ident.split("/job/", 1)[1]: a for ident, a in activities.items() if "/job/" in ident}
    assert _plain(jobs["clean__clean"]["sg:status"]) == "succeeded"
    assert _plain(jobs["wait__wait"]["sg:status"]) != "succeeded"
    for rule, attrs in jobs.items():  # every job part of its step's activity
        assert _plain(attrs["wfprov:wasPartOfWorkflowRun"]) == steps[rule.split("__")[0]]
    plans = [e for e in prov["entity"].values() if "sg:Plan" in json.dumps(e.get("prov:type"))]
    assert [_plain(p["sg:planLabel"]) for p in plans] == ["slow-after-clean"]


def test_the_completed_plan_run_verifies_and_is_sealed(plan_registry, plan_interrupted_run):
    snakegate(plan_registry, "runs")
    proc = snakegate(plan_registry, "verify", plan_interrupted_run.name)
    assert proc.returncode == 0, proc.stdout
    assert "sealed: seal" in proc.stdout
