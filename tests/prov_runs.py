"""One throw-away git registry with a real run of every kind, shared by the provenance test modules.

Import the fixtures into a test module (`from prov_runs import prov_registry, succeeded_run, ...`):
they are session-scoped, so each run happens once per pytest session whichever modules use it.

- succeeded: `snakegate run` of tabular-profile's basic example;
- failed: tiny-fail, whose third rule exits 1 (its `token` is x-sensitive);
- rerun and fork (missing_strategy=fill_mean) of the succeeded run, as the console commands;
- cancelled: a run whose second job sleeps, stopped with SIGINT sent to `snakegate run` by PID;
- plain: the succeeded run's example under plain `snakemake`.

The registry also holds LEAKY, for views/report_runs.py's leaky run.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from registry_copies import clean_env, make_registry, new_run, run_names, snakegate

SECRET = "s3cret-token-0042"

TINY_FAIL = {
    "workflow.yaml": """\
        id: tiny-fail
        version: 0.1.0
        title: Tiny failing workflow
        description: Writes two parts, joins them, then fails on purpose in the last rule.
        tags: [test]
        maintainers: [{name: snakegate tests}]
        trust: community
        rules:
          part: {output: {part: text}}
          join: {input: {parts: text}, output: {joined: text, lines: text}}
          explode: {input: {joined: text}, output: {final: text}}
        outputs:
          final: {path: results/final.txt, type: text, description: Never written.}
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "additionalProperties": False, "required": ["token"],
        "properties": {
            "greeting": {"type": "string", "default": "hello", "description": "Text written into each part."},
            "token": {"type": "string", "x-sensitive": True, "description": "A secret that never leaves the machine."},
        },
    }),
    "Snakefile": """\
        from snakemake.utils import validate

        validate(config, "schema.json")

        NAMES = ["a", "b"]


        rule all:
            input:
                "results/final.txt",


        rule part:
            output:
                part="results/parts/{name}.txt",
            params:
                greeting=config["greeting"],
                token=config["token"],
            log:
                "logs/part_{name}.log",
            shell:
                "echo {params.greeting} {wildcards.name} > {output.part} 2> {log}"


        rule join:
            input:
                parts=expand("results/parts/{name}.txt", name=NAMES),
            output:
                joined="results/joined.txt",
                lines="results/lines.txt",
            log:
                "logs/join.log",
            shell:
                "cat {input.parts} > {output.joined} 2> {log}; wc -l < {output.joined} > {output.lines}"


        rule explode:
            input:
                joined="results/joined.txt",
            output:
                final="results/final.txt",
            log:
                "logs/explode.log",
            shell:
                "(echo 'explode failed on purpose' >&2; exit 1) 2> {log}"
        """,
}

SLOW = {
    "workflow.yaml": """\
        id: slow-second
        version: 0.1.0
        title: Slow second job
        description: Copies a table, then waits in a second job long enough to be cancelled.
        tags: [test]
        maintainers: [{name: snakegate tests}]
        trust: community
        rules:
          copy: {input: {table: csv-table}, output: {copied: csv-table}}
          wait: {input: {copied: csv-table}, output: {done: text}}
        outputs:
          done: {path: results/done.txt, type: text, description: Written after the wait.}
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "additionalProperties": False, "required": ["table"],
        "properties": {
            "table": {"type": "string", "x-artifact": "csv-table", "description": "Any CSV table."},
            "sleep": {"type": "integer", "minimum": 0, "default": 60, "description": "Seconds the second job waits."},
        },
    }),
    "Snakefile": """\
        from snakemake.utils import validate

        validate(config, "schema.json")


        rule all:
            input:
                "results/done.txt",


        rule copy:
            input:
                table=config["table"],
            output:
                copied="results/copy.csv",
            log:
                "logs/copy.log",
            shell:
                "cp {input.table} {output.copied} 2> {log}"


        rule wait:
            input:
                copied="results/copy.csv",
            output:
                done="results/done.txt",
            params:
                sleep=config["sleep"],
            log:
                "logs/wait.log",
            shell:
                "echo waiting > {log}; sleep {params.sleep}; echo done > {output.done}"
        """,
}


# views/report_runs.py's leaky run: a workflow that writes its x-sensitive token into a text and a table output.
LEAKY = {
    "workflow.yaml": """\
        id: leaky
        version: 0.1.0
        title: Leaky workflow
        description: Writes its secret token into its outputs, as a careless workflow might.
        tags: [test]
        maintainers: [{name: snakegate tests}]
        trust: community
        rules:
          leak: {output: {text: text, table: csv-table}}
        outputs:
          text: {path: results/leak.txt, type: text, description: Holds the token.}
          table: {path: results/leak.csv, type: csv-table, description: Holds the token in a cell.}
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "additionalProperties": False, "required": ["token"],
        "properties": {"token": {"type": "string", "x-sensitive": True, "description": "A secret."}},
    }),
    "Snakefile": """\
        rule all:
            input:
                "results/leak.txt",
                "results/leak.csv",


        rule leak:
            output:
                text="results/leak.txt",
                table="results/leak.csv",
            params:
                token=config["token"],
            shell:
                "echo 'the token is {params.token}' > {output.text}; "
                "printf 'name,value\\ntoken,{params.token}\\n' > {output.table}"
        """,
}


