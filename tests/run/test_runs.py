"""Runs: `snakegate run`, plain `snakemake` on the top-level Snakefile, the run store, failure and cancel.

Every test works in a throw-away copy of the registry and drives the real
CLI and the real Snakemake as subprocesses, as a user would.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from registry_copies import REPO, make_registry, run_names
from run_faults import fault_registry

def _yaml(path: Path):
    return YAML(typ="safe", pure=True).load(path.read_text())


@pytest.fixture
def registry(tmp_path) -> Path:
    """A private registry: the real top-level Snakefile, tabular-profile, the fault tests' workflows, demo data."""
    return fault_registry(tmp_path / "registry")


def sg(root: Path, *args, check=None, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, SNAKEGATE_REGISTRY=str(root))
    proc = subprocess.run([sys.executable, "-m", "snakegate.cli", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300, **kw)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    if check is not None:
        assert proc.returncode == check, proc.stdout + proc.stderr
    return proc


def plain_snakemake(root: Path, configfile: Path, *extra) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "snakemake", "--configfile", str(configfile), "--cores", "1", *extra],
                          cwd=root, capture_output=True, text=True, timeout=300)


def only_run(root: Path) -> Path:
    runs = [p for p in (root / "runs").iterdir() if p.is_dir()]
    assert len(runs) == 1, runs
    return runs[0]


def write_config(path: Path, data: dict) -> Path:
    yaml = YAML()
    with open(path, "w") as fh:
        yaml.dump(data, fh)
    return path


@pytest.mark.parametrize("example", sorted(p.name for p in (REPO / "workflows/tabular-profile/examples").glob("*.yaml")))
def test_snakegate_run_of_each_example_produces_the_declared_outputs(registry, example):
    proc = sg(registry, "run", f"workflows/tabular-profile/examples/{example}", check=0)
    run_dir = only_run(registry)
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "succeeded" and record["exit_code"] == 0
    manifest = _yaml(registry / "workflows/tabular-profile/workflow.yaml")
    for out in manifest["outputs"].values():
        assert (run_dir / out["path"]).is_file(), out["path"]
    config = _yaml(run_dir / "config.yaml")
    assert config["run_id"] == run_dir.name and config["invocation_id"] == record["invocation_id"]
    assert Path(config["params"]["dataset_file"]).is_absolute()
    assert {"missing_strategy", "drop_duplicates"} <= set(config["params"])  # defaults made explicit
    assert run_dir.name.endswith(record["invocation_id"][:8])
    assert "succeeded" in proc.stdout and "outputs:" in proc.stdout  # the one-line summary


def test_plain_snakemake_reproduces_a_run_from_its_config_under_a_new_run_id(registry):
    sg(registry, "run", "workflows/tabular-profile/examples/basic.yaml", check=0)
    run_dir = only_run(registry)
    before = (run_dir / "results" / "profile.json").read_bytes()

    again = plain_snakemake(registry, run_dir / "config.yaml", "--config", "run_id=again")
    assert again.returncode == 0, again.stderr
    repeat = registry / "runs" / "again"
    assert (repeat / "results" / "profile.json").read_bytes() == before  # byte-identical
    record = json.loads((repeat / "run.json").read_text())
    assert record["status"] == "succeeded" and record["source"] == "snakemake"
    assert record["invocation_id"] == json.loads((run_dir / "run.json").read_text())["invocation_id"]


def _snapshot(run_dir: Path) -> dict:
    return {p.relative_to(run_dir).as_posix(): (p.stat().st_mtime_ns, p.read_bytes())
            for p in sorted(run_dir.rglob("*")) if p.is_file() and p.name != ".lock"}


def test_plain_snakemake_refuses_to_run_into_a_finished_run_folder(registry):
    sg(registry, "run", "workflows/tabular-profile/examples/basic.yaml", check=0)
    run_dir = only_run(registry)
    shutil.rmtree(run_dir / "results")  # even with its outputs gone, the finished run is not redone in place
    before = _snapshot(run_dir)
    proc = plain_snakemake(registry, run_dir / "config.yaml")
    assert proc.returncode != 0
    assert "[run_exists]" in proc.stderr and str(run_dir) in proc.stderr and "already succeeded" in proc.stderr
    assert f"snakegate rerun {run_dir.name}" in proc.stderr  # the fix
    assert _snapshot(run_dir) == before and not (run_dir / "results").exists()


