"""Per-rule resources in the contract: workflow.yaml declares them, every run gets them, `snakegate check` proves them.

The run tests use a tiny workflow whose one shell rule writes the threads and
resources Snakemake gave it, run with the real Snakemake through the top-level
Snakefile; the check tests plant a bad declaration in the clean fixture
contribution and run the real check in-process. (That they reach Slurm's sbatch
is in test_slurm.py.)
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from registry_copies import make_registry

ROOT = Path(__file__).resolve().parents[2]
CLEAN = ROOT / "tests" / "fixtures" / "broken" / "workflows" / "clean"

SIZED = {
    "workflow.yaml": """\
        id: sized
        version: 0.1.0
        title: Sized job
        description: One rule that writes the threads and resources it was given.
        tags: [test]
        maintainers: [{name: snakegate tests}]
        trust: community
        rules:
          report:
            input: {table: csv-table}
            output: {report: text}
            resources: {threads: {param: workers}, mem_mb: {param: workers, times: 300, plus: 100}, runtime: 7}
        outputs:
          report: {path: results/report.txt, type: text, description: What the job was given.}
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": False,
        "required": ["table"],
        "properties": {
            "table": {"type": "string", "x-artifact": "csv-table", "description": "Any CSV table."},
            "workers": {"type": "integer", "minimum": 1, "maximum": 8, "default": 2, "description": "Threads."},
        },
    }),
    "Snakefile": """\
        rule all:
            input:
                "results/report.txt",


        rule report:
            input:
                table=config["table"],
            output:
                report="results/report.txt",
            params:
                workers=config["workers"],
            shell:
                "echo {threads} {resources.mem_mb} {resources.runtime} > {output.report}"
        """,
}


@pytest.fixture
def registry(tmp_path) -> Path:
    return make_registry(tmp_path / "registry", {"sized": SIZED})


def run_sized(root: Path, tmp_path: Path, params: dict, *extra: str) -> list[str]:
    config = tmp_path / "run.yaml"
    config.write_text(json.dumps({"workflow": "sized", "params": {"table": "data/examples/tabular-penguins.csv",
                                                                  **params}}))
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--configfile", str(config), "--cores", "8", *extra],
                          cwd=root, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (report,) = (root / "runs").glob("*/results/report.txt")
    return report.read_text().split()


def test_a_run_gets_the_contracts_threads_memory_and_runtime_from_its_params(registry, tmp_path):
    assert run_sized(registry, tmp_path, {"workers": 3}) == ["3", "1000", "7"]  # 3 * 300 + 100 MB


def test_a_default_param_sizes_the_rule_too(registry, tmp_path):
    assert run_sized(registry, tmp_path, {}) == ["2", "700", "7"]


def test_the_users_set_threads_and_set_resources_still_win(registry, tmp_path):
    given = run_sized(registry, tmp_path, {"workers": 3}, "--set-threads", "wf_report=1",
                      "--set-resources", "wf_report:mem_mb=123")
    assert given == ["1", "123", "7"]


def test_the_profiles_default_resources_do_not_override_the_contract(registry, tmp_path):
    given = run_sized(registry, tmp_path, {"workers": 1}, "--default-resources", "mem_mb=5000", "runtime=90")
    assert given == ["1", "400", "7"]


# ---- snakegate check ---------------------------------------------------------------------------


@pytest.fixture
def planted(tmp_path, cli):
    """plant(resources for rule `head`, snakefile=edit, rows=schema changes) -> (exit code, findings of `clean`)."""
    root = tmp_path / "checked"
    shutil.copytree(ROOT / "tests" / "fixtures" / "broken" / "data", root / "data")
    folder = root / "workflows" / "clean"

    def plant(resources: str, snakefile=None, **rows):
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(CLEAN, folder)
        manifest = folder / "workflow.yaml"
        manifest.write_text(manifest.read_text().replace(
            "    output: {head: csv-table}\n", f"    output: {{head: csv-table}}\n    resources: {resources}\n"))
        if snakefile:
            (folder / "Snakefile").write_text(snakefile((folder / "Snakefile").read_text()))
        if rows:
            schema = json.loads((folder / "schema.json").read_text())
            for key, value in rows.items():
                if value is None:
                    schema["properties"]["rows"].pop(key)
                else:
                    schema["properties"]["rows"][key] = value
            (folder / "schema.json").write_text(json.dumps(schema))
        code, out, err = cli("--registry", root, "check", "clean", "--json", "--no-hygiene")
        assert "Traceback" not in out + err
        return code, json.loads(out)["findings"]
    return plant


def _messages(findings, code, severity="error"):
    return [f["message"] for f in findings if f["code"] == code and f["severity"] == severity]


def test_check_accepts_resources_that_follow_a_param_with_a_minimum(planted):
    code, findings = planted("{threads: {param: rows}, mem_mb: {param: rows, times: 100}, runtime: 5}")
    assert code == 0 and findings == []


def test_check_refuses_a_resource_that_names_an_undeclared_param(planted):
    code, findings = planted("{threads: {param: row}}")
    assert code == 1
    (message,) = _messages(findings, "resource_invalid")
    assert "rules.head.resources.threads names param `row`, which schema.json does not declare" in message
    assert "did you mean `rows`?" in message