@pytest.fixture(scope="session")
def prov_registry(tmp_path_factory) -> Path:
    return make_registry(tmp_path_factory.mktemp("provruns") / "registry",
                         {"tiny-fail": TINY_FAIL, "slow-second": SLOW, "leaky": LEAKY}, with_git=True,
                         message="registry for provenance tests")


@pytest.fixture(scope="session")
def succeeded_run(prov_registry) -> Path:
    before = run_names(prov_registry)
    proc = snakegate(prov_registry, "run", "workflows/tabular-profile/examples/basic.yaml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return new_run(prov_registry, before)


@pytest.fixture(scope="session")
def failed_run(prov_registry) -> Path:
    config = prov_registry / "fail.yaml"
    config.write_text(f"workflow: tiny-fail\nparams:\n  token: {SECRET}\n")
    before = run_names(prov_registry)
    proc = snakegate(prov_registry, "run", config)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return new_run(prov_registry, before)


@pytest.fixture(scope="session")
def rerun_run(prov_registry, succeeded_run) -> tuple[Path, subprocess.CompletedProcess]:
    before = run_names(prov_registry)
    proc = snakegate(prov_registry, "rerun", succeeded_run.name)
    return new_run(prov_registry, before), proc


@pytest.fixture(scope="session")
def fork_run(prov_registry, succeeded_run) -> tuple[Path, subprocess.CompletedProcess]:
    before = run_names(prov_registry)
    proc = snakegate(prov_registry, "fork", succeeded_run.name, "--set", "missing_strategy=fill_mean")
    return new_run(prov_registry, before), proc


@pytest.fixture(scope="session")
def cancelled_run(prov_registry) -> Path:
    config = prov_registry / "slow.yaml"
    config.write_text("workflow: slow-second\nparams:\n  table: data/examples/tabular-penguins.csv\n")
    before = run_names(prov_registry)
    proc = subprocess.Popen([sys.executable, "-m", "snakegate.cli", "run", str(config)], cwd=prov_registry,
                            env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not list((prov_registry / "runs").glob("*/logs/wait.log")):
            time.sleep(0.2)
        time.sleep(1.0)  # the wait job is sleeping now
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, out + err
    run_dir = new_run(prov_registry, before)
    assert not (run_dir / "results" / "done.txt").exists()  # stopped inside the second job
    return run_dir


@pytest.fixture(scope="session")
def plain_run(prov_registry, succeeded_run) -> Path:
    before = run_names(prov_registry)
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--configfile",
                           "workflows/tabular-profile/examples/basic.yaml", "--cores", "1"],
                          cwd=prov_registry, env=clean_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return new_run(prov_registry, before)


def prov_json(run_dir: Path) -> dict:
    return json.loads((run_dir / "prov.json").read_text())


def val(value):
    """A PROV-JSON attribute value without its type wrapper ({"$": "10", "type": "xsd:int"} -> 10)."""
    if isinstance(value, dict) and "$" in value:
        return int(value["$"]) if value.get("type") in ("xsd:int", "xsd:long") else value["$"]
    return value


def types(attrs: dict) -> set[str]:
    value = attrs.get("prov:type")
    return {val(v) for v in (value if isinstance(value, list) else [value] if value is not None else [])}
