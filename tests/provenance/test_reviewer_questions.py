"""The questions a reviewer asks, answered from prov.ttl with standard vocabularies alone (issue 28 §2): no
`sg:` prefix in any query below. And run IRIs are globally unique: the same config run by plain `snakemake` in
two clones makes two runs with one run id (the folder's name) and two IRIs.

The runs are the session's (prov_runs.py) and two plain Snakemake runs made here.
"""

from __future__ import annotations

import json
import subprocess
import sys

import rdflib

from prov_iris import run_iri
from prov_sparql import ask  # prov.ttl, asked with standard prefixes only
from registry_copies import clean_env, git, make_registry, new_run, run_names


def test_which_git_commit_and_whether_the_run_succeeded(succeeded_run, prov_registry):
    rows = ask(succeeded_run, """SELECT ?commit ?status WHERE {
        ?run a wfprov:WorkflowRun ; schema:actionStatus ?status ; wfprov:describedByWorkflow ?wf .
        ?wf dct:isPartOf ?snapshot . ?snapshot schema:version ?commit }""", run=run_iri(succeeded_run))
    assert [(str(r.commit), str(r.status)) for r in rows] == [
        (git(prov_registry, "rev-parse", "HEAD"), "http://schema.org/CompletedActionStatus")]


def test_which_job_failed_and_why(failed_run):
    rows = ask(failed_run, """SELECT ?name ?error WHERE {
        ?job a wfprov:ProcessRun ; wfprov:wasPartOfWorkflowRun ?run ; schema:actionStatus schema:FailedActionStatus ;
             schema:error ?error ; wfprov:describedByProcess ?step . ?step schema:name ?name }""",
               run=run_iri(failed_run))
    assert [str(r.name) for r in rows] == ["explode"]
    assert "non-zero exit status" in str(rows[0].error)


def test_the_same_config_in_two_clones_is_two_runs(tmp_path):
    iris = []
    for clone in ("a", "b"):
        root = make_registry(tmp_path / clone / "registry", with_git=True)
        before = run_names(root)
        proc = subprocess.run([sys.executable, "-m", "snakemake", "--configfile",
                               "workflows/tabular-profile/examples/basic.yaml", "--cores", "1"], cwd=root,
                              env=clean_env(), capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
        run_dir = new_run(root, before)
        iris.append((run_dir.name, run_iri(run_dir), json.loads((run_dir / "run.json").read_text())["run_uuid"]))
        assert ask(run_dir, "ASK { ?run a wfprov:WorkflowRun ; dct:identifier ?name }", run=iris[-1][1],
                   name=rdflib.Literal(run_dir.name)) == [True]
    (name_a, iri_a, _), (name_b, iri_b, _) = iris
    assert name_a == name_b and iri_a != iri_b
