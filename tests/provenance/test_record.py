"""The W3C PROV record of a run: what it says, that its three serialisations agree, and its big-run path.

The session's shared registry (prov_runs.py, a real git repository) holds a
succeeded `snakegate run` of tabular-profile, a failing run of a tiny workflow
whose third rule exits 1, and the same tabular-profile invocation under plain
`snakemake`. The `prov` package and rdflib check the written files.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import importlib.metadata
import json
import os
import warnings
from base64 import urlsafe_b64encode
from pathlib import Path

import pytest
import rdflib
from prov.model import ProvDocument
from rdflib.compare import graph_diff, isomorphic
from ruamel.yaml import YAML
from snakegate.provenance import capture, origin
from snakegate.provenance.document import SHORTCUT_PREDICATES, Document, Many, Q, ensure_rendering, local

from prov_runs import SECRET, prov_json, types, val  # the runs themselves: session fixtures in conftest.py
from registry_copies import REPO, git
from prov_iris import run_ident

PROV = rdflib.Namespace("http://www.w3.org/ns/prov#")


@pytest.fixture
def registry(prov_registry) -> Path:
    return prov_registry


# ---- reading a written record -------------------------------------------------------------------
def jobs_of(data: dict) -> dict[str, dict]:
    return {i: a for i, a in data.get("activity", {}).items() if "wfprov:ProcessRun" in types(a)}


def generated_by(data: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for rel in data.get("wasGeneratedBy", {}).values():
        out.setdefault(rel["prov:entity"], []).append(rel["prov:activity"])
    return out


def used_by(data: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for rel in data.get("used", {}).values():
        out.setdefault(rel["prov:activity"], []).append(rel)
    return out


def entity_at(data: dict, path: str) -> str:
    """The one entity recorded for a registry-relative path."""
    found = [i for i, a in data["entity"].items() if val(a.get("prov:location")) == path]
    assert len(found) == 1, (path, found)
    return found[0]


def role_name(rel: dict) -> str | None:
    role = val(rel.get("prov:role"))
    return role.rsplit("/", 1)[-1] if role else None


def entity_path(data: dict, ident: str) -> str:
    return val(data["entity"][ident]["prov:location"])


def load_prov(run_dir: Path, fmt: str) -> ProvDocument:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # prov warns when it has to guess; our files must not need it
        return ProvDocument.deserialize(content=(run_dir / f"prov.{fmt}").read_text(), format=fmt)


# ---- the three serialisations -------------------------------------------------------------------
def test_prov_json_and_prov_n_parse_to_the_same_document(succeeded_run):
    from_json = load_prov(succeeded_run, "json")
    assert from_json == load_prov(succeeded_run, "provn")


def test_prov_json_round_trips_through_prov_to_an_equal_document(succeeded_run):
    first = load_prov(succeeded_run, "json")
    again = ProvDocument.deserialize(content=first.serialize(format="json"), format="json")
    assert again == first


def prov_graph(doc: ProvDocument) -> rdflib.Graph:
    """prov's own PROV-O graph of a document."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rdflib's N-Triples writer warns about its encoding argument
        return rdflib.Graph().parse(data=doc.serialize(format="rdf", rdf_format="nt"), format="nt")


def assert_prov_o_of(ttl: rdflib.Graph, doc: ProvDocument) -> None:
    """`ttl` is prov's PROV-O graph of `doc` plus only the unqualified triples PROV-O implies."""
    _, only_ours, only_prov = graph_diff(ttl, prov_graph(doc))
    assert len(only_prov) == 0, sorted(only_prov)[:5]
    shortcuts = {PROV[name] for name in SHORTCUT_PREDICATES}
    extra = [t for t in only_ours if t[1] not in shortcuts]
    assert not extra, extra[:5]
    assert len(only_ours) > 0


def test_turtle_is_prov_o_of_prov_json_plus_the_unqualified_relations(succeeded_run):
    ours = rdflib.Graph().parse(ensure_rendering(succeeded_run, "prov.ttl"), format="turtle")
    assert len(ours) > 50
    assert_prov_o_of(ours, load_prov(succeeded_run, "json"))


def test_the_failed_run_record_also_agrees_in_all_three_formats(failed_run):
    from_json = load_prov(failed_run, "json")
    assert from_json == load_prov(failed_run, "provn")
    assert_prov_o_of(rdflib.Graph().parse(ensure_rendering(failed_run, "prov.ttl"), format="turtle"), from_json)


