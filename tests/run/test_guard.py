"""Hash when written, check when read (issue 22.2): what a job reads is what the previous job wrote.

A four-rule workflow whose third job waits for <gate_dir>/go: while it waits, the test rewrites a file an
earlier job made. The next job that reads it is refused before it runs, and the run is `failed` with a
message naming the file, the job that made it and both hashes; a file nobody reads afterwards is caught
when the run ends. The PROV record says the producing job generated the bytes it recorded, not the forged
ones. Real Snakemake on both paths.
"""

from __future__ import annotations

import json

import pytest

from registry_copies import make_registry, snakegate
from waits import PENGUINS, finish, only_run, plain_start, record_of, sg_start, sha256, wait_for, _yaml_dump

CHAIN = {
    "workflow.yaml": """\
        id: chain
        version: 0.1.0
        title: Chain
        description: Copies a table, counts it, waits for go, then reads the copy again.
        tags: [test]
        maintainers: [{name: snakegate tests}]
        trust: community
        rules:
          make: {input: {table: csv-table}, output: {made: csv-table}}
          side: {input: {made: csv-table}, output: {side: text}}
          wait: {input: {made: csv-table, side: text}, output: {waited: text}}
          use: {input: {made: csv-table, waited: text}, output: {used: csv-table}}
        outputs:
          used: {path: results/used.csv, type: csv-table, description: The copy read again.}
          side: {path: results/side.txt, type: text, description: The copy's line count.}
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "additionalProperties": False, "required": ["table", "gate_dir"],
        "properties": {
            "table": {"type": "string", "x-artifact": "csv-table", "description": "Any CSV table."},
            "gate_dir": {"type": "string", "description": "Where the waiting job says it started and waits for go."},
        },
    }),
    "Snakefile": """\
        rule all:
            input:
                "results/used.csv",
                "results/side.txt",


        rule make:
            input:
                table=config["table"],
            output:
                made="results/made.csv",
            shell:
                "cp {input.table} {output.made}"


        rule side:
            input:
                made="results/made.csv",
            output:
                side="results/side.txt",
            shell:
                "wc -l < {input.made} > {output.side}"


        rule wait:
            input:
                made="results/made.csv",
                side="results/side.txt",
            output:
                waited="results/waited.txt",
            params:
                gate_dir=config["gate_dir"],
            shell:
                "touch {params.gate_dir}/started; "
                "for i in $(seq 1200); do [ -e {params.gate_dir}/go ] && break; sleep 0.1; done; "
                "echo waited > {output.waited}"


        rule use:
            input:
                made="results/made.csv",
                waited="results/waited.txt",
            output:
                used="results/used.csv",
            shell:
                "cat {input.made} > {output.used}"
        """,
}
FORGED = b"species,island\nforged,nowhere\n"


@pytest.fixture
def chain(tmp_path):
    root = make_registry(tmp_path / "registry", {"chain": CHAIN})
    gate_dir = tmp_path / "gate"
    gate_dir.mkdir()
    config = _yaml_dump(tmp_path / "chain.yaml", {"workflow": "chain",
                                                   "params": {"table": PENGUINS, "gate_dir": str(gate_dir)}})
    return root, config, gate_dir


def _run_and_forge(root, config, gate_dir, path: str, forged_file: str):
    proc = sg_start(root, "run", config) if path == "snakegate run" else plain_start(root, config)
    try:
        wait_for(gate_dir / "started")
        target = only_run(root) / forged_file
        made = sha256(target)
        target.write_bytes(FORGED)  # someone who can write the run folder, between two jobs
    finally:
        (gate_dir / "go").touch()
    out, err = finish(proc)
    return proc, out + err, only_run(root), made


@pytest.mark.parametrize("path", ["snakegate run", "plain snakemake"])
def test_an_intermediate_replaced_between_two_jobs_stops_the_job_that_would_read_it(chain, path):
    root, config, gate_dir = chain
    proc, output, run_dir, made = _run_and_forge(root, config, gate_dir, path, "results/made.csv")
    assert proc.returncode != 0, output
    record = record_of(run_dir)
    assert record["status"] == "failed"
    assert record["failure"]["rule"] == "use"
    error = record["error"]
    assert "results/made.csv was changed after job make wrote it" in error
    assert made[:12] in error and sha256(run_dir / "results" / "made.csv")[:12] in error
    assert not (run_dir / "results" / "used.csv").exists()  # the forged rows never went further
    # the job's own stderr file says it too
    assert "snakegate refused to run job use" in (run_dir / "stderr" / "use.log").read_text()
    # PROV: job make generated the bytes it recorded; the forged file is another entity, marked as changed
    prov = json.loads((run_dir / "prov.json").read_text())
    entities = prov["entity"]
    generated = {rel["prov:entity"] for rel in prov["wasGeneratedBy"].values()
                 if rel["prov:activity"].endswith("/job/make")}
    digests = {entities[e]["schema:sha256"] for e in generated if entities[e].get("prov:location", "").endswith("made.csv")}
    assert digests == {made}
    forged = [e for e in entities.values() if e.get("schema:sha256") == sha256(run_dir / "results" / "made.csv")]
    assert forged and forged[0].get("sg:changedAfterGeneration") is True


@pytest.mark.parametrize("path", ["snakegate run", "plain snakemake"])
def test_an_output_nobody_reads_again_changed_during_the_run_fails_it_at_the_end(chain, path):
    root, config, gate_dir = chain
    proc, output, run_dir, made = _run_and_forge(root, config, gate_dir, path, "results/side.txt")
    assert proc.returncode != 0, output
    record = record_of(run_dir)
    assert record["status"] == "failed" and record["error_code"] == "output_changed"
    [changed] = record["output_changed"]
    assert changed["path"] == "results/side.txt" and changed["job"] == "side"
    assert changed["recorded_sha256"] == made and changed["current_sha256"] == sha256(run_dir / "results/side.txt")
    assert (run_dir / "results" / "used.csv").is_file()  # every job ran: only the end could tell


def test_every_job_output_is_recorded_with_its_hash_when_the_job_ends(chain):
    root, config, gate_dir = chain
    (gate_dir / "go").touch()
    proc = snakegate(root, "run", config)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run_dir = only_run(root)
    records = {r["path"]: r for r in (json.loads(p.read_text()) for p in (run_dir / "hashes").glob("*.json"))}
    for rel, job in (("results/made.csv", "make"), ("results/side.txt", "side"), ("results/waited.txt", "wait"),
                     ("results/used.csv", "use")):
        assert records[rel]["job"] == job
        assert records[rel]["sha256"] == sha256(run_dir / rel)
