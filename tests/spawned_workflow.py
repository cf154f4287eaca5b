"""A workflow whose jobs each run in a process of their own (two `run:` rules), as a cluster's jobs do.

Snakemake spawns a process per `run:` job, which re-reads the top-level Snakefile: so a plain local
run of this workflow exercises the job side of snakegate (tests/run/test_jobgate.py, bench/bench_jobgate.py).
Its files are indented text for registry_copies.make_registry (which dedents them).
"""

from __future__ import annotations

import json

SPAWNED = {
    "workflow.yaml": """\
        id: spawned
        version: 0.1.0
        title: Spawned jobs
        description: Two run-block rules, so every job runs in a process of its own.
        tags: [test]
        maintainers: [{name: snakegate tests}]
        trust: community
        rules:
          first:
            input: {table: csv-table}
            output: {first: text}
            resources: {mem_mb: 200, runtime: 2}
          second:
            input: {first: text}
            output: {second: text}
        outputs:
          second: {path: results/second.txt, type: text, description: "The label, shouted."}
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": False,
        "required": ["table"],
        "properties": {
            "table": {"type": "string", "x-artifact": "csv-table", "description": "Any CSV table."},
            "label": {"type": "string", "default": "hello", "description": "What the jobs write."},
        },
    }),
    "Snakefile": """\
        rule all:
            input:
                "results/second.txt",


        rule first:
            input:
                table=config["table"],
            output:
                first="results/first.txt",
            params:
                label=config["label"],
            run:
                with open(output.first, "w") as fh:
                    fh.write(params.label + "\\n")


        rule second:
            input:
                first="results/first.txt",
            output:
                second="results/second.txt",
            run:
                with open(input.first) as src, open(output.second, "w") as fh:
                    fh.write(src.read().upper())
        """,
}