@pytest.mark.parametrize("fmt", ["provn", "ttl"])
def test_a_big_run_defers_provn_and_turtle_until_asked_for(succeeded_run, registry, tmp_path, cli, monkeypatch, fmt):
    """Above the eager limit a run writes prov.json only; `snakegate prov --format provn|ttl` makes the
    rendering from prov.json (by prov), and it is the same document as prov.json."""
    import shutil
    runs = tmp_path / "runs"
    big = runs / succeeded_run.name
    shutil.copytree(succeeded_run, big)
    doc = Document()
    for i in range(3):
        doc.entity(f"file:{i}")
    assert [p.name for p in doc.write(big, renderings_max_records=2)] == ["prov.json"]
    assert not (big / "prov.provn").exists() and not (big / "prov.ttl").exists()
    shutil.copy(succeeded_run / "prov.json", big / "prov.json")  # the run's real record, renderings deferred
    monkeypatch.setenv("SNAKEGATE_RUNS", str(runs))
    code, out, err = cli("--registry", registry, "prov", big.name, "--format", fmt)
    assert code == 0, err
    assert (big / f"prov.{fmt}").is_file()
    from_json = load_prov(succeeded_run, "json")
    if fmt == "provn":
        assert ProvDocument.deserialize(content=out, format="provn") == from_json
    else:
        assert_prov_o_of(rdflib.Graph().parse(data=out, format="turtle"), from_json)


def test_a_deferred_rendering_of_a_damaged_prov_json_is_a_clear_refusal(succeeded_run, registry, tmp_path, cli,
                                                                         monkeypatch):
    import shutil
    runs = tmp_path / "runs"
    broken = runs / succeeded_run.name
    shutil.copytree(succeeded_run, broken)
    (broken / "prov.provn").unlink()
    (broken / "prov.json").write_text('{"entity": {"broken', encoding="utf-8")
    monkeypatch.setenv("SNAKEGATE_RUNS", str(runs))
    code, out, err = cli("--registry", registry, "prov", broken.name, "--format", "provn")
    assert code == 1
    assert "prov.json is not valid PROV-JSON" in err and "Traceback" not in err
    assert not (broken / "prov.provn").exists()


