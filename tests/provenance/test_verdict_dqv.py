"""Issue 25 §1: a run's verdict in its PROV record, in the W3C Data Quality Vocabulary (DQV).

Real runs of a tiny workflow with three checks (tests/verdict_runs.py): one whose score fails a param
threshold, one whose last job fails (a check left unknown), and a plan of two steps. prov.ttl is read with
rdflib, as an independent PROV-O + DQV reader would, and held against run.json and the files themselves.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import rdflib

from registry_copies import clean_env, new_run, run_names
from snakegate.provenance import vocab
from verdict_runs import checks_of, scored_config, scored_registry
from prov_iris import run_iri
from snakegate.provenance.document import ensure_rendering

PROV = rdflib.Namespace("http://www.w3.org/ns/prov#")
SCHEMA = rdflib.Namespace("http://schema.org/")
PREFIXES = """
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX dqv: <http://www.w3.org/ns/dqv#>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
PREFIX sg: <https://w3id.org/snakegate/ns#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
"""


def run(registry: Path, config: Path) -> Path:
    before = run_names(registry)
    subprocess.run([sys.executable, "-m", "snakegate.cli", "run", str(config)], cwd=registry, env=clean_env(),
                   capture_output=True, text=True, timeout=600)
    return new_run(registry, before)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("dqv")
    registry = scored_registry(root / "registry")
    plan = root / "plan.yaml"
    plan.write_text("plan: two-scores\nsteps:\n  high:\n    workflow: scored\n    params: {score: 0.9}\n"
                    "  low:\n    workflow: scored\n    params: {score: 0.1}\n")
    return {"below": run(registry, scored_config(root / "below.yaml", score=0.3, floor=0.4)),
            "failed": run(registry, scored_config(root / "failed.yaml", fail=True)),
            "plan": run(registry, plan)}


def graph(run_dir: Path) -> rdflib.Graph:
    return rdflib.Graph().parse(ensure_rendering(run_dir, "prov.ttl"), format="turtle")


def measurements(g: rdflib.Graph) -> dict[str, dict]:
    """Each check's measurement (not an item's): its metric's label -> what the record says of it."""
    rows = g.query(PREFIXES + """
        SELECT ?m ?label ?verdict ?value ?threshold ?file ?reason ?run WHERE {
          ?m a dqv:QualityMeasurement ; dqv:isMeasurementOf ?metric ; sg:verdict ?verdict ; prov:wasGeneratedBy ?run .
          ?metric a dqv:Metric ; rdfs:label ?label .
          FILTER NOT EXISTS { ?m <http://purl.org/dc/terms/isPartOf> ?whole }
          OPTIONAL { ?m dqv:value ?value } OPTIONAL { ?m sg:threshold ?threshold }
          OPTIONAL { ?m dqv:computedOn ?file } OPTIONAL { ?m sg:reason ?reason }
        }""")
    return {str(r.m): {k: (v.toPython() if isinstance(v, rdflib.Literal) else v) for k, v in r.asdict().items()}
            for r in rows}


def by_name(found: dict[str, dict]) -> dict[str, dict]:
    return {m.rsplit("/check/", 1)[1]: v for m, v in found.items()}


def test_each_check_is_a_dqv_metric_with_its_test_threshold_and_what_failing_means(runs):
    g = graph(runs["below"])
    metrics = {r.label.toPython(): r for r in g.query(PREFIXES + """
        SELECT ?metric ?label ?definition ?test ?threshold ?param ?measure WHERE {
          ?metric a dqv:Metric ; rdfs:label ?label ; skos:definition ?definition ; sg:test ?test ;
                  sg:measure ?measure .
          OPTIONAL { ?metric sg:threshold ?threshold } OPTIONAL { ?metric sg:thresholdParam ?param } }""")}
    assert sorted(metrics) == ["score", "summarized", "values_mean"]
    score = metrics["score"]
    assert str(score.definition) == "The score is below the floor; raise score."
    assert (str(score.test), str(score.param), score.threshold) == (">=", "floor", None)  # a param, not a constant
    assert (str(metrics["values_mean"].measure), metrics["values_mean"].threshold.toPython()) == ("mean(v)", 1.5)
    assert "/check/" in str(score.metric) and "/workflow/scored/" in str(score.metric)  # the workflow's metric


def test_each_checked_value_is_a_measurement_of_its_metric_computed_on_the_file_it_read(runs):
    run_dir = runs["below"]
    record = json.loads((run_dir / "run.json").read_text())
    g = graph(run_dir)
    found = by_name(measurements(g))
    run = run_iri(run_dir)
    for name, check in checks_of(record).items():
        m = found[name]
        assert (m["verdict"], m["value"], m["threshold"]) == (check["status"], check["value"], check["threshold"])
        assert m["run"] == run
    score = found["score"]
    assert (score["verdict"], score["value"], score["threshold"]) == ("fail", 0.3, 0.4)
    digest = hashlib.sha256((run_dir / "results" / "metrics.json").read_bytes()).hexdigest()
    file = score["file"]
    assert g.value(file, SCHEMA.sha256).toPython() == digest
    assert str(g.value(file, PROV.atLocation)).endswith(f"{run_dir.name}/results/metrics.json")


def test_the_run_says_its_overall_verdict(runs):
    for kind, expected in (("below", "fail"), ("failed", "unknown"), ("plan", "fail")):
        g = graph(runs[kind])
        assert str(g.value(run_iri(runs[kind]), rdflib.URIRef(vocab.SG + "verdict"))) == expected, kind


def test_a_check_that_could_not_be_measured_says_why_with_no_value_and_no_file(runs):
    found = by_name(measurements(graph(runs["failed"])))
    summarized = found["summarized"]
    assert summarized["verdict"] == "unknown" and summarized["reason"] == "output `summary` was not written"
    assert summarized.get("value") is None and summarized.get("file") is None
    assert found["score"]["verdict"] == "pass" and found["score"]["file"] is not None


def test_a_plans_checks_are_metrics_of_each_steps_workflow_measured_on_that_steps_files(runs):
    g = graph(runs["plan"])
    found = by_name(measurements(g))
    assert sorted(found) == ["high.score", "high.summarized", "high.values_mean",
                             "low.score", "low.summarized", "low.values_mean"]
    low = found["low.score"]
    assert (low["verdict"], low["value"], str(low["label"])) == ("fail", 0.1, "score")
    assert str(g.value(low["file"], PROV.atLocation)).endswith("/steps/low/results/metrics.json")


def test_every_snakegate_term_of_the_verdict_is_defined_with_a_label_and_a_comment(runs):
    vocabulary = rdflib.Graph().parse(vocab.vocabulary_path(), format="turtle")
    used = {t for run_dir in runs.values() for s, p, o in graph(run_dir) for t in (p, o)
            if isinstance(t, rdflib.URIRef) and str(t).startswith(vocab.SG)}
    for term in ("verdict", "test", "threshold", "thresholdParam", "measure", "adviceParam", "reason"):
        assert rdflib.URIRef(vocab.SG + term) in used, term
    assert [t for t in used if (t, rdflib.RDFS.label, None) not in vocabulary
            or (t, rdflib.RDFS.comment, None) not in vocabulary] == []
