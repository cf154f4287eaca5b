"""`snakegate export --ro-crate` for every kind of run: roc-validator's Provenance Run Crate profile passes at
REQUIRED, only the RECOMMENDED items the README lists (with their reasons) remain, every File carries its sha256.

The runs are the session's real runs (prov_runs.py); roc-validator runs as its own command from its own
environment (validate.py; `.ci/run` provisions it, the tests skip without it).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from snakegate.provenance.rocrate import validate as rocval

from registry_copies import snakegate

KINDS = ("succeeded", "failed", "cancelled", "fork", "rerun")
# RECOMMENDED checks the README's provenance section lists as left, with the reason there
LEFT_EVERYWHERE = {
    "process-run-crate-0.5_5.1",  # the main workflow is a File of the crate: its id is a relative path
    "ro-crate-1.1_22.3",  # no organisation to name as publisher
    "ro-crate-1.1_30.2", "ro-crate-1.1_30.3",  # the person's affiliation is not known
    "workflow-run-crate-0.5_7.1",  # an optional parameter left unset has no value to point at its FormalParameter
}
LEFT_WHEN_STOPPED = {"process-run-crate-0.5_11.1"}  # a job that failed or was killed made no result


@pytest.fixture
def run_of(request, succeeded_run, failed_run, cancelled_run, fork_run, rerun_run):
    runs = {"succeeded": succeeded_run, "failed": failed_run, "cancelled": cancelled_run, "fork": fork_run[0],
            "rerun": rerun_run[0]}
    return runs[request.param]


def export(registry: Path, run_dir: Path, dest: Path) -> dict:
    proc = snakegate(registry, "export", run_dir.name, "--ro-crate", dest)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads((dest / "ro-crate-metadata.json").read_text())


@pytest.fixture(scope="session")
def judged(prov_registry, succeeded_run, failed_run, cancelled_run, fork_run, rerun_run, tmp_path_factory) -> dict:
    """kind -> roc-validator's issues (RECOMMENDED and above) with that run's crate: the five crates exported
    here and judged by one validator process (validate_many)."""
    if rocval.find() is None:
        pytest.skip(f"roc-validator is not available; provision it with: {rocval.PROVISION}")
    runs = {"succeeded": succeeded_run, "failed": failed_run, "cancelled": cancelled_run, "fork": fork_run[0],
            "rerun": rerun_run[0]}
    dest = tmp_path_factory.mktemp("prov-crates")
    for kind in KINDS:
        export(prov_registry, runs[kind], dest / kind)
    return dict(zip(KINDS, rocval.validate_many([dest / kind for kind in KINDS], severity="recommended")))


@pytest.mark.parametrize("kind", KINDS)
def test_the_crate_of_every_run_kind_passes_required_and_leaves_only_the_listed_recommended_items(kind, judged):
    issues = judged[kind]
    assert [str(i) for i in issues if i.severity == "REQUIRED"] == []
    allowed = LEFT_EVERYWHERE | (LEFT_WHEN_STOPPED if kind in ("failed", "cancelled") else set())
    left = {issue.check for issue in issues}
    assert left <= allowed, left - allowed


@pytest.mark.parametrize("run_of", KINDS, indirect=True)
def test_every_file_in_the_crate_carries_its_sha256_and_format(run_of, prov_registry, tmp_path):
    dest = tmp_path / "crate"
    graph = export(prov_registry, run_of, dest)["@graph"]
    files = [e for e in graph if "File" in (e["@type"] if isinstance(e["@type"], list) else [e["@type"]])]
    assert len(files) > 10
    for entity in files:
        assert entity["sha256"] == hashlib.sha256((dest / entity["@id"]).read_bytes()).hexdigest(), entity["@id"]
        assert entity["encodingFormat"], entity["@id"]


def test_a_fork_crate_carries_the_parent_job_whose_outputs_it_copied(fork_run, succeeded_run, prov_registry,
                                                                       tmp_path):
    run_dir, _ = fork_run
    graph = {e["@id"]: e for e in export(prov_registry, run_dir, tmp_path / "crate")["@graph"]}
    parent_jobs = [e for e in graph.values() if e.get("@type") == "CreateAction" and succeeded_run.name in e["@id"]]
    assert [e["name"] for e in parent_jobs] == [f"job load (run {succeeded_run.name})"]
    results = {r["@id"] for r in parent_jobs[0]["result"]}
    assert results == {f"runs/{succeeded_run.name}/results/loaded.csv", f"runs/{succeeded_run.name}/logs/load.log"}
    jobs = [e for e in graph.values() if e.get("@type") == "CreateAction" and e["@id"].startswith("#job-")]
    assert sorted(e["name"].split()[1] for e in jobs) == ["clean", "load", "plot", "profile"]


def test_actions_are_mentioned_from_the_root_with_the_person_as_agent(succeeded_run, prov_registry, tmp_path):
    graph = {e["@id"]: e for e in export(prov_registry, succeeded_run, tmp_path / "crate")["@graph"]}
    root = graph["./"]
    actions = [i for i, e in graph.items() if e.get("@type") in ("CreateAction", "OrganizeAction", "ControlAction")]
    assert {m["@id"] for m in root["mentions"]} == set(actions)
    person = root["author"]["@id"]
    assert graph[person]["name"] == "Ada Tester"
    assert all(graph[a]["agent"]["@id"] == person for a in actions)
    readme = graph["README.md"]
    assert readme["about"]["@id"] == "./" and readme["encodingFormat"] == "text/markdown"
    times = [graph[a][k] for a in actions for k in ("startTime", "endTime") if k in graph[a]]
    assert times and all(len(t) == len("2026-01-01T00:00:00.000+00:00") and t.endswith("+00:00") for t in times)


def test_a_failed_run_crate_says_which_job_failed_and_why(failed_run, prov_registry, tmp_path):
    graph = {e["@id"]: e for e in export(prov_registry, failed_run, tmp_path / "crate")["@graph"]}
    failed = [e for e in graph.values() if e.get("actionStatus") == "http://schema.org/FailedActionStatus"]
    names = sorted(e["name"] for e in failed)
    assert names == ["job explode", f"run {failed_run.name} of tiny-fail"]
    assert all("error" in e for e in failed)
    done = [e for e in graph.values() if e.get("actionStatus") == "http://schema.org/CompletedActionStatus"]
    assert all("error" not in e for e in done) and len(done) == 3