def test_awkward_text_and_paths_survive_all_three_formats():
    doc = Document()
    run = f"run:{local('20260101T000000Z-ab12')}"
    doc.activity(run, dt.datetime(2026, 1, 1, tzinfo=dt.UTC), dt.datetime(2026, 1, 1, 0, 0, 1, 5000,
                                                                                     tzinfo=dt.UTC),
                 {"prov:type": Many((Q("wfprov:WorkflowRun"), Q("sg:Odd"))), "sg:exitCode": 0, "sg:big": 2**40,
                  "sg:dirty": True, "sg:ratio": 0.25,
                  "sg:error": 'quote " backslash \\ tab \t newline \n ansi \x1b[0m é ✓'})
    job = f"{run}/job/{local('part')}/{local('a b,c=d.')}"
    doc.activity(job, None, None, {"wfprov:wasPartOfWorkflowRun": Q(run), "sg:shellCommand": "echo 'x' > \"y\"\r"})
    f_in = f"abs:{local('mnt/data/my table (1).csv')}"
    f_out = f"file:{local('-runs/x/out.')}"
    doc.entity(f_in, {"sg:size": 0, "sg:many": Many(("b", "a"))})
    doc.entity(f_out)
    person = f"agent:{local('person/J. Doe <j@x.org>')}"
    doc.agent(person, {"prov:type": Q("prov:Person")})
    doc.used(job, f_in, role="sg:dataset")
    doc.used(job, f_in)
    doc.generated(f_out, job, role="sg:out", time=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    doc.generated(f_out, job)
    doc.derived(f_out, f_in, job)
    doc.derived(f_out, f_in, kind="prov:Revision")
    doc.associated(run, person, plan=f_in, role="sg:operator")
    doc.associated(run, person)
    doc.associated(job, person, role="sg:operator")  # qualified only: prov.ttl adds its plain triple
    doc.attributed(f_in, person)
    doc.delegated(person, person)
    doc.informed(run, job, kind="sg:Rerun")
    doc.started(job, f_in, run, "2026-01-01T00:00:00+00:00")
    doc.relation("specializationOf", f_out, f_in)
    doc.relation("alternateOf", f_out, f_in)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from_json = ProvDocument.deserialize(content=doc.json_text(), format="json")
        assert from_json == doc.to_prov()
        assert from_json == ProvDocument.deserialize(content=doc.provn_text(), format="provn")
    assert_prov_o_of(rdflib.Graph().parse(data=doc.turtle_text(), format="turtle"), from_json)


# ---- what a succeeded run's record says ---------------------------------------------------------
def test_every_generated_file_has_exactly_one_generating_activity(succeeded_run):
    data = prov_json(succeeded_run)
    generators = {e: acts for e, acts in generated_by(data).items() if "wfprov:Artifact" in types(data["entity"][e])}
    assert all(len(acts) == 1 for acts in generated_by(data).values()), generators
    made = {entity_path(data, e) for e in generators}
    # the jobs' outputs and logs, and the staged copies of the inputs (generated by the staging)
    on_disk = {p.relative_to(succeeded_run.parents[1]).as_posix()
               for sub in ("results", "logs", "inputs") for p in (succeeded_run / sub).rglob("*") if p.is_file()}
    assert made == on_disk


def test_one_job_activity_per_rule_each_part_of_the_run(succeeded_run):
    data = prov_json(succeeded_run)
    jobs = jobs_of(data)
    assert sorted(val(a["sg:rule"]) for a in jobs.values()) == ["clean", "load", "plot", "profile"]
    run_id = f"{run_ident(succeeded_run)}"
    for attrs in jobs.values():
        assert val(attrs["wfprov:wasPartOfWorkflowRun"]) == run_id
        assert val(attrs["sg:status"]) == "succeeded"
        assert val(attrs["sg:script"]).startswith("scripts/")


def test_every_job_used_all_its_input_files_with_the_manifest_names_as_roles(succeeded_run, registry):
    from snakegate.gate.dag import build_dag
    from snakegate.registry.workflows import Registry

    wf = Registry.load(registry).get("tabular-profile")
    config = YAML(typ="safe", pure=True).load((succeeded_run / "config.yaml").read_text())
    dag = build_dag(wf.snakefile, config["params"])
    data = prov_json(succeeded_run)
    used = used_by(data)
    by_rule = {val(a["sg:rule"]): i for i, a in jobs_of(data).items()}
    run_prefix = f"runs/{succeeded_run.name}/"
    for job in dag.jobs:
        if job.rule == "all":
            continue
        expected = {}
        for name, files in job.named_input.items():
            for f in files:
                # a gated input is read from its staged copy in the run folder
                path = (run_prefix + "inputs/" + Path(os.path.realpath(f)).relative_to(os.path.realpath(registry))
                        .as_posix() if os.path.isabs(f) else run_prefix + f)
                expected[path] = name
        recorded = {entity_path(data, rel["prov:entity"]): role_name(rel) for rel in used[by_rule[job.rule]]}
        assert recorded == expected, job.rule


def test_outputs_derive_from_the_inputs_of_the_job_that_made_them(succeeded_run):
    data = prov_json(succeeded_run)
    derivations = {(r["prov:generatedEntity"], r["prov:usedEntity"]): r.get("prov:activity")
                   for r in data["wasDerivedFrom"].values() if r.get("prov:activity")}
    for activity, uses in used_by(data).items():
        if activity not in jobs_of(data):
            continue
        made = [e for e, acts in generated_by(data).items() if acts == [activity]
                and not entity_path(data, e).startswith(f"runs/{succeeded_run.name}/logs/")]
        for out in made:
            for rel in uses:
                assert derivations[(out, rel["prov:entity"])] == activity


def test_every_recorded_sha256_matches_the_file(succeeded_run, registry):
    data = prov_json(succeeded_run)
    recorded = [(val(a["prov:location"]), val(a["schema:sha256"]), val(a["schema:contentSize"]))
                for a in data["entity"].values() if "schema:sha256" in a]
    assert len(recorded) >= 10  # inputs, outputs, logs, config
    for path, digest, size in recorded:
        content = (registry / path).read_bytes()
        assert hashlib.sha256(content).hexdigest() == digest, path
        assert len(content) == size, path


def test_the_record_pins_the_registry_commit_and_the_workflow_tree(succeeded_run, registry):
    data = prov_json(succeeded_run)
    head = git(registry, "rev-parse", "HEAD")
    snapshot = data["entity"][f"registry:{head}"]
    assert val(snapshot["sg:gitCommit"]) == head
    assert val(snapshot["sg:gitDirty"]) is False
    plans = [a for a in data["entity"].values() if "wfdesc:Workflow" in types(a)]
    assert len(plans) == 1 and "prov:Plan" in types(plans[0])
    plan = plans[0]
    assert val(plan["sg:gitTree"]) == git(registry, "rev-parse", "HEAD:workflows/tabular-profile")
    assert val(plan["sg:gitTreeDirty"]) is False
    invocation = json.loads((succeeded_run / "invocation.json").read_text())
    assert val(plan["sg:contentHash"]) == invocation["invocation"]["workflow_hash"]
    assert val(plan["schema:version"]) == "1.0.0"


def test_the_run_is_associated_with_snakemake_whose_plan_is_the_workflow(succeeded_run):
    data = prov_json(succeeded_run)
    run_id = f"{run_ident(succeeded_run)}"
    run = data["activity"][run_id]
    assert val(run["sg:status"]) == "succeeded"
    assocs = [r for r in data["wasAssociatedWith"].values() if r["prov:activity"] == run_id]
    engine = [r for r in assocs if r["prov:agent"] == "agent:snakemake"]
    assert len(engine) == 1 and "wfdesc:Workflow" in types(data["entity"][engine[0]["prov:plan"]])
    agents = data["agent"]
    assert {"prov:SoftwareAgent", "wfprov:WorkflowEngine"} <= types(agents["agent:snakemake"])
    assert val(agents["agent:snakemake"]["schema:softwareVersion"]) == importlib.metadata.version("snakemake")
    assert {"agent:snakegate", "agent:python"} <= set(agents)
    person = agents[f"agent:person/{local('ada@example.org')}"]
    assert val(person["prov:label"]) == "Ada Tester" and val(person["sg:identitySource"]) == "git config"
    assert {r["prov:agent"] for r in assocs} >= {"agent:snakemake", "agent:snakegate",
                                                  f"agent:person/{local('ada@example.org')}"}


def test_the_invocation_and_config_file_are_recorded(succeeded_run):
    data = prov_json(succeeded_run)
    invocation = json.loads((succeeded_run / "invocation.json").read_text())
    inv = data["entity"][f"inv:{invocation['invocation_id']}"]
    assert json.loads(val(inv["sg:params"])) == invocation["invocation"]["params"]
    config_id = entity_at(data, f"runs/{succeeded_run.name}/config.yaml")
    digest = hashlib.sha256((succeeded_run / "config.yaml").read_bytes()).hexdigest()
    assert val(data["entity"][config_id]["schema:sha256"]) == digest
    assert config_id == f"file:{digest}/runs/{succeeded_run.name}/config.yaml"  # content-addressed
    assert any(r["prov:generatedEntity"] == config_id and r["prov:usedEntity"] == f"inv:{invocation['invocation_id']}"
               for r in data["wasDerivedFrom"].values())


def test_start_is_never_after_end_and_only_activities_carry_times(succeeded_run, failed_run):
    for run_dir in (succeeded_run, failed_run):
        data = prov_json(run_dir)
        for ident, attrs in data["activity"].items():
            start, end = attrs.get("prov:startTime"), attrs.get("prov:endTime")
            if start and end:
                assert dt.datetime.fromisoformat(start) <= dt.datetime.fromisoformat(end), ident
        for section in ("entity", "agent"):
            for attrs in data.get(section, {}).values():
                assert not any(isinstance(v, dict) and v.get("type") == "xsd:dateTime" for v in attrs.values())


def test_capturing_the_same_run_again_gives_the_same_files(succeeded_run, registry):
    from snakegate.registry.workflows import Registry

    wf = Registry.load(registry).get("tabular-profile")
    args = (succeeded_run, registry, registry, wf.manifest.model_dump(), wf.schema, wf.folder, None, "succeeded",
            "wf_")
    first = capture.build(*args)
    second = capture.build(*args)
    assert first.json_text() == second.json_text()
    assert first.provn_text() == second.provn_text()
    assert isomorphic(rdflib.Graph().parse(data=first.turtle_text(), format="turtle"),
                      rdflib.Graph().parse(data=second.turtle_text(), format="turtle"))


# ---- a failed run -------------------------------------------------------------------------------
def test_the_failed_job_is_recorded_with_its_error_and_log(failed_run):
    data = prov_json(failed_run)
    jobs = jobs_of(data)
    failed = {i: a for i, a in jobs.items() if val(a["sg:status"]) == "failed"}
    assert len(failed) == 1
    (ident, attrs), = failed.items()
    assert val(attrs["sg:rule"]) == "explode"
    assert "non-zero exit status" in val(attrs["schema:error"])
    log_id = entity_at(data, f"runs/{failed_run.name}/logs/explode.log")
    assert generated_by(data)[log_id] == [ident]
    assert val(data["entity"][log_id]["schema:sha256"]) == hashlib.sha256(
        (failed_run / "logs" / "explode.log").read_bytes()).hexdigest()
    run = data["activity"][f"{run_ident(failed_run)}"]
    assert val(run["sg:status"]) == "failed"
    assert val(run["sg:stoppedAt"]) == ident and val(run["sg:failedRule"]) == "explode"
    assert not any(str(val(a.get("prov:location"))).endswith("results/final.txt") for a in data["entity"].values())


def test_outputs_made_before_the_failure_are_recorded_with_their_jobs(failed_run):
    data = prov_json(failed_run)
    jobs = jobs_of(data)
    succeeded = sorted((val(a["sg:rule"]), val(a.get("sg:wildcards"))) for a in jobs.values()
                       if val(a["sg:status"]) == "succeeded")
    assert succeeded == [("join", None), ("part", '{"name":"a"}'), ("part", '{"name":"b"}')]
    generators = generated_by(data)
    for rel in ("results/parts/a.txt", "results/parts/b.txt", "results/joined.txt"):
        ident = entity_at(data, f"runs/{failed_run.name}/{rel}")
        assert len(generators[ident]) == 1
        assert val(jobs[generators[ident][0]]["sg:status"]) == "succeeded"
    join = next(i for i, a in jobs.items() if val(a["sg:rule"]) == "join")
    assert sorted(role_name(r) for r in used_by(data)[join]) == ["parts", "parts"]
    # one job made both of its outputs, each named as the manifest names it
    made = {entity_path(data, r["prov:entity"]).rsplit("/", 1)[-1]: val(r.get("prov:role"))
            for r in data["wasGeneratedBy"].values() if r["prov:activity"] == join}
    assert made == {"joined.txt": "plan:rule/join/output/joined", "lines.txt": "plan:rule/join/output/lines",
                    "join.log": "sg:jobLog"}


def test_sensitive_values_are_hashed_everywhere_in_the_record(failed_run):
    for name in ("prov.json", "prov.provn", "prov.ttl"):
        path = ensure_rendering(failed_run, name) if name == "prov.ttl" else failed_run / name
        assert SECRET not in path.read_text(), name
    data = prov_json(failed_run)
    inv = next(a for a in data["entity"].values() if "sg:Invocation" in types(a))
    params = json.loads(val(inv["sg:params"]))
    key = bytes.fromhex((failed_run.parents[1] / ".snakegate" / "secret.key").read_text().strip())
    assert params["token"] == "hmac-sha256:" + hmac.new(key, json.dumps(SECRET).encode(), hashlib.sha256).hexdigest()
    assert params["greeting"] == "hello"


def test_the_run_record_facts_of_how_a_run_ended_reach_the_prov_record(succeeded_run, registry, tmp_path):
    """run.json's failure, cancel, missing-output and input-changed facts (the run-trust interface), and a
    staged input whose bytes changed in the run folder: the gate and the staging used the bytes the gate
    hashed, the staging generated a copy of those bytes, and the jobs used other bytes."""
    import shutil
    from snakegate.registry.workflows import Registry

    root = tmp_path / "registry"
    for sub in ("workflows/tabular-profile", "data", f"runs/{succeeded_run.name}"):
        shutil.copytree(registry / sub, root / sub)
    run_dir = root / "runs" / succeeded_run.name
    for name in ("snakemake.log", "config.yaml"):  # they name the inputs by absolute path
        (run_dir / name).write_text((run_dir / name).read_text().replace(str(registry), str(root)))
    table = run_dir / "inputs/data/examples/tabular-penguins.csv"
    staged = f"runs/{run_dir.name}/inputs/data/examples/tabular-penguins.csv"
    gated = hashlib.sha256(table.read_bytes()).hexdigest()
    table.chmod(0o644)
    table.write_text(table.read_text() + "\n")
    current = hashlib.sha256(table.read_bytes()).hexdigest()
    record = json.loads((run_dir / "run.json").read_text())
    record.update(status="failed", failure={"rule": "profile", "exception": "CalledProcessError",
                                            "message": "profile exited 1", "log": "logs/profile.log",
                                            "log_tail": ["boom"]},
                  missing_outputs=["results/profile.json"], running_jobs=["plot"],
                  input_changed=[{"param": "params.dataset_file", "path": staged,
                                  "gated_sha256": gated, "current_sha256": current}])
    (run_dir / "run.json").write_text(json.dumps(record))
    wf = Registry.load(root).get("tabular-profile")
    data = capture.build(run_dir, root, root, wf.manifest.model_dump(), wf.schema, wf.folder, None, "failed",
                         "wf_").to_json()
    run = data["activity"][f"{run_ident(run_dir)}"]
    assert val(run["sg:failedRule"]) == "profile" and val(run["sg:failureException"]) == "CalledProcessError"
    assert val(run["sg:failureMessage"]) == "profile exited 1"
    assert val(data["entity"][val(run["sg:failureLog"])]["prov:location"]) == f"runs/{run_dir.name}/logs/profile.log"
    assert val(run["sg:missingOutput"]) == "results/profile.json" and val(run["sg:runningJob"]) == "plot"
    assert val(run["sg:inputChanged"]) == staged
    gate_used = {r["prov:entity"] for r in data["used"].values() if r["prov:activity"].endswith("/gate")}
    stage_made = {r["prov:entity"] for r in data["wasGeneratedBy"].values() if r["prov:activity"].endswith("/stage")}
    jobs_used = {r["prov:entity"] for r in data["used"].values() if "/job/" in r["prov:activity"]}
    assert gate_used == {f"file:{gated}/data/examples/tabular-penguins.csv"}
    assert stage_made == {f"file:{gated}/{staged}"}
    assert f"file:{current}/{staged}" in jobs_used and not stage_made & jobs_used
    assert val(data["entity"][f"file:{current}/{staged}"]["sg:changedAfterGate"]) is True


# ---- plain snakemake ----------------------------------------------------------------------------
def _normalised(run_dir: Path) -> set[str]:
    """The record with run ids, times and the per-run config file made comparable, as a set of records."""
    config = hashlib.sha256((run_dir / "config.yaml").read_bytes()).hexdigest()
    # config.yaml names the run id inside, so its bytes (and so its content-addressed id) differ
    uuid = json.loads((run_dir / "run.json").read_text())["run_uuid"]  # each run its own IRI
    text = (run_dir / "prov.json").read_text().replace(run_dir.name, "RUN").replace(config, "CONFIG") \
        .replace(uuid, "RUN-UUID")
    data = json.loads(text)
    out = set()
    for section, records in data.items():
        if section == "prefix":
            continue
        for ident, attrs in records.items():
            attrs = {k: v for k, v in attrs.items()
                     if k not in ("prov:startTime", "prov:endTime", "prov:time", "sg:source")}
            if ident == "file:CONFIG/runs/RUN/config.yaml":
                attrs.pop("schema:contentSize")
            key = "_" if ident.startswith("_:") else ident
            out.add(json.dumps([section, key, attrs], sort_keys=True))
    return out


def test_plain_snakemake_writes_the_same_record_as_snakegate_run(succeeded_run, plain_run):
    record = json.loads((plain_run / "run.json").read_text())
    assert record["source"] == "snakemake" and record["status"] == "succeeded"
    assert plain_run.name.startswith("plain-")
    assert _normalised(plain_run) == _normalised(succeeded_run)


# ---- the chat origin ----------------------------------------------------------------------------
@pytest.mark.parametrize("route", ["origin.json", "run.json extra_record"])
def test_a_run_from_the_chat_names_the_model_and_the_approver(succeeded_run, registry, route):
    from snakegate.registry.workflows import Registry

    wf = Registry.load(registry).get("tabular-profile")
    fields = dict(model="qwen2.5:7b", proposed_by_backend="openai-compatible", approved_by="Ada Tester",
                  approved_at="2026-01-31T10:00:00Z", conversation_id="c-42")
    run_json = succeeded_run / "run.json"
    saved = run_json.read_text()
    try:
        if route == "origin.json":
            assert origin.record_origin(succeeded_run, **fields) == succeeded_run / "origin.json"
        else:  # what the agent passes to the runner, which merges it into run.json
            record = json.loads(saved)
            record["origin"] = origin.origin_fields(**fields)
            run_json.write_text(json.dumps(record))
        doc = capture.build(succeeded_run, registry, registry, wf.manifest.model_dump(), wf.schema, wf.folder,
                            None, "succeeded", "wf_")
    finally:
        (succeeded_run / "origin.json").unlink(missing_ok=True)
        run_json.write_text(saved)
    data = doc.to_json()
    model = f"agent:model/openai-compatible/{local('qwen2.5:7b')}"
    assert "prov:SoftwareAgent" in types(data["agent"][model])
    inv = next(i for i, a in data["entity"].items() if "sg:Invocation" in types(a))
    assert any(r["prov:entity"] == inv and r["prov:agent"] == model for r in data["wasAttributedTo"].values())
    approval = data["activity"][f"{run_ident(succeeded_run)}/approval"]
    assert approval["prov:startTime"].startswith("2026-01-31T10:00:00")
    assert val(approval["sg:conversationId"]) == "c-42"
    approver = f"agent:person/{local('Ada Tester')}"
    assert any(r["prov:activity"] == f"{run_ident(succeeded_run)}/approval" and r["prov:agent"] == approver
               and val(r.get("prov:role")) == "sg:approver" for r in data["wasAssociatedWith"].values())
    assert any(r["prov:informed"] == f"{run_ident(succeeded_run)}" for r in data["wasInformedBy"].values())


@pytest.mark.parametrize("field,value,needle", [
    ("approved_at", "yesterday", "ISO 8601"),
    ("approved_at", "2026-01-31T10:00:00", "time zone"),
    ("model", "", "model must be a non-empty string"),
])
def test_record_origin_refuses_a_bad_field_by_name(tmp_path, field, value, needle):
    fields = {"model": "m", "proposed_by_backend": "b", "approved_by": "a", "approved_at": "2026-01-31T10:00:00Z"}
    fields[field] = value
    with pytest.raises(origin.OriginError, match=needle):
        origin.record_origin(tmp_path, **fields)
    assert not (tmp_path / "origin.json").exists()


# ---- no git -------------------------------------------------------------------------------------
def test_outside_a_git_repository_the_record_says_no_git(tmp_path):
    from snakegate.provenance import gitinfo

    state = gitinfo.git_state(tmp_path, tmp_path)
    assert not state.available and state.reason.startswith("no git")


# ---- speed --------------------------------------------------------------------------------------
def _synthetic_run(root: Path, n: int) -> tuple[Path, dict, Path]:
    """A run folder with n finished jobs as Snakemake leaves them: outputs, logs, metadata records, log."""
    run_id = "20260101T000000Z-big00000"
    run_dir = root / "runs" / run_id
    (run_dir / "results").mkdir(parents=True)
    (run_dir / "logs").mkdir()
    (root / "data").mkdir()
    (root / "data" / "in.csv").write_text("a,b\n1,2\n")
    meta = root / ".snakemake" / "metadata"
    meta.mkdir(parents=True)
    wf = root / "workflows" / "big"
    wf.mkdir(parents=True)
    (wf / "Snakefile").write_text("rule step:\n    output: 'results/part_{i}.txt'\n")
    log = ["Job stats:", "job      count", "-------  -----", f"wf_step  {n}", f"total    {n}", ""]
    for i in range(n):
        out, lg = f"runs/{run_id}/results/part_{i}.txt", f"runs/{run_id}/logs/part_{i}.log"
        (root / out).write_text(f"{i}\n")
        (root / lg).write_text("")
        record = {"rule": "wf_step", "input": ["data/in.csv"], "log": [lg], "shellcmd": f"echo {i} > {out}",
                  "params": [], "code": "echo {wildcards.i} > {output}", "job_hash": 1000 + i,
                  "starttime": 1767225600.0 + i, "endtime": 1767225600.5 + i, "incomplete": False}
        (meta / urlsafe_b64encode(out.encode()).decode()).write_text(json.dumps(record))
        log += ["[Thu Jan  1 00:00:00 2026]", "localrule wf_step:", "    input: data/in.csv", f"    output: {out}",
                f"    log: {lg}", f"    jobid: {i + 1}", f"    wildcards: i={i}", "    resources: tmpdir=/tmp",
                "[Thu Jan  1 00:00:01 2026]", f"Finished jobid: {i + 1} (Rule: wf_step)", f"{i + 1} of {n} steps done"]
    (run_dir / "snakemake.log").write_text("\n".join(log))
    (run_dir / "run.json").write_text(json.dumps({"run_id": run_id, "status": "succeeded", "workflow": "big",
                                                  "started": "2026-01-01T00:00:00.000Z",
                                                  "ended": "2026-01-02T00:00:00.000Z", "exit_code": 0}))
    (run_dir / "invocation.json").write_text(json.dumps({"invocation_id": "ab" * 32, "invocation": {
        "workflow": "big", "version": "1.0.0", "workflow_hash": "x", "params": {"n": n}, "inputs": {}}}))
    manifest = {"id": "big", "version": "1.0.0", "title": "Big",
                "rules": {"step": {"input": {"table": "csv-table"}, "output": {"part": "text"}}},
                "outputs": {"first": {"path": "results/part_0.txt", "type": "text", "description": "x"}}}
    return run_dir, manifest, wf


def test_a_large_run_records_every_job_and_file_once(tmp_path):
    # how long this takes at 1,000 and 10,000 jobs is measured in bench/, not asserted here
    n = 300
    run_dir, manifest, wf = _synthetic_run(tmp_path, n)
    capture.capture(run_dir, tmp_path, tmp_path, manifest, {}, wf, None, "succeeded", "wf_")
    data = prov_json(run_dir)
    assert len(jobs_of(data)) == n
    by_jobs = [r for r in data["wasGeneratedBy"].values() if r["prov:activity"] in jobs_of(data)]
    assert len(by_jobs) == 2 * n and len(data["wasDerivedFrom"]) == n


def test_a_cancelled_run_records_the_finished_job_and_the_one_it_stopped(tmp_path):
    run_dir, manifest, wf = _synthetic_run(tmp_path, 2)
    run_id = run_dir.name
    # the second job was killed: its output never appeared and Snakemake never said it finished
    (tmp_path / f"runs/{run_id}/results/part_1.txt").unlink()
    record_file = tmp_path / ".snakemake" / "metadata" / urlsafe_b64encode(
        f"runs/{run_id}/results/part_1.txt".encode()).decode()
    record_file.unlink()
    log = run_dir / "snakemake.log"
    log.write_text(log.read_text().replace("Finished jobid: 2 (Rule: wf_step)", "Terminating processes on user request"))
    record = json.loads((run_dir / "run.json").read_text())
    record.update(status="cancelled", cancelled_by="SIGINT")
    (run_dir / "run.json").write_text(json.dumps(record))
    capture.capture(run_dir, tmp_path, tmp_path, manifest, {}, wf, None, "cancelled", "wf_")
    data = prov_json(run_dir)
    statuses = {val(a["sg:wildcards"]): val(a["sg:status"]) for a in jobs_of(data).values()}
    assert statuses == {'{"i":"0"}': "succeeded", '{"i":"1"}': "cancelled"}
    run = data["activity"][run_ident(run_dir)]
    assert val(run["sg:status"]) == "cancelled" and val(run["sg:cancelledBy"]) == "SIGINT"
    assert val(run["sg:stoppedAt"]) == f"{run_ident(run_dir)}/job/step/1"
    killed_log = entity_at(data, f"runs/{run_id}/logs/part_1.log")
    assert generated_by(data)[killed_log] == [f"{run_ident(run_dir)}/job/step/1"]


def test_the_provenance_package_imports_no_snakegate_core_module():
    import ast

    for path in sorted((REPO / "snakegate" / "provenance").glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                if name == "snakegate" or name.startswith("snakegate."):
                    assert name.startswith("snakegate.provenance"), f"{path.name} imports {name}"


def test_a_real_cancelled_run_records_the_job_it_stopped_and_the_signal(cancelled_run):
    data = prov_json(cancelled_run)
    statuses = {val(a["sg:rule"]): val(a["sg:status"]) for a in jobs_of(data).values()}
    assert statuses == {"copy": "succeeded", "wait": "cancelled"}
    run = data["activity"][f"{run_ident(cancelled_run)}"]
    assert val(run["sg:status"]) == "cancelled" and val(run["sg:cancelledBy"]) == "SIGINT"
    assert val(run["sg:stoppedAt"]).endswith("/job/wait")
