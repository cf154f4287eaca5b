"""snakegate prov / verify / rerun / fork / diff / export on real runs of tabular-profile.

The session's shared git registry (prov_runs.py) provides three real runs: a base
run, its rerun, and a fork with missing_strategy=fill_mean. Commands that only read
(prov, verify, diff, export) run in-process; rerun and fork run as the console
command, as a user would.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from prov_runs import prov_json, types, val  # the runs themselves: session fixtures in conftest.py
from registry_copies import run_names as runs
from prov_iris import run_ident


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


OUTPUTS = {"cleaned": "results/cleaned.csv", "profile": "results/profile.json", "plot": "results/profile.png"}


@pytest.fixture
def registry(prov_registry) -> Path:
    return prov_registry


@pytest.fixture
def base(succeeded_run) -> Path:
    return succeeded_run


@pytest.fixture
def rerun(rerun_run):
    return rerun_run


@pytest.fixture
def fork(fork_run):
    return fork_run


def entity_at(data: dict, path: str) -> str:
    found = [i for i, a in data["entity"].items() if val(a.get("prov:location")) == path]
    assert len(found) == 1, (path, found)
    return found[0]


@pytest.fixture
def sg(cli, registry):
    """`snakegate --registry <the module's registry> ARGS` in-process: (exit code, stdout, stderr)."""
    return lambda *args: cli("--registry", registry, *args)


# ---- prov ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt,start", [("provn", "document"), ("json", "{"), ("ttl", "@prefix")])
def test_prov_prints_the_run_record_in_each_format(sg, base, fmt, start):
    code, out, _ = sg("prov", base.name, "--format", fmt)
    assert code == 0
    assert out.startswith(start) and out == (base / f"prov.{fmt}").read_text()


def test_prov_accepts_a_unique_prefix_and_defaults_to_prov_n(sg, base):
    code, out, _ = sg("prov", base.name[:-3])
    assert code == 0 and out == (base / "prov.provn").read_text()


def test_prov_of_an_unknown_run_is_one_clear_message(sg, base):
    code, out, err = sg("prov", "no-such-run")
    assert code == 1 and out == ""
    assert "no run `no-such-run`" in err and "snakegate runs" in err


def test_prov_of_a_run_without_a_record_says_why(sg, registry):
    folder = registry / "runs" / "20000101T000000Z-unfinished"
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"run_id": folder.name, "status": "running"}))
    try:
        code, _, err = sg("prov", folder.name)
        assert code == 1 and "has no prov.provn (status: running)" in err
        code, _, err = sg("verify", folder.name)
        assert code == 1 and "no provenance record" in err
    finally:
        shutil.rmtree(folder)


# ---- verify -------------------------------------------------------------------------------------
def test_verify_passes_for_an_untouched_run(sg, base):
    code, out, _ = sg("verify", base.name)
    assert code == 0 and out.startswith("ok:") and "workflow folder" in out


def test_verify_catches_one_changed_output_byte(sg, base):
    target = base / "results" / "cleaned.csv"
    original = target.read_bytes()
    changed = bytearray(original)
    changed[10] ^= 0x01
    target.write_bytes(bytes(changed))
    try:
        code, out, _ = sg("verify", base.name)
        assert code == 1
        assert f"runs/{base.name}/results/cleaned.csv: content changed" in out
        listed = [line for line in out.splitlines() if line.startswith("  - ")]
        assert listed and all("results/cleaned.csv" in line for line in listed)  # only that file (and its seal)
        code, out, _ = sg("verify", base.name, "--json")
        report = json.loads(out)
        assert code == 1 and not report["ok"]
        assert [m["path"] for m in report["mismatches"]] == [f"runs/{base.name}/results/cleaned.csv"]
    finally:
        target.write_bytes(original)


def test_verify_checks_the_runs_own_workflow_copy_not_the_registry(sg, base, registry):
    """A run executes runs/<id>/workflow/ (a read-only copy): the registry moving on changes nothing
    about it, while a change to the copy itself is named."""
    script = registry / "workflows" / "tabular-profile" / "scripts" / "plot.py"
    original = script.read_text()
    script.write_text(original + "\n# edited after the run\n")
    try:
        code, out, _ = sg("verify", base.name)
        assert code == 0 and out.startswith("ok:"), out
    finally:
        script.write_text(original)
    copied = base / "workflow" / "scripts" / "plot.py"
    folder_mode, file_mode = copied.parent.stat().st_mode, copied.stat().st_mode
    copied.parent.chmod(0o755)
    copied.chmod(0o644)
    kept = copied.read_text()
    copied.write_text(kept + "\n# tampered\n")
    try:
        code, out, _ = sg("verify", base.name)
        assert code == 1 and f"runs/{base.name}/workflow: the workflow folder changed since the run" in out, out
    finally:
        copied.write_text(kept)
        copied.chmod(file_mode)
        copied.parent.chmod(folder_mode)


# ---- rerun --------------------------------------------------------------------------------------
def test_rerun_reports_every_output_identical(rerun, base):
    run_dir, proc = rerun
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in OUTPUTS:
        assert any(line.split() == [name, "identical"] for line in proc.stdout.splitlines()), proc.stdout
    assert "reproduced: all 3 outputs are byte-identical" in proc.stdout
    record = json.loads((run_dir / "run.json").read_text())
    assert record["rerun_of"] == base.name and record["status"] == "succeeded"
    assert record["invocation_id"] == json.loads((base / "run.json").read_text())["invocation_id"]
    run = prov_json(run_dir)["activity"][f"{run_ident(run_dir)}"]
    assert val(run["sg:rerunOf"]) == f"{run_ident(base)}"


# ---- fork ---------------------------------------------------------------------------------------
def test_fork_records_that_its_invocation_derives_from_the_parents(fork, base):
    run_dir, proc = fork
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = prov_json(run_dir)
    parent_inv = json.loads((base / "invocation.json").read_text())["invocation_id"]
    fork_inv = json.loads((run_dir / "invocation.json").read_text())
    assert fork_inv["invocation"]["params"]["missing_strategy"] == "fill_mean"
    assert any(r["prov:generatedEntity"] == f"inv:{fork_inv['invocation_id']}"
               and r["prov:usedEntity"] == f"inv:{parent_inv}" for r in data["wasDerivedFrom"].values())
    run = data["activity"][f"{run_ident(run_dir)}"]
    assert val(run["sg:forkOf"]) == f"{run_ident(base)}"
    assert json.loads(val(run["sg:forkChanges"])) == {"missing_strategy": "fill_mean"}


def test_fork_re_executes_only_the_jobs_downstream_of_the_changed_parameter(fork, base):
    run_dir, proc = fork
    record = json.loads((run_dir / "run.json").read_text())
    assert sorted(record["jobs_executed"]) == ["clean", "plot", "profile"]  # 3 of 4 rules; load not re-run
    data = prov_json(run_dir)
    jobs = [val(a["sg:rule"]) for a in data["activity"].values() if "wfprov:ProcessRun" in types(a)]
    assert sorted(jobs) == ["clean", "plot", "profile"]
    # load's output was copied from the parent, and the record says so
    loaded = entity_at(data, f"runs/{run_dir.name}/results/loaded.csv")
    parents = entity_at(data, f"runs/{base.name}/results/loaded.csv")
    seed = f"{run_ident(run_dir)}/seed"
    assert any(r["prov:entity"] == loaded and r["prov:activity"] == seed for r in data["wasGeneratedBy"].values())
    assert any(r["prov:generatedEntity"] == loaded and r["prov:usedEntity"] == parents
               for r in data["wasDerivedFrom"].values())
    assert sha256(run_dir / "results/loaded.csv") == sha256(base / "results/loaded.csv")
    assert "re-executed 3 job(s): clean, profile, plot" in proc.stdout


def test_fork_refuses_a_value_the_contract_does_not_allow(sg, base, registry):
    before = runs(registry)
    code, _, err = sg("fork", base.name, "--set", "missing_strategy=fill_mena")
    assert code == 1
    assert "params.missing_strategy [enum]" in err and "fill_mean" in err
    assert runs(registry) == before


def test_fork_refuses_a_change_that_alters_no_job(sg, base, registry):
    before = runs(registry)
    code, _, err = sg("fork", base.name, "--set", "missing_strategy=remove")
    assert code == 1 and "changes no job" in err and "snakegate rerun" in err
    assert runs(registry) == before


@pytest.mark.parametrize("arg,needle", [("missing_strategy", "--set expects KEY=VALUE"),
                                        ("=x", "--set expects KEY=VALUE"),
                                        ("a..b=1", "not a parameter name")])
def test_fork_explains_a_malformed_set(sg, base, arg, needle):
    code, _, err = sg("fork", base.name, "--set", arg)
    assert code == 2 and needle in err


def test_fork_passes_only_the_allowed_snakemake_options(sg, base):
    code, _, err = sg("fork", base.name, "--set", "missing_strategy=fill_median", "--forceall")
    assert code == 2 and "is not passed to Snakemake" in err


def test_set_values_are_read_as_yaml_and_dotted_keys_nest():
    from snakegate.commands.lineage_cmds import apply_set, parse_set

    params = {"a": {"b": 1}}
    for text in ("a.c=true", "n=3", "xs=[x, y]", "params.s=fill_mean", "q='3'"):
        parts, value = parse_set(text)
        apply_set(params, parts, value)
    assert params == {"a": {"b": 1, "c": True}, "n": 3, "xs": ["x", "y"], "s": "fill_mean", "q": "3"}


# ---- diff ---------------------------------------------------------------------------------------
def test_diff_lists_exactly_the_changed_parameter_and_the_changed_outputs(sg, fork, base):
    run_dir, _ = fork
    code, out, _ = sg("diff", base.name, run_dir.name, "--json")
    assert code == 0
    result = json.loads(out)
    assert result["params"] == [{"path": "params.missing_strategy", "change": "changed", "a": "remove",
                                 "b": "fill_mean"}]
    changed = {name for name, rel in OUTPUTS.items() if sha256(base / rel) != sha256(run_dir / rel)}
    assert changed  # the penguins table has missing values, so filling them changes the outputs
    assert {o["name"] for o in result["outputs"]} == changed
    assert set(result["identical_outputs"]) == set(OUTPUTS) - changed
    profile = next(o for o in result["outputs"] if o["name"] == "profile")
    assert profile["values"] and all(v["change"] == "changed" for v in profile["values"])
    a = json.loads((base / OUTPUTS["profile"]).read_text())
    first = profile["values"][0]
    node = a
    for part in first["path"].replace("]", "").replace("[", ".").split("."):
        node = node[int(part)] if isinstance(node, list) else node[part]
    assert node == first["a"]


def test_diff_as_text_names_the_parameter_and_the_outputs(sg, fork, base):
    run_dir, _ = fork
    code, out, _ = sg("diff", base.name, run_dir.name)
    assert code == 0
    assert "params.missing_strategy: 'remove' -> 'fill_mean'" in out
    assert "results/profile.json" in out and "value(s) changed" in out


def test_diff_of_a_run_with_its_rerun_finds_nothing(sg, rerun, base):
    run_dir, _ = rerun
    result = json.loads(sg("diff", base.name, run_dir.name, "--json")[1])
    assert result["params"] == [] and result["outputs"] == []
    assert set(result["identical_outputs"]) == set(OUTPUTS)


# ---- export -------------------------------------------------------------------------------------
def test_export_writes_a_crate_that_passes_the_provenance_run_crate_profile(sg, base, tmp_path, roc_validator):
    dest = tmp_path / "crate"
    code, out, err = sg("export", base.name, "--ro-crate", dest, "--validate")
    assert code == 0, out + err
    assert "passes the provenance-run-crate-0.5 profile" in out
    metadata = json.loads((dest / "ro-crate-metadata.json").read_text())
    graph = {e["@id"]: e for e in metadata["@graph"]}
    root = graph["./"]
    assert {"@id": "https://w3id.org/ro/wfrun/provenance/0.5"} in root["conformsTo"]
    main = graph[root["mainEntity"]["@id"]]
    assert {"ComputationalWorkflow", "HowTo"} <= set(main["@type"])
    actions = [e for e in graph.values() if e.get("@type") == "CreateAction"]
    assert len(actions) == 5  # the run and its four jobs
    for rel in OUTPUTS.values():
        assert (dest / "runs" / base.name / rel).read_bytes() == (base / rel).read_bytes()
    assert (dest / "runs" / base.name / "prov.json").is_file()


def test_export_to_a_zip_and_refuses_a_non_empty_folder(sg, base, tmp_path, roc_validator):
    from snakegate.provenance.rocrate import export as rocrate_export

    target = tmp_path / "run.zip"
    code, _, err = sg("export", base.name, "--ro-crate", target)
    assert code == 0, err
    with zipfile.ZipFile(target) as zf:
        assert "ro-crate-metadata.json" in zf.namelist()
    assert rocrate_export.validate(target) == []
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("x")
    code, _, err = sg("export", base.name, "--ro-crate", full)
    assert code == 2 and "is not empty" in err


def test_the_validator_rejects_a_crate_whose_workflow_is_not_a_howto(sg, base, tmp_path, roc_validator):
    from snakegate.provenance.rocrate import export as rocrate_export

    dest = tmp_path / "broken"
    assert sg("export", base.name, "--ro-crate", dest)[0] == 0
    path = dest / "ro-crate-metadata.json"
    metadata = json.loads(path.read_text())
    for entity in metadata["@graph"]:
        if isinstance(entity.get("@type"), list) and "HowTo" in entity["@type"]:
            entity["@type"].remove("HowTo")
    path.write_text(json.dumps(metadata))
    problems = rocrate_export.validate(dest)
    assert any("HowTo" in p for p in problems), problems


def test_export_validate_without_a_validator_names_the_command_that_provisions_one(sg, base, tmp_path, monkeypatch):
    monkeypatch.setenv("SNAKEGATE_ROC_VALIDATOR", str(tmp_path / "no-such-validator"))
    dest = tmp_path / "crate"
    code, out, err = sg("export", base.name, "--ro-crate", dest, "--validate")
    assert code == 2 and "Traceback" not in err
    assert "python3 -m venv .ci/.rocval" in err and "the crate itself was written" in err
    assert (dest / "ro-crate-metadata.json").is_file()
