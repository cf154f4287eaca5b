"""`snakegate export` for every kind of run of every curated workflow: the crate is written (no traceback, a
param typed ["number", "null"] included) and passes roc-validator's provenance-run-crate-0.5 profile at
REQUIRED, with only the RECOMMENDED items the README lists as left (and why) remaining.

A run that stopped at its first job, and a cancel or a kill before any job ended, are the cases where most rules
never ran: their crates say so with an action per rule that no job of it started. The runs are curated_kinds.py's;
roc-validator runs from its own environment (the tests skip without it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from snakegate.provenance.rocrate import validate as rocval
from snakegate.provenance.rocrate.export import value_type

from curated_kinds import CURATED, KINDS  # the runs themselves: a session fixture in conftest.py
from registry_copies import snakegate


# RECOMMENDED checks the README's provenance section lists as left, with the reason there
LEFT_EVERYWHERE = {
    "process-run-crate-0.5_5.1",  # the main workflow is a File of the crate: its id is a relative path
    "ro-crate-1.1_22.3",  # no organisation to name as publisher
    "ro-crate-1.1_30.2", "ro-crate-1.1_30.3",  # the person's affiliation is not known
}
# a File parameter that no file of the run is has nothing to reference it (a PropertyValue pointing at it would
# break SHOULD 12.1 instead): an output or intermediate a stopped run never made, an input a rule reads only
# sometimes (classifier-benchmark's `table`, absent when the dataset is builtin, as in its first example)
UNREFERENCED_FILE_PARAM = "workflow-run-crate-0.5_7.1"
CONDITIONAL_INPUTS = {"classifier-benchmark"}
LEFT_WHEN_STOPPED = {
    "process-run-crate-0.5_11.1",  # a job that never started, or was stopped before writing anything, made nothing
    UNREFERENCED_FILE_PARAM,
}
CASES = [(kind, wf) for wf in CURATED for kind in KINDS]


def export(registry: Path, run_dir: Path, dest: Path) -> dict:
    proc = snakegate(registry, "export", run_dir.name, "--ro-crate", dest)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads((dest / "ro-crate-metadata.json").read_text())


@pytest.fixture(scope="session")
def judged(curated_kinds, tmp_path_factory) -> dict:
    """kind -> roc-validator's issues (RECOMMENDED and above) with the crate of the workflow's run of that kind,
    every kind's crate exported here and all judged by one validator process (validate_many: the command's
    start-up is paid once per workflow, not once per crate)."""
    if rocval.find() is None:
        pytest.skip(f"roc-validator is not available; provision it with: {rocval.PROVISION}")
    dest = tmp_path_factory.mktemp(f"crates-{curated_kinds.workflow}")
    for kind in KINDS:
        export(curated_kinds.registry_of(kind), curated_kinds.runs[kind], dest / kind)
    return dict(zip(KINDS, rocval.validate_many([dest / kind for kind in KINDS], severity="recommended")))


@pytest.mark.parametrize("kind,curated_kinds", CASES, ids=[f"{k}-{w}" for k, w in CASES], indirect=["curated_kinds"],
                         scope="session")  # one value per workflow, not one per test
def test_every_kind_of_run_of_every_curated_workflow_exports_a_crate_that_passes_required(
        kind, curated_kinds, judged):
    workflow, run_dir = curated_kinds.workflow, curated_kinds.runs[kind]
    issues = judged[kind]
    assert [str(i) for i in issues if i.severity == "REQUIRED"] == []
    status = json.loads((run_dir / "run.json").read_text())["status"]
    allowed = LEFT_EVERYWHERE | (LEFT_WHEN_STOPPED if status != "succeeded" else set()) | \
        ({UNREFERENCED_FILE_PARAM} if workflow in CONDITIONAL_INPUTS else set())
    left = {issue.check for issue in issues}
    assert left <= allowed, sorted(str(i) for i in issues if i.check not in allowed)


@pytest.mark.parametrize("curated_kinds", ["variant-calling"], indirect=True)
def test_a_run_stopped_at_its_first_job_says_which_rules_never_started(curated_kinds, tmp_path):
    curated_registry, run_dir = curated_kinds.registry, curated_kinds.runs["failed"]
    rules = sorted(yaml.safe_load((curated_registry / "workflows" / "variant-calling" / "workflow.yaml")
                                  .read_text())["rules"])
    graph = {e["@id"]: e for e in export(curated_registry, run_dir, tmp_path / "crate")["@graph"]}
    failed_jobs = [e["name"] for e in graph.values() if e["@id"].startswith("#job-")]
    assert failed_jobs == ["job stage_reference"]
    never = sorted(e["name"] for e in graph.values() if e["@id"].startswith("#not-started-"))
    assert never == [f"rule {r}: no job started" for r in rules if r != "stage_reference"]
    for e in graph.values():
        if e["@id"].startswith("#not-started-"):
            assert e["actionStatus"] == "http://schema.org/FailedActionStatus" and "startTime" not in e
            assert e["error"].startswith("not started: the run failed before any job of rule")
    main = graph["workflows/variant-calling/Snakefile"] if "workflows/variant-calling/Snakefile" in graph else \
        next(e for i, e in graph.items() if i.endswith("/Snakefile") and "ComputationalWorkflow" in e["@type"])
    assert len(main["hasPart"]) == len(rules)  # every rule a part: each is the instrument of an action


def test_a_failed_run_lists_what_its_jobs_did_make_as_its_result(failed_run, prov_registry, tmp_path):
    graph = {e["@id"]: e for e in export(prov_registry, failed_run, tmp_path / "crate")["@graph"]}
    run_action = graph[f"#run-{failed_run.name}"]
    results = {r["@id"] for r in (run_action["result"] if isinstance(run_action["result"], list)
                                  else [run_action["result"]])}
    made = {f"runs/{failed_run.name}/results/{p}" for p in ("parts/a.txt", "parts/b.txt", "joined.txt", "lines.txt")}
    assert made <= results  # what the two rules before the failing one made
    assert all((tmp_path / "crate" / r).is_file() and r.startswith(f"runs/{failed_run.name}/") for r in results)


def test_a_union_type_maps_to_its_one_non_null_type():
    assert value_type({"type": ["number", "null"]}) == "Float"
    assert value_type({"type": ["null", "integer"]}) == "Integer"
    assert value_type({"type": ["string", "number"]}) == "Text"
    assert value_type({"type": "boolean"}) == "Boolean"
    assert value_type({}) == "Text"


@pytest.mark.parametrize("curated_kinds", ["pl-power-series"], indirect=True)
def test_the_pl_power_series_crate_describes_its_nullable_number_param(curated_kinds, tmp_path):
    curated_registry = curated_kinds.registry
    schema = json.loads((curated_registry / "workflows" / "pl-power-series" / "schema.json").read_text())
    nullable = [n for n, p in schema["properties"].items() if isinstance(p.get("type"), list)]
    assert nullable, "pl-power-series has a param typed as a union"
    graph = {e["@id"]: e for e in export(curated_registry, curated_kinds.runs["succeeded"],
                                          tmp_path / "crate")["@graph"]}
    for name in nullable:
        fp = graph[f"#param-{name}"]
        kinds = [k for k in schema["properties"][name]["type"] if k != "null"]
        assert fp["additionalType"] == {"number": "Float", "integer": "Integer", "string": "Text",
                                        "boolean": "Boolean"}[kinds[0]]
