"""What a record keeps as text is JSON, never a Python repr (issue 28 §3): a fork's reuse records (run.json
`reused`, the run's `sg:reused` in prov.json and prov.ttl) and a job's params (`sg:params`, from Snakemake's
metadata, which keeps each value's repr). A reader in any language parses them with a JSON parser.

The runs are the session's (prov_runs.py): the fork of the succeeded run with missing_strategy=fill_mean, whose
clean job has params [missing_strategy, drop_duplicates].
"""

from __future__ import annotations

import json

import rdflib

from prov_iris import run_iri, run_ident
from prov_runs import prov_json, val
from prov_sparql import prov_graph

SG = "https://w3id.org/snakegate/ns#"


def values(attr) -> list:
    return [val(v) for v in (attr if isinstance(attr, list) else [attr])]


def test_a_forks_reuse_records_are_json_objects_in_every_record(fork_run):
    run_dir, proc = fork_run
    assert proc.returncode == 0, proc.stdout + proc.stderr
    reused = json.loads((run_dir / "run.json").read_text())["reused"]
    assert reused and all(set(r) == {"path", "sha256", "rule"} for r in reused)
    run = prov_json(run_dir)["activity"][run_ident(run_dir)]
    assert sorted((json.loads(v) for v in values(run["sg:reused"])), key=str) == sorted(reused, key=str)
    in_ttl = prov_graph(run_dir).objects(run_iri(run_dir), rdflib.URIRef(SG + "reused"))
    assert sorted((json.loads(str(v)) for v in in_ttl), key=str) == sorted(reused, key=str)


def test_a_jobs_params_are_a_json_value_not_a_python_repr(fork_run):
    run_dir, _ = fork_run
    job = prov_json(run_dir)["activity"][f"{run_ident(run_dir)}/job/clean"]
    text = val(job["sg:params"])
    assert json.loads(text) == ["fill_mean", True]  # a repr would say ['fill_mean', True]
    assert "True" not in text and "'" not in text
