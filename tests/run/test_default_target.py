"""`snakegate run` and plain `snakemake` build what the workflow's own default target asks for (issue 15.4),
as a standalone run and `snakegate test` do, plus every declared output; `succeeded` still means the
declared outputs exist. Real CLI, real Snakemake, a throw-away registry."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from registry_copies import make_registry

# Rule all asks for a report the contract does not declare, and the contract declares a count rule all does
# not ask for: a run must build all three. Two layouts of the same rules: rule all first (the default target by
# being first), or last with `default_target: True`.
RULES = """\
    rule summary:
        input:
            table=config["table"],
        output:
            summary="results/summary.txt",
        shell:
            "wc -l < {input.table} > {output.summary}"


    rule report:
        input:
            summary="results/summary.txt",
        output:
            report="results/report.txt",
        shell:
            "echo lines: $(cat {input.summary}) > {output.report}"


    rule count:
        input:
            table=config["table"],
        output:
            nbytes="results/count.txt",
        shell:
            "wc -c < {input.table} > {output.nbytes}"
    """
ALL = """\
    rule all:
        input:
            "results/summary.txt",
            "results/report.txt",
    """
LAYOUTS = {"rule-all-first": ALL + "\n\n" + RULES,
           "default-target-last": RULES + "\n\n" + ALL.replace("    input:", "    default_target: True\n        input:", 1)}


def workflow(snakefile: str) -> dict:
    return {
        "workflow.yaml": """\
            id: more-than-declared
            version: 0.1.0
            title: More than declared
            description: Rule all asks for a summary and a report; the contract declares the summary and a count.
            tags: [test]
            maintainers: [{name: snakegate tests}]
            trust: community
            rules:
              summary: {input: {table: csv-table}, output: {summary: text}}
              report: {input: {summary: text}, output: {report: text}}
              count: {input: {table: csv-table}, output: {nbytes: text}}
            outputs:
              summary: {path: results/summary.txt, type: text, description: Line count of the table.}
              count: {path: results/count.txt, type: text, description: Byte count of the table.}
            """,
        "schema.json": json.dumps({
            "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
            "additionalProperties": False, "required": ["table"],
            "properties": {"table": {"type": "string", "x-artifact": "csv-table", "description": "Any CSV table."}},
        }),
        "Snakefile": snakefile,
        "examples/basic.yaml": "workflow: more-than-declared\nparams:\n  table: data/examples/tabular-penguins.csv\n",
    }


@pytest.fixture(params=sorted(LAYOUTS))
def registry(tmp_path, request) -> Path:
    return make_registry(tmp_path / "registry", {"more-than-declared": workflow(LAYOUTS[request.param])})


def _run(root: Path, *argv) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", *argv], cwd=root, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, SNAKEGATE_REGISTRY=str(root)))
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def test_a_run_builds_what_the_workflows_own_default_target_asks_for(registry):
    proc = _run(registry, "snakegate.cli", "run", "workflows/more-than-declared/examples/basic.yaml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (run_dir,) = [p for p in (registry / "runs").iterdir() if p.is_dir()]
    assert (run_dir / "results/report.txt").read_text().startswith("lines: ")  # rule all's, not declared
    assert (run_dir / "results/summary.txt").is_file() and (run_dir / "results/count.txt").is_file()  # declared
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "succeeded"
    assert sorted(o["path"].rsplit("/", 1)[-1] for o in record["outputs"]) == ["count.txt", "summary.txt"]

    again = _run(registry, "snakemake", "--configfile", str(run_dir / "config.yaml"), "--config", "run_id=plain",
                 "--cores", "1")
    assert again.returncode == 0, again.stderr
    for name in ("report.txt", "summary.txt", "count.txt"):
        assert (registry / "runs/plain/results" / name).read_bytes() == (run_dir / "results" / name).read_bytes()
    assert json.loads((registry / "runs/plain/run.json").read_text())["status"] == "succeeded"
