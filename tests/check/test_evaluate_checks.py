"""Issue 25 §1: `snakegate check` proves every acceptance check of workflow.yaml `evaluate:` well-formed.

Planted mistakes go through the proof with hand-made facts (the proof is pure); the curated registry and a
tampered copy of tabular-profile go through the real `snakegate check`, so a finding reaches the user as it
reads: naming the workflow, the check, the field and the fix.
"""
from __future__ import annotations

import pytest

from snakegate.check import CODES, ExampleFacts, WorkflowFacts
from snakegate.check.evaluate import evaluate_findings

SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["dataset"],
    "properties": {
        "dataset": {"type": "string", "x-artifact": "csv-table", "description": "the table"},
        "targets": {"type": "array", "items": {"type": "string"}, "description": "target columns"},
        "label": {"type": "string", "description": "one name"},
        "r2_min": {"type": "number", "default": 0.8, "description": "a floor"},
        "optional_floor": {"type": "number", "description": "a floor without default"},
        "seed": {"type": "integer", "default": 0, "description": "a seed"},
        "strategy": {"enum": ["a", "b"], "default": "a", "description": "how"},
        "token": {"type": "number", "x-sensitive": True, "default": 1, "description": "a secret number"},
        "secret_names": {"type": "array", "items": {"type": "string"}, "x-sensitive": True, "description": "hidden"},
        "samples": {"type": "array", "description": "samples", "items": {
            "type": "object", "properties": {"name": {"type": "string"}, "depth": {"type": "number"}}}},
    },
}
OUTPUTS = {
    "metrics": {"path": "results/metrics.json", "type": "json", "description": "m", "keys": ["/accuracy", "/targets"]},
    "loose": {"path": "results/loose.json", "type": "json", "description": "no keys declared"},
    "fits": {"path": "results/fits.csv", "type": "csv-table", "description": "f", "columns": ["power", "r2"]},
    "derived": {"path": "results/d.csv", "type": "csv-table", "description": "d",
                "columns": {"fixed": ["rank"], "plus": "targets", "last": ["score"]}},
    "plot": {"path": "results/plot.png", "type": "png", "description": "p"},
    "per_sample": {"path": "results/{samples.name}.json", "type": "json", "description": "one per sample"},
    "extra": {"path": "results/extra.json", "type": "json", "description": "e", "when": {"strategy": "b"}},
}
GOOD = {"output": "metrics", "value": "/accuracy", "test": ">=", "threshold": 0.7, "says": "too inaccurate"}


def findings(**checks) -> list:
    facts = WorkflowFacts(id="wf", folder="/r/workflows/wf", rel="workflows/wf", schema=SCHEMA,
                          manifest={"id": "wf", "outputs": OUTPUTS, "evaluate": checks},
                          examples=[ExampleFacts(name="workflows/wf/examples/ex.yaml", resolved_params={})])
    return evaluate_findings(facts)


def one(**fields):
    (found,) = findings(c={**GOOD, **fields})
    assert found.workflow == "wf" and found.file == "workflows/wf/workflow.yaml" and found.code in CODES
    assert "`evaluate` in workflows/CONTRIBUTING.md" in found.hint
    return found


def test_well_formed_checks_have_no_findings():
    assert findings(
        accuracy=GOOD,
        per_target={**GOOD, "value": "/targets/{targets}/r2", "threshold": {"param": "r2_min"}, "params": ["targets"]},
        per_label={**GOOD, "value": "/targets/{label}/r2", "threshold": {"param": "seed"}},
        loose={**GOOD, "output": "loose", "value": "/anything/at/all"},
        fit={"output": "fits", "value": {"column": "r2", "aggregate": "median"}, "test": ">=",
             "threshold": {"param": "r2_min"}, "says": "poor fits", "params": ["r2_min", "samples.depth"]},
        rank={"output": "derived", "value": {"column": "score", "aggregate": "max"}, "test": ">", "threshold": 0,
              "says": "no score"},
    ) == []


def test_a_check_of_an_undeclared_output_is_refused_with_the_closest_name():
    found = one(output="metric")
    assert found.code == "evaluate_invalid" and found.severity == "error"
    assert found.message == "evaluate.c.output names output `metric`, which workflow.yaml does not declare (did you " \
                            "mean `metrics`?)"
    assert found.hint.startswith("name one of the declared outputs: derived, extra, fits, loose, metrics")


def test_a_check_of_an_output_that_is_neither_json_nor_a_table_is_refused():
    assert one(output="plot").message == ("evaluate.c.output names output `plot`, a png file; a check reads a json "
                                          "output or a table (csv-table, tsv-table, tsv)")


def test_a_check_of_a_path_pattern_is_refused_because_it_reads_one_file():
    assert "whose path `results/{samples.name}.json` is a pattern" in one(output="per_sample").message


def test_a_check_of_an_output_made_only_when_is_a_warning():
    found = one(output="extra", value="/x")
    assert (found.severity, found.code) == ("warning", "evaluate_unproven")
    assert "made only `when` its condition holds: runs whose params do not make it get an unknown verdict" \
        in found.message


