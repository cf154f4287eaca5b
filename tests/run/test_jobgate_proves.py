"""The job gate proves, it does not compare strings (issue 22.3).

Every job of this workflow runs in a process of its own (`run:` blocks), which reads the top-level
Snakefile again and passes the job gate, as a cluster job does. While the first job waits, the test
rewrites the run folder's config.yaml and invocation.json together — once keeping the invocation id,
once giving both a new id that matches what they now hold — and the second job must refuse: its record
does not hash to its id, or is not the invocation the head pinned. The run is `failed` and run.json
carries the job gate's own words. Real Snakemake, real processes.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from ruamel.yaml import YAML

from registry_copies import make_registry
from waits import PENGUINS, _yaml_dump, finish, only_run, plain_start, record_of, sg_start, wait_for

SPAWNED_WAITS = {
    "workflow.yaml": """\
        id: spawned-waits
        version: 0.1.0
        title: Spawned jobs that wait
        description: Two run-block rules; the first waits for go before it writes the label.
        tags: [test]
        maintainers: [{name: snakegate tests}]
        trust: community
        rules:
          first: {input: {table: csv-table}, output: {first: text}}
          second: {input: {first: text}, output: {second: text}}
        outputs:
          second: {path: results/second.txt, type: text, description: "The label, as the second job saw it."}
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": False,
        "required": ["table", "gate_dir"],
        "properties": {
            "table": {"type": "string", "x-artifact": "csv-table", "description": "Any CSV table."},
            "gate_dir": {"type": "string", "description": "Where the first job says it started and waits."},
            "label": {"type": "string", "default": "hello", "description": "What the second job writes."},
        },
    }),
    "Snakefile": """\
        import os
        import time


        rule all:
            input:
                "results/second.txt",


        rule first:
            input:
                table=config["table"],
            output:
                first="results/first.txt",
            params:
                gate_dir=config["gate_dir"],
            run:
                open(os.path.join(params.gate_dir, "started"), "w").close()
                for _ in range(1200):
                    if os.path.exists(os.path.join(params.gate_dir, "go")):
                        break
                    time.sleep(0.1)
                with open(output.first, "w") as fh:
                    fh.write("first\\n")


        rule second:
            input:
                first="results/first.txt",
            output:
                second="results/second.txt",
            params:
                label=config["label"],
            run:
                with open(output.second, "w") as fh:
                    fh.write(params.label + "\\n")
        """,
}


def _canonical_id(invocation: dict) -> str:
    text = json.dumps(invocation, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _rewrite(run_dir, new_id: bool) -> None:
    """config.yaml and invocation.json rewritten together to a label that was never gated."""
    yaml = YAML()
    config_path, record_path = run_dir / "config.yaml", run_dir / "invocation.json"
    config = yaml.load(config_path.read_text())
    record = json.loads(record_path.read_text())
    config["params"]["label"] = "never gated"
    record["invocation"]["params"]["label"] = "never gated"
    if new_id:
        record["invocation_id"] = config["invocation_id"] = _canonical_id(record["invocation"])
    with open(config_path, "w") as fh:
        yaml.dump(config, fh)
    record_path.write_text(json.dumps(record))


@pytest.mark.parametrize("new_id", [False, True], ids=["id-kept", "id-recomputed"])
@pytest.mark.parametrize("path", ["snakegate run", "plain snakemake"])
def test_a_config_and_invocation_rewritten_together_mid_run_are_refused_by_the_next_job(tmp_path, path, new_id):
    root = make_registry(tmp_path / "registry", {"spawned-waits": SPAWNED_WAITS})
    gate_dir = tmp_path / "gate"
    gate_dir.mkdir()
    config = _yaml_dump(tmp_path / "run.yaml", {"workflow": "spawned-waits",
                                                 "params": {"table": PENGUINS, "gate_dir": str(gate_dir)}})
    proc = sg_start(root, "run", config) if path == "snakegate run" else plain_start(root, config)
    try:
        wait_for(gate_dir / "started")
        run_dir = only_run(root)
        _rewrite(run_dir, new_id)
    finally:
        (gate_dir / "go").touch()
    out, err = finish(proc)
    assert proc.returncode != 0, out + err
    assert not (run_dir / "results" / "second.txt").exists()  # the ungated label never ran
    record = record_of(run_dir)
    assert record["status"] == "failed"
    assert record["failure"]["rule"] == "second"
    said = record["error"] + "\n".join(record["failure"].get("log_tail") or [])
    assert "the job printed nothing" not in said
    assert "[invocation_mismatch]" in said
    if new_id:
        assert "pinned" in said  # a self-consistent record, but not the invocation the head gated
    else:
        assert "holds one that hashes to" in said
