"""More questions a reviewer asks, answered from prov.ttl (and the exported crate's metadata) with standard
vocabularies alone (issue 28 §2; the first ones are test_reviewer_questions.py): the parameter values of a run,
who proposed the invocation (the model and its backend, or the guided dialogue) and who approved it, and whether
a run is a rerun or a fork, and of which run.

In standard terms a rerun is a run that `prov:wasInformedBy` an earlier `wfprov:WorkflowRun` and used the very
invocation that run used; a fork is one that `prov:wasInformedBy` an earlier run and used an invocation that is
a `prov:Revision` of the one that run used.

The runs are the session's (prov_runs.py); a chat run is the succeeded run's folder copied and recorded again
with the origin the chat (or the guided dialogue) writes when a person approves (provenance/origin.py), so no
Snakemake run is added here.
"""

from __future__ import annotations

import json
import shutil

import pytest

from prov_iris import run_iri
from prov_runs import SECRET
from prov_sparql import CRATE_BASE, ask, ask_crate

PARAMS = """SELECT ?name ?value WHERE {
    ?run a wfprov:WorkflowRun ; prov:used|prov:qualifiedUsage/prov:entity ?pv .
    ?pv a schema:PropertyValue ; schema:name ?name ; schema:value ?value }"""

# a chat's proposal and approval: the invocation the run used is attributed to the model (its backend the
# model's provider); a schema:AcceptAction by a person of that invocation informed the run
WHO = """SELECT ?model ?backend ?approver WHERE {
    ?run prov:used|prov:qualifiedUsage/prov:entity ?inv ; prov:wasInformedBy ?approval .
    ?approval a schema:AcceptAction ; schema:object ?inv ; schema:agent ?person .
    ?person a prov:Person ; schema:name ?approver .
    ?inv prov:wasAttributedTo ?model_agent .
    ?model_agent a prov:SoftwareAgent ; schema:name ?model ; schema:provider ?provider .
    ?provider schema:name ?backend }"""

RERUN_OF = """SELECT ?parent_id WHERE {
    ?run prov:wasInformedBy ?parent ; prov:used|prov:qualifiedUsage/prov:entity ?inv .
    ?parent a wfprov:WorkflowRun ; dct:identifier ?parent_id ; prov:used|prov:qualifiedUsage/prov:entity ?inv }"""

FORK_OF = """SELECT ?parent_id WHERE {
    ?run prov:wasInformedBy ?parent ; prov:used|prov:qualifiedUsage/prov:entity ?inv .
    ?inv prov:wasRevisionOf|prov:qualifiedRevision/prov:entity ?parent_inv .
    ?parent a wfprov:WorkflowRun ; dct:identifier ?parent_id ;
            prov:used|prov:qualifiedUsage/prov:entity ?parent_inv }"""

CHATS = {"model": ("qwen2.5:7b", "openai-compatible"), "guided": ("guided-dialogue", "guided")}


def invocation_params(run_dir) -> dict:
    return json.loads((run_dir / "invocation.json").read_text())["invocation"]["params"]


@pytest.fixture(scope="module")
def chat_runs(succeeded_run, prov_registry, tmp_path_factory) -> dict:
    """{"model": run folder, "guided": run folder}: the succeeded run as a chat with a model, and as the guided
    dialogue, would have recorded it (origin.json), its PROV record written again."""
    from snakegate.provenance import capture, origin
    from snakegate.registry.workflows import Registry

    wf = Registry.load(prov_registry).get("tabular-profile")
    out = {}
    for kind, (model, backend) in CHATS.items():
        run_dir = tmp_path_factory.mktemp(f"chat-{kind}") / "runs" / succeeded_run.name
        shutil.copytree(succeeded_run, run_dir)
        for name in ("prov.json", "prov.provn", "prov.ttl"):
            (run_dir / name).unlink(missing_ok=True)
        origin.record_origin(run_dir, model=model, proposed_by_backend=backend, approved_by="Grace Approver",
                             approved_at="2026-01-31T10:00:00Z", conversation_id=f"c-{kind}")
        capture.capture(run_dir, prov_registry, prov_registry, wf.manifest.model_dump(), wf.schema, wf.folder, None,
                        "succeeded", "wf_")
        out[kind] = run_dir
    return out


def test_the_parameter_values_of_a_run_are_property_values_it_used(succeeded_run):
    rows = ask(succeeded_run, PARAMS, run=run_iri(succeeded_run))
    assert {str(r.name): r.value.toPython() for r in rows} == invocation_params(succeeded_run)


