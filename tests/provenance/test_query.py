"""`snakegate prov RUN --who | --inputs | --outputs | --derived FILE`: named SPARQL queries over prov.ttl.

The questions cwlprov's `who` and `derived` answer, asked of the session's real runs
(prov_runs.py) and checked against the files on disk and the installed software.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import shutil
from pathlib import Path

import pytest



@pytest.fixture
def ask(cli, prov_registry):
    def run(*args):
        return cli("--registry", prov_registry, "prov", *args)
    return run


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_who_names_the_person_the_engine_and_the_gate_with_versions(ask, succeeded_run):
    code, out, _ = ask(succeeded_run.name, "--who", "--json")
    assert code == 0
    rows = {(r["kind"], r["role"]): r for r in json.loads(out)}
    assert rows[("wfprov:WorkflowRun", "sg:operator")]["name"] == "Ada Tester"
    engine = rows[("wfprov:WorkflowRun", "sg:workflowEngine")]
    assert engine["name"] == "Snakemake" and engine["version"] == importlib.metadata.version("snakemake")
    assert rows[("sg:GateDecision", "sg:gateKeeper")]["name"] == "snakegate"
    code, text, _ = ask(succeeded_run.name, "--who")
    assert "operator" in text and "Ada Tester" in text and f"Snakemake {engine['version']}" in text


def test_who_of_a_chat_run_names_the_approver_and_the_model(ask, succeeded_run, prov_registry, tmp_path, monkeypatch):
    from snakegate.provenance import capture, origin
    from snakegate.registry.workflows import Registry

    runs = tmp_path / "runs"
    run_dir = runs / succeeded_run.name
    shutil.copytree(succeeded_run, run_dir)
    for name in ("prov.json", "prov.provn", "prov.ttl"):
        (run_dir / name).unlink(missing_ok=True)
    origin.record_origin(run_dir, model="qwen2.5:7b", proposed_by_backend="openai-compatible",
                         approved_by="Grace Approver", approved_at="2026-01-31T10:00:00Z", conversation_id="c-1")
    wf = Registry.load(prov_registry).get("tabular-profile")
    capture.capture(run_dir, prov_registry, prov_registry, wf.manifest.model_dump(), wf.schema, wf.folder, None,
                    "succeeded", "wf_")
    monkeypatch.setenv("SNAKEGATE_RUNS", str(runs))
    code, out, err = ask(run_dir.name, "--who", "--json")
    assert code == 0, err
    rows = {(r["kind"], r["role"]): r["name"] for r in json.loads(out)}
    assert rows[("sg:Approval", "sg:approver")] == "Grace Approver"
    assert rows[("sg:Approval", "sg:proposer")] == "qwen2.5:7b"


def test_inputs_are_the_files_no_job_made_with_their_hashes(ask, succeeded_run, prov_registry):
    code, out, _ = ask(succeeded_run.name, "--inputs", "--json")
    assert code == 0
    rows = json.loads(out)
    assert {r["path"] for r in rows} == {"data/examples/tabular-penguins.csv"}
    assert rows[0]["sha256"] == sha256(prov_registry / "data/examples/tabular-penguins.csv")
    assert rows[0]["job"].endswith("/job/load") and rows[0]["role"].endswith("/rule/load/input/dataset")


def test_outputs_are_every_file_a_job_made_with_their_hashes(ask, succeeded_run, prov_registry):
    code, out, _ = ask(succeeded_run.name, "--outputs", "--json")
    assert code == 0
    rows = json.loads(out)
    made = {p.relative_to(prov_registry).as_posix() for sub in ("results", "logs")
            for p in (succeeded_run / sub).rglob("*") if p.is_file()}
    assert {r["path"] for r in rows} == made
    for row in rows:
        assert row["sha256"] == sha256(prov_registry / row["path"])
    assert {r["declared"] for r in rows if r["declared"]} == {"cleaned", "profile", "plot"}


def test_derived_follows_the_chain_back_to_the_input_and_forward_from_it(ask, succeeded_run):
    code, out, _ = ask(succeeded_run.name, "--derived", "results/profile.json", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["file"] == f"runs/{succeeded_run.name}/results/profile.json"
    assert [m["job"].rsplit("/", 1)[-1] for m in result["made_by"]] == ["profile"]
    sources = {Path(r["path"]).name for r in result["derived_from"]}
    assert sources == {"cleaned.csv", "loaded.csv", "tabular-penguins.csv"}  # transitively, back to the input
    code, out, _ = ask(succeeded_run.name, "--derived", "data/examples/tabular-penguins.csv", "--json")
    into = {r["path"] for r in json.loads(out)["derived_into"]}
    staged = f"runs/{succeeded_run.name}/inputs/data/examples/tabular-penguins.csv"  # the copy the jobs read
    assert {Path(p).name for p in into} == {"tabular-penguins.csv", "loaded.csv", "cleaned.csv", "profile.json",
                                            "profile.png"} and staged in into
    code, text, _ = ask(succeeded_run.name, "--derived", "results/profile.json")
    assert "made by job profile (succeeded)" in text and "derived from (4):" in text


def test_derived_of_a_fork_output_reaches_the_parent_file_it_copied(ask, fork_run, succeeded_run):
    run_dir, _ = fork_run
    code, out, _ = ask(run_dir.name, "--derived", "results/profile.json", "--json")
    assert code == 0
    paths = {r["path"] for r in json.loads(out)["derived_from"]}
    assert f"runs/{succeeded_run.name}/results/loaded.csv" in paths


def test_a_file_the_run_did_not_record_is_a_clear_refusal(ask, succeeded_run):
    code, out, err = ask(succeeded_run.name, "--derived", "results/nope.json")
    assert code == 1 and out == "" and "Traceback" not in err
    assert "records no file `results/nope.json`" in err
    code, _, err = ask(succeeded_run.name, "--derived", "profile.json")
    assert code == 1 and "did you mean" in err and "results/profile.json" in err


def test_a_question_and_a_format_do_not_mix(ask, succeeded_run):
    code, _, err = ask(succeeded_run.name, "--who", "--format", "json")
    assert code == 2 and "not allowed" in err
    code, _, err = ask(succeeded_run.name, "--json")
    assert code == 2 and "--json goes with a question" in err


def test_a_big_run_is_queried_from_its_prov_json_alone(ask, succeeded_run, tmp_path, monkeypatch):
    expected = json.loads(ask(succeeded_run.name, "--outputs", "--json")[1])
    runs = tmp_path / "runs"
    run_dir = runs / succeeded_run.name
    shutil.copytree(succeeded_run, run_dir)
    (run_dir / "prov.ttl").unlink(missing_ok=True)
    (run_dir / "prov.provn").unlink()
    monkeypatch.setenv("SNAKEGATE_RUNS", str(runs))
    code, out, _ = ask(run_dir.name, "--outputs", "--json")
    assert code == 0 and json.loads(out) == expected and len(expected) == 8
    assert (run_dir / "prov.ttl").is_file()