def test_plain_snakemake_refuses_a_run_folder_of_another_invocation(registry, tmp_path):
    sg(registry, "run", "workflows/tabular-profile/examples/basic.yaml", check=0)
    run_dir = only_run(registry)
    before = _snapshot(run_dir)
    other = write_config(tmp_path / "other.yaml", {"workflow": "tabular-profile", "run_id": run_dir.name, "params": {
        "dataset_file": "data/examples/tabular-penguins.csv", "missing_strategy": "fill_median"}})
    proc = plain_snakemake(registry, other)
    assert proc.returncode != 0
    assert "[run_exists]" in proc.stderr and str(run_dir) in proc.stderr and "another invocation" in proc.stderr
    assert _snapshot(run_dir) == before  # outputs, config and record of the earlier run untouched


def _assert_refused_before_any_job(root: Path, proc, needle: str) -> None:
    assert proc.returncode != 0
    assert needle in proc.stderr, proc.stderr
    assert "gate refused" in proc.stderr
    assert not (root / "runs").exists() or not any((root / "runs").rglob("results/*"))
    metadata = root / ".snakemake" / "metadata"
    assert not metadata.exists() or not any(metadata.iterdir())


def test_plain_snakemake_refuses_a_wrong_type_before_any_job(registry, tmp_path):
    cfg = write_config(tmp_path / "bad.yaml", {"workflow": "tabular-profile", "params": {
        "dataset_file": "data/examples/tabular-penguins.csv", "drop_duplicates": "sometimes"}})
    _assert_refused_before_any_job(registry, plain_snakemake(registry, cfg), "params.drop_duplicates [type]")


def test_plain_snakemake_refuses_a_path_outside_the_data_roots(registry, tmp_path):
    outside = tmp_path / "secret.csv"
    outside.write_text("a,b\n1,2\n")
    cfg = write_config(tmp_path / "bad.yaml", {"workflow": "tabular-profile", "params": {"dataset_file": str(outside)}})
    _assert_refused_before_any_job(registry, plain_snakemake(registry, cfg), "path_outside_roots")


def test_plain_snakemake_refuses_a_tampered_workflow_folder(registry, tmp_path):
    cfg = write_config(tmp_path / "run.yaml", {"workflow": "tabular-profile",
                                               "params": {"dataset_file": "data/examples/tabular-penguins.csv"}})
    approved = json.loads(sg(registry, "validate", str(cfg), "--json", check=0).stdout)["invocation_id"]
    data = _yaml(cfg)
    data["invocation_id"] = approved
    write_config(cfg, data)
    script = registry / "workflows/tabular-profile/scripts/clean.py"
    script.write_text(script.read_text() + "\n# tampered\n")
    _assert_refused_before_any_job(registry, plain_snakemake(registry, cfg), "invocation_mismatch")


def test_a_failing_job_gives_status_failed_with_the_rule_and_its_log(registry, tmp_path):
    cfg = write_config(tmp_path / "fail.yaml", {"workflow": "fails-on-purpose",
                                                "params": {"table": "data/examples/tabular-penguins.csv"}})
    proc = sg(registry, "run", str(cfg), check=1)
    run_dir = only_run(registry)
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "failed"
    assert record["failed_rule"] == "boom"
    assert any(p.endswith("logs/boom.log") for p in record["failed_log"])
    assert (registry / record["failed_log"][0]).read_text().startswith("boom:")
    assert "results/copy.csv" in record["partial_outputs"]  # made before the failure, kept and listed
    assert "failed rule boom" in proc.stdout