def test_a_sensitive_parameter_value_is_answered_as_its_keyed_hash(failed_run):
    rows = {str(r.name): str(r.value) for r in ask(failed_run, PARAMS, run=run_iri(failed_run))}
    assert rows["greeting"] == "hello"
    assert rows["token"].startswith("hmac-sha256:") and SECRET not in rows["token"]


def test_the_run_and_the_crate_give_the_same_parameter_values(succeeded_run, prov_registry, tmp_path):
    # in the crate a value is a PropertyValue the run's action used, or, for a file parameter, the File itself,
    # an example of the workflow's parameter of that name
    crate = export_crate(succeeded_run, prov_registry, tmp_path / "crate")
    rows = ask_crate(crate, """SELECT ?name ?value WHERE {
        ?root schema:mainEntity ?workflow . ?run a schema:CreateAction ; schema:instrument ?workflow ;
              schema:object ?used .
        { ?used a schema:PropertyValue ; schema:name ?name ; schema:value ?value }
        UNION { ?used a schema:MediaObject ; schema:exampleOfWork ?parameter . ?parameter schema:name ?name .
                BIND(?used AS ?value) } }""")
    from_prov = {str(r.name): str(r.value) for r in ask(succeeded_run, PARAMS, run=run_iri(succeeded_run))}
    assert {str(r.name): str(r.value).removeprefix(CRATE_BASE) for r in rows} == from_prov
    assert from_prov["dataset_file"] == "data/examples/tabular-penguins.csv"


@pytest.mark.parametrize("kind", sorted(CHATS))
def test_who_proposed_the_invocation_and_who_approved_it(kind, chat_runs):
    run_dir = chat_runs[kind]
    rows = ask(run_dir, WHO, run=run_iri(run_dir))
    assert [(str(r.model), str(r.backend), str(r.approver)) for r in rows] == [(*CHATS[kind], "Grace Approver")]


def test_a_run_from_a_config_file_has_no_proposer_and_no_approval(succeeded_run):
    assert ask(succeeded_run, WHO, run=run_iri(succeeded_run)) == []


@pytest.mark.parametrize("kind", sorted(CHATS))
def test_the_crate_names_who_proposed_and_who_approved(kind, chat_runs, prov_registry, tmp_path):
    crate = export_crate(chat_runs[kind], prov_registry, tmp_path / "crate")
    rows = ask_crate(crate, """SELECT ?model ?backend ?approver WHERE {
        ?accept a schema:AcceptAction ; schema:agent ?person ; schema:participant ?proposer ; schema:result ?run .
        ?person a schema:Person ; schema:name ?approver .
        ?proposer schema:name ?model ; schema:provider ?provider . ?provider schema:name ?backend .
        ?run a schema:CreateAction }""")
    assert [(str(r.model), str(r.backend), str(r.approver)) for r in rows] == [(*CHATS[kind], "Grace Approver")]


def test_a_rerun_says_which_run_it_repeats(rerun_run, succeeded_run):
    run_dir, proc = rerun_run
    assert proc.returncode == 0, proc.stdout + proc.stderr
    iri = run_iri(run_dir)
    assert [str(r.parent_id) for r in ask(run_dir, RERUN_OF, run=iri)] == [succeeded_run.name]
    assert ask(run_dir, FORK_OF, run=iri) == []


def test_a_fork_says_which_run_it_changes(fork_run, succeeded_run):
    run_dir, proc = fork_run
    assert proc.returncode == 0, proc.stdout + proc.stderr
    iri = run_iri(run_dir)
    assert [str(r.parent_id) for r in ask(run_dir, FORK_OF, run=iri)] == [succeeded_run.name]
    assert ask(run_dir, RERUN_OF, run=iri) == []


def test_a_first_run_is_neither_a_rerun_nor_a_fork(succeeded_run):
    iri = run_iri(succeeded_run)
    assert ask(succeeded_run, RERUN_OF, run=iri) == [] and ask(succeeded_run, FORK_OF, run=iri) == []


def export_crate(run_dir, registry, dest):
    """The run's crate, exported in this process (the CLI's export is tested in test_crate_every_kind.py)."""
    from snakegate.provenance.rocrate import export
    from snakegate.registry.workflows import Registry

    wf = Registry.load(registry).get("tabular-profile")
    export.export(run_dir, registry, dest, wf.manifest.model_dump(), wf.schema, wf.folder)
    return dest

