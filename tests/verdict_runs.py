"""A tiny workflow with acceptance checks (workflow.yaml `evaluate:`), for the verdict tests of the run, PROV and
`snakegate test` (tests/run/test_verdicts.py, tests/provenance/test_verdict_dqv.py).

`scored` writes results/metrics.json (`{"score": <param score>}`), results/values.csv (a column `v` of 1, 2, 3)
and, after `sleep` seconds, results/summary.json (`{"count": 3}`), or fails there when `fail` is true. Its
checks: `score` (/score >= the param `floor`), `values_mean` (mean of v >= 1.5) and `summarized`
(/count >= 1), so a run's verdict can pass, fail on a param threshold, or leave a check unknown.
"""

from __future__ import annotations

import json
from pathlib import Path

from registry_copies import make_registry

SCORED = {
    "workflow.yaml": """\
        id: scored
        version: 0.1.0
        title: Scored outputs
        description: Writes a score, a small table and a summary, each judged by a check of evaluate.
        tags: [test]
        maintainers: [{name: snakegate tests}]
        trust: community
        rules:
          measure: {output: {metrics: json}}
          values: {output: {values: csv-table}}
          summarize: {input: {metrics: json, values: csv-table}, output: {summary: json}}
        outputs:
          metrics: {path: results/metrics.json, type: json, description: The score., keys: [/score]}
          values: {path: results/values.csv, type: csv-table, description: Three values., columns: [v]}
          summary: {path: results/summary.json, type: json, description: How many values., keys: [/count]}
        evaluate:
          score:
            output: metrics
            value: /score
            test: ">="
            threshold: {param: floor}
            says: The score is below the floor; raise score.
            params: [score]
          values_mean:
            output: values
            value: {column: v, aggregate: mean}
            test: ">="
            threshold: 1.5
            says: The values are too small.
          summarized:
            output: summary
            value: /count
            test: ">="
            threshold: 1
            says: Nothing was summarized.
            params: [fail]
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "additionalProperties": False, "required": [],
        "properties": {
            "score": {"type": "number", "default": 0.9, "description": "The score written."},
            "floor": {"type": "number", "default": 0.5, "description": "The least score that passes."},
            "sleep": {"type": "number", "minimum": 0, "default": 0, "description": "Seconds summarize waits."},
            "fail": {"type": "boolean", "default": False, "description": "Make summarize fail."},
        },
    }),
    "Snakefile": """\
        rule all:
            input:
                "results/summary.json",


        rule measure:
            output:
                metrics="results/metrics.json",
            params:
                score=config["score"],
            shell:
                "echo '{{\\"score\\": {params.score}}}' > {output.metrics}"


        rule values:
            output:
                values="results/values.csv",
            shell:
                "printf 'v\\\\n1\\\\n2\\\\n3\\\\n' > {output.values}"


        rule summarize:
            input:
                metrics="results/metrics.json",
                values="results/values.csv",
            output:
                summary="results/summary.json",
            params:
                sleep=config["sleep"],
                fail="yes" if config["fail"] else "",
            shell:
                "sleep {params.sleep}; if [ -n '{params.fail}' ]; then echo failing on purpose >&2; exit 1; fi; "
                "echo '{{\\"count\\": 3}}' > {output.summary}"
        """,
}


def scored_registry(root: Path, **extra) -> Path:
    return make_registry(root, {"scored": SCORED, **extra})


def scored_config(path: Path, **params) -> Path:
    from ruamel.yaml import YAML

    with open(path, "w") as fh:
        YAML().dump({"workflow": "scored", "params": params}, fh)
    return path


def checks_of(record: dict) -> dict[str, dict]:
    return {c["name"]: c for c in record["verdict"]["checks"]}
