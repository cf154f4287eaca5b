"""The waiting workflow and the process helpers of the run tests that change things "while a run is going".

`waits-for-go`'s first job says it started (<gate_dir>/started) and waits for <gate_dir>/go, so a test
can act at a known moment; its second job reads what the first wrote. Used by test_pinned.py,
test_staging.py and test_guard.py.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from registry_copies import clean_env, make_registry, run_names

PENGUINS = "data/examples/tabular-penguins.csv"

WAITS_FOR_GO = {
    "workflow.yaml": """\
        id: waits-for-go
        version: 0.1.0
        title: Waits for go
        description: Copies a table once <gate_dir>/go exists, then stamps it with a script; for tests of what may change during a run.
        tags: [test]
        maintainers: [{name: snakegate tests}]
        trust: community
        rules:
          wait_copy: {input: {table: csv-table}, output: {copied: csv-table}}
          stamp: {input: {copied: csv-table}, output: {stamped: text}}
        outputs:
          copied: {path: results/copied.csv, type: csv-table, description: The table.}
          stamped: {path: results/stamp.txt, type: text, description: What the stamp script writes.}
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "additionalProperties": False, "required": ["table", "gate_dir"],
        "properties": {
            "table": {"type": "string", "x-artifact": "csv-table", "description": "Any CSV table."},
            "gate_dir": {"type": "string", "description": "Folder where the first job says it started and waits for go."},
        },
    }),
    "Snakefile": """\
        rule all:
            input:
                "results/copied.csv",
                "results/stamp.txt",


        rule wait_copy:
            input:
                table=config["table"],
            output:
                copied="results/copied.csv",
            params:
                gate_dir=config["gate_dir"],
            shell:
                "touch {params.gate_dir}/started; "
                "for i in $(seq 1200); do [ -e {params.gate_dir}/go ] && break; sleep 0.1; done; "
                "cp {input.table} {output.copied}"


        rule stamp:
            input:
                copied="results/copied.csv",
            output:
                stamped="results/stamp.txt",
            script:
                "scripts/stamp.py"
        """,
    "scripts/stamp.py": """\
        with open(snakemake.output.stamped, "w") as fh:
            fh.write("original\\n")
        """,
}

# Imported by every Python the test's snakegate starts; holds only `snakegate run`'s Snakemake child
# (the one process that gets SNAKEGATE_EXPECTED_INVOCATION) until <pause dir>/go exists.
PAUSE_HOOK = """\
import os, pathlib, time
_dir = os.environ.get("TEST_PAUSE_BEFORE_SNAKEMAKE")
if _dir and os.environ.get("SNAKEGATE_EXPECTED_INVOCATION"):
    _dir = pathlib.Path(_dir)
    (_dir / "paused").touch()
    for _ in range(2400):
        if (_dir / "go").exists():
            break
        time.sleep(0.05)
"""


def _yaml_load(path: Path):
    return YAML(typ="safe", pure=True).load(path.read_text())


def _yaml_dump(path: Path, data) -> Path:
    with open(path, "w") as fh:
        YAML().dump(data, fh)
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def wait_for(path: Path, timeout: float = 120.0) -> None:
    deadline = time.time() + timeout
    while not path.exists():
        assert time.time() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def record_of(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text())


def only_run(root: Path) -> Path:
    names = run_names(root)
    assert len(names) == 1, names
    return root / "runs" / names.pop()


def start(root: Path, *args, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(list(map(str, args)), cwd=root, env=env or clean_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen) -> tuple[str, str]:
    out, err = proc.communicate(timeout=300)
    assert "Traceback" not in out + err, err
    return out, err


def sg_start(root: Path, *args, env: dict | None = None) -> subprocess.Popen:
    return start(root, sys.executable, "-m", "snakegate.cli", *args, env=env)


def plain_start(root: Path, configfile: Path, *extra) -> subprocess.Popen:
    return start(root, sys.executable, "-m", "snakemake", "--configfile", configfile, "--cores", "1", *extra)


@pytest.fixture
def registry(tmp_path) -> Path:
    return make_registry(tmp_path / "registry", {"waits-for-go": WAITS_FOR_GO})


@pytest.fixture
def gate_dir(tmp_path) -> Path:
    folder = tmp_path / "gate"
    folder.mkdir()
    return folder


def waits_config(tmp_path: Path, gate_dir: Path, table: str = PENGUINS) -> Path:
    return _yaml_dump(tmp_path / "waits.yaml", {"workflow": "waits-for-go",
                                                "params": {"table": table, "gate_dir": str(gate_dir)}})