DAG_FAILS_WORKFLOW = {
    "workflow.yaml": """\
        id: dag-fails
        version: 0.1.0
        title: Parts
        description: Copies a table into n parts; only parts 0-2 can be made, so n > 3 has no DAG.
        tags: [test]
        maintainers: [{name: snakegate tests}]
        trust: community
        rules:
          part: {input: {table: csv-table}, output: {part: csv-table}}
          combine: {input: {parts: csv-table}, output: {combined: csv-table}}
        outputs:
          combined: {path: results/combined.csv, type: csv-table, description: "The parts, one after another."}
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "additionalProperties": False, "required": ["table"],
        "properties": {
            "table": {"type": "string", "x-artifact": "csv-table", "description": "Any CSV table."},
            "n": {"type": "integer", "minimum": 1, "default": 2, "description": "How many parts."},
        },
    }),
    "Snakefile": """\
        rule all:
            input:
                "results/combined.csv",


        rule combine:
            input:
                parts=expand("results/part{i}.csv", i=range(config["n"])),
            output:
                combined="results/combined.csv",
            shell:
                "cat {input.parts} > {output.combined}"


        rule part:
            input:
                table=config["table"],
            output:
                part="results/part{i}.csv",
            wildcard_constraints:
                i="[0-2]",
            shell:
                "cp {input.table} {output.part}"
        """,
}


def test_params_whose_jobs_snakemake_cannot_build_are_refused_and_leave_no_run(tmp_path):
    """The runner leaves the DAG to Snakemake's own first step; when that fails the gate explains it
    (code `dag`) and, since no job ran, no run folder is left behind."""
    root = make_registry(tmp_path / "registry", {"dag-fails": DAG_FAILS_WORKFLOW})
    table = "data/examples/tabular-penguins.csv"
    bad = write_config(tmp_path / "bad.yaml", {"workflow": "dag-fails", "params": {"table": table, "n": 5}})
    proc = sg(root, "run", str(bad), check=1)
    assert "[dag]" in proc.stderr and "part3.csv" in proc.stderr, proc.stderr
    assert "nothing was run" in proc.stderr
    assert run_names(root) == set()
    good = write_config(tmp_path / "good.yaml", {"workflow": "dag-fails", "params": {"table": table, "n": 3}})
    sg(root, "run", str(good), check=0)
    assert (only_run(root) / "results" / "part2.csv").is_file()


def test_two_concurrent_runs_of_different_configs_do_not_interfere(registry, tmp_path):
    a = write_config(tmp_path / "a.yaml", {"workflow": "tabular-profile",
                                           "params": {"dataset_file": "data/examples/tabular-penguins.csv"}})
    b = write_config(tmp_path / "b.yaml", {"workflow": "tabular-profile", "params": {
        "dataset_file": "data/examples/tabular-penguins.csv", "missing_strategy": "fill_median"}})
    env = dict(os.environ, SNAKEGATE_REGISTRY=str(registry))
    procs = [subprocess.Popen([sys.executable, "-m", "snakegate.cli", "run", str(c)], cwd=registry, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in (a, b)]
    results = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    runs = sorted(p for p in (registry / "runs").iterdir() if p.is_dir())
    assert len(runs) == 2
    records = [json.loads((r / "run.json").read_text()) for r in runs]
    assert {r["status"] for r in records} == {"succeeded"}
    assert len({r["invocation_id"] for r in records}) == 2
    strategies = {_yaml(r / "config.yaml")["params"]["missing_strategy"] for r in runs}
    assert strategies == {"remove", "fill_median"}


def test_a_busy_run_folder_refuses_a_second_execution(registry):
    from snakegate.provenance.runstore import RunLock

    sg(registry, "run", "workflows/tabular-profile/examples/basic.yaml", check=0)
    run_dir = only_run(registry)
    shutil.rmtree(run_dir / "results")
    with RunLock(run_dir):
        proc = plain_snakemake(registry, run_dir / "config.yaml")
    assert proc.returncode != 0
    assert "is busy" in proc.stderr
    assert not (run_dir / "results").exists()


def test_options_snakegate_does_not_pass_through_are_refused(registry):
    proc = sg(registry, "run", "workflows/tabular-profile/examples/basic.yaml", "--forceall", check=2)
    assert "--forceall is not passed to Snakemake" in proc.stderr
    assert not (registry / "runs").exists()


def test_runs_and_show_run_list_the_run_store(registry):
    sg(registry, "run", "workflows/tabular-profile/examples/basic.yaml", check=0)
    listing = json.loads(sg(registry, "runs", "--json", check=0).stdout)["runs"]
    assert len(listing) == 1 and listing[0]["status"] == "succeeded" and listing[0]["workflow"] == "tabular-profile"
    shown = sg(registry, "show-run", "latest", check=0).stdout
    assert listing[0]["run_id"] in shown and "succeeded" in shown
    sg(registry, "show-run", "no-such-run", check=1)
