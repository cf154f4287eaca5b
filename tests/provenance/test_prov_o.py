"""prov.ttl as an independent PROV-O reader sees it: plain and qualified relations, standard types, our terms defined.

SPARQL queries run with rdflib on the Turtle of real runs (prov_runs.py) and are
checked against what Snakemake itself says the run's jobs were (its DAG for the
run's config), the workflow's manifest and the vocabulary file.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
from pathlib import Path

import pytest
import rdflib
from ruamel.yaml import YAML
from snakegate.provenance import capture, vocab

from prov_iris import run_ident, run_iri
from prov_runs import prov_json, types, val  # the runs themselves: session fixtures in conftest.py
from snakegate.provenance.document import ensure_rendering

PREFIXES = """
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX wfprov: <http://purl.org/wf4ever/wfprov#>
PREFIX wfdesc: <http://purl.org/wf4ever/wfdesc#>
PREFIX schema: <http://schema.org/>
PREFIX sg: <https://w3id.org/snakegate/ns#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
"""


def graph(run_dir: Path) -> rdflib.Graph:
    return rdflib.Graph().parse(ensure_rendering(run_dir, "prov.ttl"), format="turtle")


def ask(g: rdflib.Graph, query: str, **bindings) -> bool:
    return bool(g.query(PREFIXES + "ASK {" + query + "}", initBindings=bindings).askAnswer)


def rows(g: rdflib.Graph, query: str, **bindings) -> list:
    return list(g.query(PREFIXES + query, initBindings=bindings))


def dag_jobs(registry: Path, run_dir: Path, workflow: str):
    """Snakemake's own jobs for the run's config (paths as the run's record spells them: a gated input file as
    the run's staged copy of it, runs/<id>/inputs/..., which is what its jobs read)."""
    from snakegate.gate.dag import build_dag
    from snakegate.registry.workflows import Registry

    wf = Registry.load(registry).get(workflow)
    config = YAML(typ="safe", pure=True).load((run_dir / "config.yaml").read_text())
    prefix = f"runs/{run_dir.name}/"

    manifest = run_dir / "inputs.json"
    staged = {e["source"]: prefix + e["path"] for e in json.loads(manifest.read_text())["inputs"].values()} \
        if manifest.is_file() else {}

    def shown(path):
        rel = (Path(os.path.realpath(path)).relative_to(os.path.realpath(registry)).as_posix()
               if os.path.isabs(path) else prefix + path)
        return staged.get(rel, rel)
    return [(job.rule, sorted({shown(f) for f in job.input}), sorted({shown(f) for f in job.output}))
            for job in build_dag(wf.snakefile, config["params"]).jobs if job.rule != "all"]


@pytest.mark.parametrize("kind", ["succeeded", "failed"])
def test_every_file_of_every_job_is_used_and_generated_in_a_role(kind, prov_registry, succeeded_run, failed_run):
    run_dir, workflow = (succeeded_run, "tabular-profile") if kind == "succeeded" else (failed_run, "tiny-fail")
    g = graph(run_dir)
    run = run_iri(run_dir)
    checked = 0
    for rule, inputs, outputs in dag_jobs(prov_registry, run_dir, workflow):
        jobs = rows(g, """SELECT ?job ?status WHERE { ?job a wfprov:ProcessRun ; sg:rule ?rule ;
                          wfprov:wasPartOfWorkflowRun ?run ; sg:status ?status }""",
                    rule=rdflib.Literal(rule), run=run)
        assert jobs, f"no job of rule {rule}"
        for path in inputs:
            assert ask(g, "?f prov:atLocation ?path ; a wfprov:Artifact . ?job sg:rule ?rule ; "
                          "prov:qualifiedUsage [ prov:entity ?f ; prov:hadRole ?role ] . FILTER(isIRI(?role))",
                       rule=rdflib.Literal(rule), path=rdflib.Literal(path)) or \
                ask(g, "?job sg:rule ?rule ; (prov:used|prov:qualifiedUsage/prov:entity) ?f . ?f prov:atLocation ?path",
                    rule=rdflib.Literal(rule), path=rdflib.Literal(path)), (rule, path)
            checked += 1
        for path in outputs:
            made = ask(g, "?f prov:atLocation ?path ; (prov:wasGeneratedBy|prov:qualifiedGeneration/prov:activity) ?job ."
                          " ?job sg:rule ?rule",
                       rule=rdflib.Literal(rule), path=rdflib.Literal(path))
            statuses = {str(j.status) for j in jobs}
            assert made or statuses & {"failed", "cancelled"}, (rule, path)
            checked += 1
    assert checked >= 8


def test_one_plan_step_per_rule_and_each_job_runs_its_step_with_the_engine(succeeded_run, prov_registry):
    from snakegate.registry.workflows import Registry

    g = graph(succeeded_run)
    rules = set(Registry.load(prov_registry).get("tabular-profile").manifest.rules)
    steps = rows(g, """SELECT ?rule WHERE { ?wf a wfdesc:Workflow, prov:Plan ; wfdesc:hasSubProcess ?step .
                       ?step a wfdesc:Process, prov:Plan ; sg:rule ?rule }""")
    assert sorted(str(r.rule) for r in steps) == sorted(rules)
    unlinked = rows(g, """SELECT ?job WHERE { ?job a wfprov:ProcessRun .
        FILTER NOT EXISTS { ?job prov:wasAssociatedWith ?engine ;
                                 prov:qualifiedAssociation [ prov:agent ?engine ; prov:hadPlan ?step ] .
                            ?engine a wfprov:WorkflowEngine . ?step a wfdesc:Process ; sg:rule ?rule .
                            ?job sg:rule ?rule } }""")
    assert unlinked == []
    assert len(rows(g, "SELECT ?job WHERE { ?job a wfprov:ProcessRun }")) == 4


def test_the_run_names_the_engine_the_person_and_was_started_by_its_gated_invocation(succeeded_run):
    g = graph(succeeded_run)
    run = run_iri(succeeded_run)
    assert ask(g, """?run a wfprov:WorkflowRun ; prov:wasAssociatedWith ?engine ;
                      prov:qualifiedAssociation [ prov:agent ?engine ; prov:hadPlan ?wf ; prov:hadRole sg:workflowEngine ] .
                      ?engine a wfprov:WorkflowEngine, prov:SoftwareAgent ; schema:softwareVersion ?v .
                      ?wf a wfdesc:Workflow""", run=run)
    person = rows(g, """SELECT ?name WHERE { ?run prov:wasAssociatedWith ?p ;
                        prov:qualifiedAssociation [ prov:agent ?p ; prov:hadRole sg:operator ] .
                        ?p a prov:Person ; schema:name ?name . ?engine prov:actedOnBehalfOf ?p }""", run=run)
    assert [str(r.name) for r in person] == ["Ada Tester"]
    assert ask(g, """?run prov:qualifiedStart [ prov:entity ?inv ; prov:hadActivity ?gate ] ;
                      prov:wasInformedBy ?gate . ?inv a sg:Invocation ; prov:qualifiedGeneration/prov:activity ?gate .
                      ?gate a sg:GateDecision ; prov:qualifiedUsage/prov:entity ?input .
                      ?input prov:atLocation "data/examples/tabular-penguins.csv" .
                      ?gate prov:wasAssociatedWith ?snakegate . ?snakegate schema:name "snakegate" """, run=run)


def test_the_gate_decided_before_the_run_started_and_names_its_checks(succeeded_run):
    data = prov_json(succeeded_run)
    gate = data["activity"][f"{run_ident(succeeded_run)}/gate"]
    run = data["activity"][f"{run_ident(succeeded_run)}"]
    assert dt.datetime.fromisoformat(gate["prov:startTime"]) <= dt.datetime.fromisoformat(run["prov:startTime"])
    checks = [val(c) for c in gate["sg:check"]]
    assert checks[:4] == ["shape", "workflow", "version", "contract"] and "data_roots" in checks
    assert val(gate["sg:snakegateVersion"]) and val(gate["sg:decision"]) == "accepted"


def test_roles_are_iris_each_a_parameter_of_the_workflow_or_a_role_the_vocabulary_defines(succeeded_run):
    # a role is described where a reader finds it: an IO name of the workflow is a wfdesc:Input/Output
    # parameter in the record itself; snakegate's own roles are prov:Role individuals in snakegate.ttl (the
    # record does not type them: prov reads `?role a prov:Role` back as a second entity)
    g = graph(succeeded_run)
    vocabulary = rdflib.Graph().parse(vocab.vocabulary_path(), format="turtle")
    roles = [r.role for r in rows(g, "SELECT DISTINCT ?role WHERE { [] prov:hadRole ?role }")]
    assert len(roles) >= 8
    assert all(isinstance(r, rdflib.URIRef) for r in roles)
    params = {r.role for r in rows(g, """SELECT ?role WHERE { ?role a wfdesc:Parameter ; rdfs:label ?label .
                                         { ?role a wfdesc:Input } UNION { ?role a wfdesc:Output } }""")}
    undescribed = [r for r in roles if r not in params
                   and (r, rdflib.RDF.type, rdflib.URIRef("http://www.w3.org/ns/prov#Role")) not in vocabulary]
    assert undescribed == []
    assert any(r in params for r in roles) and any(r not in params for r in roles)


def test_every_snakegate_term_in_a_record_is_defined_with_a_label_and_a_comment(succeeded_run, failed_run,
                                                                                  fork_run, rerun_run):
    vocabulary = rdflib.Graph().parse(vocab.vocabulary_path(), format="turtle")
    used: set[rdflib.URIRef] = set()
    for run_dir in (succeeded_run, failed_run, fork_run[0], rerun_run[0]):
        for s, p, o in graph(run_dir):
            used.update(t for t in (p, o) if isinstance(t, rdflib.URIRef) and str(t).startswith(vocab.SG))
            assert ".invalid" not in f"{s}{p}{o}", (s, p, o)
    assert len(used) > 40
    undefined = [t for t in used if (t, rdflib.RDFS.label, None) not in vocabulary
                 or (t, rdflib.RDFS.comment, None) not in vocabulary]
    assert undefined == []
    assert not vocab.SG.endswith(".invalid/ns#") and "snakegate.invalid" not in vocabulary.serialize(format="nt")


def test_the_vocabulary_file_ships_with_the_package():
    import snakegate.provenance

    assert (Path(snakegate.provenance.__file__).parent / "snakegate.ttl").is_file()


def test_the_environment_lists_python_distributions_os_cpus_and_host(succeeded_run):
    import platform
    import socket
    from importlib.metadata import version

    data = prov_json(succeeded_run)
    (env,) = [a for a in data["entity"].values() if "sg:Environment" in types(a)]
    dists = [val(d) for d in env["schema:softwareRequirements"]]
    for name in ("pandas", "snakemake", "matplotlib", "numpy"):
        assert f"{name}=={version(name)}" in dists
    assert dists == sorted(dists)
    assert val(env["sg:pythonVersion"]) == platform.python_version()
    assert val(env["sg:os"]) == platform.system() and val(env["sg:cpuCount"]) == os.cpu_count()
    assert val(env["sg:hostname"]) == socket.gethostname()


def build(registry: Path, run_dir: Path, **kw):
    from snakegate.registry.workflows import Registry

    wf = Registry.load(registry).get("tabular-profile")
    manifest = wf.manifest.model_dump()
    manifest.update(kw.pop("manifest", {}))
    return capture.build(run_dir, registry, registry, manifest, wf.schema, wf.folder, None, "succeeded", "wf_", **kw)


def test_the_settings_can_leave_the_host_name_out(succeeded_run, prov_registry):
    data = build(prov_registry, succeeded_run, record_hostname=False).to_json()
    (env,) = [a for a in data["entity"].values() if "sg:Environment" in types(a)]
    assert "sg:hostname" not in env and "schema:softwareRequirements" in env


def test_a_hostname_opt_out_in_snakegate_toml_reaches_the_record(tmp_path):
    from registry_copies import make_registry, new_run, run_names, snakegate

    root = make_registry(tmp_path / "registry")
    (root / "snakegate.toml").write_text("[provenance]\nrecord_hostname = false\n")
    before = run_names(root)
    assert snakegate(root, "run", "workflows/tabular-profile/examples/basic.yaml").returncode == 0
    text = (new_run(root, before) / "prov.json").read_text()
    assert "sg:hostname" not in text and "schema:softwareRequirements" in text


def test_each_listed_tool_is_recorded_with_its_path_digest_and_version(succeeded_run, prov_registry):
    import hashlib
    import shutil

    tools = [{"name": "git", "version_command": ["git", "--version"], "version_pattern": r"git version (\S+)",
              "install": "apt-get install git"},
             {"name": "no-such-tool-4711", "version_command": ["no-such-tool-4711"], "install": "nothing"}]
    data = build(prov_registry, succeeded_run, manifest={"tools": tools}).to_json()
    git = data["agent"]["agent:tool/git"]
    reported = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.split()[2]
    assert val(git["schema:softwareVersion"]) == reported
    path = os.path.realpath(shutil.which("git"))
    assert val(git["sg:executable"]) == path
    assert val(git["schema:sha256"]) == hashlib.sha256(Path(path).read_bytes()).hexdigest()
    missing = data["agent"]["agent:tool/no-such-tool-4711"]
    assert val(missing["sg:found"]) is False and val(missing["schema:softwareVersion"]) == "unknown"
    associated = {r["prov:agent"] for r in data["wasAssociatedWith"].values()
                  if r["prov:activity"] == f"{run_ident(succeeded_run)}"}
    assert {"agent:tool/git", "agent:tool/no-such-tool-4711"} <= associated


def test_a_rerun_is_informed_by_its_parent_and_its_identical_outputs_are_alternates(rerun_run, succeeded_run):
    run_dir, _ = rerun_run
    g = graph(run_dir)
    run = run_iri(run_dir)
    parent = run_iri(succeeded_run)
    assert ask(g, "?run prov:wasInformedBy ?parent ; prov:qualifiedCommunication [ prov:activity ?parent ; a sg:Rerun ]",
               run=run, parent=parent)
    pairs = rows(g, """SELECT ?mine ?theirs WHERE { ?a prov:alternateOf ?b . ?a prov:atLocation ?mine ;
                       schema:sha256 ?h . ?b prov:atLocation ?theirs ; schema:sha256 ?h }""")
    assert {Path(str(p.mine)).name for p in pairs} == {"cleaned.csv", "profile.json", "profile.png"}
    assert all(str(p.theirs).startswith(f"runs/{succeeded_run.name}/") for p in pairs)
    assert ask(g, """?config prov:atLocation ?mine ; (prov:wasDerivedFrom|prov:qualifiedDerivation/prov:entity) ?parents .
                      ?parents prov:atLocation ?theirs""",
               mine=rdflib.Literal(f"runs/{run_dir.name}/config.yaml"),
               theirs=rdflib.Literal(f"runs/{succeeded_run.name}/config.yaml"))


def test_a_fork_is_informed_by_its_parent_and_its_invocation_is_a_revision_of_the_parents(fork_run, succeeded_run):
    run_dir, _ = fork_run
    g = graph(run_dir)
    run = run_iri(run_dir)
    parent = run_iri(succeeded_run)
    assert ask(g, "?run prov:wasInformedBy ?parent ; prov:qualifiedCommunication [ prov:activity ?parent ; a sg:Fork ]",
               run=run, parent=parent)
    parent_inv = json.loads((succeeded_run / "invocation.json").read_text())["invocation_id"]
    assert ask(g, "?inv prov:qualifiedRevision [ prov:entity ?parent_inv ]",
               parent_inv=rdflib.URIRef(vocab.NAMESPACES["inv"] + parent_inv))