def test_check_refuses_a_resource_that_follows_a_text_param(planted):
    code, findings = planted("{mem_mb: {param: table_file}}")
    assert code == 1
    (message,) = _messages(findings, "resource_invalid")
    assert "follows param `table_file`, which is string, not a number" in message


def test_check_refuses_a_resource_that_comes_to_zero_at_the_params_minimum(planted):
    code, findings = planted("{threads: {param: rows}}", minimum=0)
    assert code == 1
    (message,) = _messages(findings, "resource_invalid")
    assert "rules.head.resources.threads comes to 0 with param `rows` at its minimum 0" in message


def test_check_refuses_a_param_without_a_minimum(planted):
    code, findings = planted("{runtime: {param: rows}}", minimum=None)
    assert code == 1
    (message,) = _messages(findings, "resource_invalid")
    assert "whose schema has no minimum, so the runtime could come to 0 or less" in message


def test_check_refuses_a_param_a_run_config_may_leave_out(planted):
    code, findings = planted("{mem_mb: {param: rows, times: 100}}", default=None)
    assert code == 1
    (message,) = _messages(findings, "resource_invalid")
    assert "which a run config may leave out (it is not required and has no default)" in message


def test_workflow_yaml_refuses_an_unknown_resource_and_zero_threads(planted):
    code, findings = planted("{gpus: 1}")
    assert code == 1 and _messages(findings, "manifest_invalid")
    code, findings = planted("{threads: 0}")
    assert code == 1 and _messages(findings, "manifest_invalid")


def test_check_warns_when_the_snakefile_sets_other_threads_than_the_contract(planted):
    def threads_two(text):
        return text.replace("    params:\n        rows=", "    threads: 2\n    params:\n        rows=", 1)
    code, findings = planted("{threads: {param: rows}}", snakefile=threads_two)
    assert code == 0
    (message,) = _messages(findings, "resource_differs", "warning")
    assert "rule `head` sets threads: 2 in its Snakefile, but workflow.yaml declares threads: {param: rows}" in message


def test_check_takes_config_param_in_the_snakefile_as_agreeing(planted):
    def threads_rows(text):
        return text.replace("    params:\n        rows=", "    threads: config[\"rows\"]\n    params:\n        rows=", 1)
    code, findings = planted("{threads: {param: rows}}", snakefile=threads_rows)
    assert code == 0 and findings == []


@pytest.mark.parametrize("resources, shown", [
    ("{mem_mb: 4GB}", "rules.head.resources.mem_mb: '4GB'"),                      # a size with a unit
    ("{runtime: 1.5}", "rules.head.resources.runtime: 1.5"),                      # not a whole number
    ("{mem_mb: -100}", "rules.head.resources.mem_mb: -100"),
    ("{threads: true}", "rules.head.resources.threads: True"),                    # YAML's yes is not 1
    ("{threads: {param: rows, factor: 2}}", "rules.head.resources.threads: {'param': 'rows', 'factor': 2}"),
    ("{mem_mb: {times: 100}}", "rules.head.resources.mem_mb: {'times': 100}"),    # no param to follow
    ("{mem_mb: {param: rows, times: 0}}", "rules.head.resources.mem_mb: {'param': 'rows', 'times': 0}"),
    ("{runtime: {param: rows, plus: -5}}", "rules.head.resources.runtime: {'param': 'rows', 'plus': -5}"),
    ("8", "rules.head.resources: 8"),                                             # not a mapping
    ("{}", "rules.head.resources: {}"),                                           # says nothing
])
def test_check_refuses_a_malformed_resources_entry_naming_the_field_and_value(planted, resources, shown):
    code, findings = planted(resources)
    assert code == 1
    (message,) = _messages(findings, "manifest_invalid")
    assert message.startswith(shown)
    if shown.startswith("rules.head.resources."):  # a value: the message says what one may be
        assert "it takes a whole number from 1" in message and "{param:" in message


# ---- the curated workflows ---------------------------------------------------------------------

CURATED = sorted(p.parent for p in (ROOT / "workflows").glob("*/workflow.yaml"))


def _snakemake_rules(folder: Path, tmp_path: Path) -> set[str]:
    """The rules the real Snakemake reads from the workflow's Snakefile (params of its first test case)."""
    case = sorted((folder / "test").glob("*/config.yaml"))[0]
    config = tmp_path / f"{folder.name}.json"
    config.write_text(json.dumps(YAML(typ="safe").load(case.read_text())["params"]))
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(folder / "Snakefile"), "--configfile",
                           str(config), "--list-rules"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return set(proc.stdout.split())


@pytest.mark.parametrize("folder", CURATED, ids=[p.name for p in CURATED])
def test_every_rule_of_a_curated_workflow_declares_its_memory_and_runtime(folder, tmp_path):
    """What a scheduler needs, for every job a run submits: no rule left to the profile's defaults."""
    rules = YAML(typ="safe").load((folder / "workflow.yaml").read_text())["rules"]
    # `all` only names the targets and runs no job; every other rule must be in the contract
    assert _snakemake_rules(folder, tmp_path) - {"all"} == set(rules)
    undeclared = [f"{rule}: {sorted({'mem_mb', 'runtime'} - set((io or {}).get('resources') or {}))}"
                  for rule, io in sorted(rules.items())
                  if not {"mem_mb", "runtime"} <= set((io or {}).get("resources") or {})]
    assert undeclared == [], f"{folder.name}: rules without mem_mb/runtime: {undeclared}"
