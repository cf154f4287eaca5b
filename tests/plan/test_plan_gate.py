"""The plan gate (issue 24.3): a whole plan proven in one pass, before any job, with errors that name the step.

Each planted mistake is refused through `snakegate validate --json` with its own code, a message naming
`steps.<step>.params...` and a fix, never a traceback and never a run folder: an unknown step, an unknown
output, a cycle, a step that takes from itself, a type mismatch, a column the upstream output will not
have, a value that is both literal and `from`, and an output the upstream step makes only for other params.
"""

from __future__ import annotations

import json
import shutil
import textwrap

import pytest
import yaml

from registry_copies import REPO, make_registry, run_names, snakegate

MAYBE = {
    "workflow.yaml": """\
        id: maybe-extra
        version: 0.1.0
        title: Maybe extra
        description: Copies a table, and writes an extra copy only when asked.
        tags: [test]
        maintainers: [{name: snakegate tests}]
        trust: community
        rules:
          copy: {input: {table: csv-table}, output: {copied: csv-table}}
          extra: {input: {table: csv-table}, output: {extra: csv-table}}
        outputs:
          copied: {path: results/copied.csv, type: csv-table, description: The table., columns: {of: table}}
          extra: {path: results/extra.csv, type: csv-table, description: The extra copy., columns: {of: table},
                  when: {make_extra: true}}
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": False,
        "required": ["table"],
        "properties": {
            "table": {"type": "string", "x-artifact": "csv-table", "description": "Any CSV table."},
            "make_extra": {"type": "boolean", "default": False, "description": "Write the extra copy too."},
        },
    }),
    "Snakefile": """\
        rule all:
            input:
                "results/copied.csv",
                *(["results/extra.csv"] if config["make_extra"] else []),


        rule copy:
            input:
                table=config["table"],
            output:
                copied="results/copied.csv",
            shell:
                "cp {input.table:q} {output.copied:q}"


        rule extra:
            input:
                table=config["table"],
            output:
                extra="results/extra.csv",
            shell:
                "cp {input.table:q} {output.extra:q}"
        """,
}


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    root = make_registry(tmp_path_factory.mktemp("plangate") / "registry", {"maybe-extra": MAYBE})
    shutil.copytree(REPO / "workflows" / "classifier-benchmark", root / "workflows" / "classifier-benchmark",
                    ignore=shutil.ignore_patterns("__pycache__", ".snakemake"))
    return root


def validate(root, tmp_path, plan: str | dict) -> tuple[int, dict]:
    config = tmp_path / "plan.yaml"
    config.write_text(yaml.safe_dump(plan, sort_keys=False) if isinstance(plan, dict) else textwrap.dedent(plan))
    before = run_names(root)
    proc = snakegate(root, "validate", config, "--json")
    assert run_names(root) == before  # the gate never makes a run folder
    return proc.returncode, json.loads(proc.stdout)


CLEAN = {"workflow": "tabular-profile",
         "params": {"dataset_file": "data/examples/tabular-penguins.csv",
                    "columns": ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "sex"]}}


def bench(**params) -> dict:
    return {"workflow": "classifier-benchmark", "params": params}


FROM_CLEAN = {"from": "clean", "output": "cleaned"}


def _errors(answer: dict) -> dict[str, dict]:
    return {e["path"]: e for e in answer["errors"]}


def test_a_plan_whose_steps_fit_passes_with_one_invocation_id_for_the_whole(registry, tmp_path):
    code, answer = validate(registry, tmp_path, {"plan": "sex-from-size", "steps": {
        "clean": CLEAN, "bench": bench(dataset=FROM_CLEAN, label_column="sex")}})
    assert code == 0, answer
    assert answer["ok"] and answer["plan"] == "sex-from-size" and len(answer["invocation_id"]) == 64
    assert answer["steps"]["clean"]["workflow"] == "tabular-profile"
    assert answer["steps"]["bench"]["workflow"] == "classifier-benchmark"


def test_a_column_the_upstream_output_will_not_have_is_refused_with_did_you_mean(registry, tmp_path):
    code, answer = validate(registry, tmp_path, {"steps": {
        "clean": CLEAN, "bench": bench(dataset=FROM_CLEAN, label_column="sexx")}})
    assert code == 1
    error = _errors(answer)["steps.bench.params.label_column"]
    assert error["code"] == "column_missing"
    assert "`steps.bench.params.label_column`" in error["message"]
    assert "step clean's output `cleaned`" in error["message"] and error["hint"] == "did you mean `sex`?"


def test_a_column_dropped_by_the_upstream_step_is_refused_before_any_job(registry, tmp_path):
    code, answer = validate(registry, tmp_path, {"steps": {
        "clean": CLEAN, "bench": bench(dataset=FROM_CLEAN, label_column="species")}})
    assert code == 1
    assert _errors(answer)["steps.bench.params.label_column"]["code"] == "column_missing"


@pytest.mark.parametrize("dataset,code", [
    ({"from": "nobody", "output": "cleaned"}, "plan_unknown_step"),
    ({"from": "clean", "output": "clened"}, "plan_unknown_output"),
    ({"from": "clean", "output": "profile"}, "plan_type_mismatch"),
    ({"from": "bench", "output": "metrics"}, "plan_self_reference"),
    ({"from": "clean", "output": "cleaned", "path": "data/x.csv"}, "plan_ambiguous_value"),
], ids=["unknown-step", "unknown-output", "type-mismatch", "self-reference", "literal-and-from"])
def test_each_planted_mistake_is_refused_with_its_own_code_naming_the_step(registry, tmp_path, dataset, code):
    path = "steps.bench.params.dataset"
    rc, answer = validate(registry, tmp_path, {"steps": {"clean": CLEAN,
                                                         "bench": bench(dataset=dataset, label_column="sex")}})
    assert rc == 1
    found = _errors(answer)
    assert found[path]["code"] == code, answer["errors"]
    assert found[path]["hint"]
    assert len([e for e in answer["errors"] if e["path"] == path]) == 1  # said once, not again by the step gate


def test_two_steps_that_take_from_each_other_are_a_cycle_named_in_order(registry, tmp_path):
    code, answer = validate(registry, tmp_path, """\
        steps:
          a:
            workflow: tabular-profile
            params: {dataset_file: {from: b, output: cleaned}}
          b:
            workflow: tabular-profile
            params: {dataset_file: {from: a, output: cleaned}}
        """)
    assert code == 1
    [cycle] = [e for e in answer["errors"] if e["code"] == "plan_cycle"]
    assert "a -> b -> a" in cycle["message"]


def test_an_output_the_upstream_step_makes_only_for_other_params_is_refused(registry, tmp_path):
    plan = """\
        steps:
          first:
            workflow: maybe-extra
            params: {{table: data/examples/tabular-penguins.csv{extra}}}
          second:
            workflow: tabular-profile
            params: {{dataset_file: {{from: first, output: extra}}}}
        """
    code, answer = validate(registry, tmp_path, plan.format(extra=""))
    assert code == 1
    error = _errors(answer)["steps.second.params.dataset_file"]
    assert error["code"] == "plan_output_not_made" and "`make_extra` is True" in error["message"]
    code, answer = validate(registry, tmp_path, plan.format(extra=", make_extra: true"))
    assert code == 0, answer


def test_every_problem_of_a_plan_is_said_at_once(registry, tmp_path):
    code, answer = validate(registry, tmp_path, {"steps": {
        "clean": CLEAN, "bench": bench(dataset=FROM_CLEAN, label_column="sexx", model="forest"),
        "other": {"workflow": "tabular-profile", "params": {"dataset_file": {"from": "nobody", "output": "cleaned"}}}}})
    assert code == 1
    codes = {(e["path"], e["code"]) for e in answer["errors"]}
    assert ("steps.bench.params.label_column", "column_missing") in codes
    assert ("steps.bench.params.model", "enum") in codes
    assert ("steps.other.params.dataset_file", "plan_unknown_step") in codes


def test_a_plan_shape_mistake_names_the_field(registry, tmp_path):
    code, answer = validate(registry, tmp_path, """\
        steps:
          Clean-Step:
            workflow: tabular-profile
            params: {dataset_file: data/examples/tabular-penguins.csv}
          ok:
            workflow: tabular-profile
            parms: {}
        """)
    assert code == 1
    found = _errors(answer)
    assert found["steps.Clean-Step"]["code"] == "plan_shape"
    assert found["steps.ok.parms"]["hint"] == "did you mean `params`?"