@pytest.mark.parametrize("pointer, problem", [
    ("accuracy", "does not start with `/`"), ("/a~2b", "has a `~` not followed by 0 or 1"),
])
def test_a_value_that_is_not_a_json_pointer_is_refused(pointer, problem):
    found = one(output="loose", value=pointer)
    assert found.message.startswith("evaluate.c.value is not a JSON pointer:") and problem in found.message


def test_a_pointer_outside_the_outputs_declared_keys_is_refused_naming_them():
    found = one(value="/acuracy")
    assert found.message == ("evaluate.c.value `/acuracy` is not among output `metrics`'s declared keys, nor below "
                             "one (/accuracy, /targets)")
    assert "declare the key under the output's `keys`" in found.hint


def test_a_placeholder_must_name_a_param_that_holds_names():
    unknown = one(value="/targets/{target}/r2")
    assert unknown.message == ("evaluate.c.value `{target}` names param `target`, which schema.json does not declare "
                               "(did you mean `targets`?)")
    number = one(value="/targets/{r2_min}/r2")
    assert number.message.startswith("evaluate.c.value has `{r2_min}`, but param `r2_min` can hold more than names")


def test_a_placeholder_naming_a_sensitive_param_is_refused_because_its_items_are_recorded():
    found = one(value="/targets/{secret_names}/r2")
    assert found.message.startswith("evaluate.c.value has `{secret_names}`, but param `secret_names` is x-sensitive")


def test_a_placeholder_inside_a_declared_key_does_not_make_it_covered():
    assert "is not among output `metrics`'s declared keys" in one(value="/{label}/r2").message


def test_a_pointer_on_a_table_and_a_column_on_json_are_refused():
    assert one(output="fits", value="/r2").message == "evaluate.c.value is a JSON pointer, but output `fits` is a csv-table"
    assert one(value={"column": "r2", "aggregate": "mean"}).message == \
        "evaluate.c.value is a column aggregate, but output `metrics` is json"


def test_a_column_the_output_does_not_declare_is_refused_with_the_closest_name():
    found = one(output="fits", value={"column": "r_2", "aggregate": "mean"})
    assert found.message == "evaluate.c.value.column names column `r_2`, which output `fits` does not declare " \
                            "(did you mean `r2`?)"
    assert found.hint.startswith("name one of its columns: power, r2")


def test_a_column_computed_from_the_params_is_a_warning_not_proven_here():
    found = one(output="derived", value={"column": "hardness", "aggregate": "mean"})
    assert (found.severity, found.code) == ("warning", "evaluate_unproven")


@pytest.mark.parametrize("param, problem", [
    ("floor", "names param `floor`, which schema.json does not declare"),
    ("label", "names param `label`, which is not one number (string)"),
    ("strategy", "names param `strategy`, which is not one number (string)"),
    ("samples.depth", "names param `samples.depth`, which is not one number (a field of each list item)"),
    ("token", "names param `token`, which is x-sensitive: a threshold is recorded in run.json and the PROV record"),
])
def test_a_param_threshold_must_name_one_numeric_param_that_is_not_sensitive(param, problem):
    found = one(threshold={"param": param})
    assert found.message.startswith("evaluate.c.threshold.param " + problem) and found.severity == "error"


def test_an_optional_threshold_param_without_a_default_is_a_warning():
    found = one(threshold={"param": "optional_floor"})
    assert found.severity == "warning" and "gets an unknown verdict" in found.message
    assert found.hint.startswith("give `optional_floor` a default in schema.json")


def test_an_advice_param_must_be_a_param_of_the_schema():
    assert one(params=["dataset", "r2min"]).message == ("evaluate.c.params[1] names param `r2min`, which schema.json "
                                                        "does not declare (did you mean `r2_min`?)")


def test_says_that_says_nothing_is_refused():
    assert one(says="   ").message.startswith("evaluate.c.says is empty")


def test_the_curated_registry_checks_are_proven(cli, registry_root):
    code, out, err = cli("--registry", registry_root, "check")
    assert code == 0, out + err
    assert "evaluate_" not in out


def test_a_broken_check_reaches_the_user_through_snakegate_check_naming_check_field_and_fix(tmp_registry, cli):
    manifest = tmp_registry / "workflows" / "tabular-profile" / "workflow.yaml"
    text = manifest.read_text()
    assert "    value: /rows_out\n" in text
    manifest.write_text(text.replace("    value: /rows_out\n", "    value: /rows_left\n"))
    code, out, err = cli("--registry", tmp_registry, "check", "tabular-profile")
    assert code == 1, out + err
    assert ("evaluate.rows_kept.value `/rows_left` is not among output `profile`'s declared keys, nor below one "
            "(/rows_in, /rows_out, /column_order, /columns)") in out
    assert "fix: declare the key under the output's `keys`" in out
    manifest.write_text(text.replace('    test: ">="\n    threshold: 10\n', '    test: "=>"\n    threshold: 10\n'))
    code, out, err = cli("--registry", tmp_registry, "check", "tabular-profile")
    assert code == 1 and "evaluate.rows_kept.test: '=>' is not one of ['>', '>=', '<', '<=', '==', '!=']" in out
    assert "Traceback" not in out + err
