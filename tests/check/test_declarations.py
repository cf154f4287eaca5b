"""Issue 24 §2: `snakegate check` proves each output declaration (`columns`, `keys`, `when`) well-formed.

Most planted mistakes go through the proof with hand-made facts (the proof is pure); the clean fixture
contribution also goes through the real `snakegate check` (real Snakemake parser and DAG), once with
well-formed declarations and once with mistakes, so a finding reaches the user as it reads.
"""
import json
import shutil
from pathlib import Path

import pytest

from snakegate.check import CODES, ExampleFacts, WorkflowFacts
from snakegate.check.declarations import declaration_findings

ROOT = Path(__file__).resolve().parents[2]
CLEAN = ROOT / "tests" / "fixtures" / "broken" / "workflows" / "clean"

SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["dataset"],
    "properties": {
        "dataset": {"type": "string", "x-artifact": "csv-table", "description": "the table"},
        "reference": {"type": "string", "x-artifact": "fasta", "description": "a genome"},
        "columns": {"type": "array", "items": {"type": "string"}, "x-column-of": "dataset", "description": "kept"},
        "drop": {"type": "array", "items": {"type": "string"}, "description": "removed"},
        "target": {"type": "string", "x-column-of": "dataset", "description": "one column"},
        "rows": {"type": "integer", "minimum": 1, "default": 2, "description": "how many"},
        "strategy": {"enum": ["remove", "fill_mean"], "default": "remove", "description": "how"},
        "make_extra": {"type": "boolean", "default": False, "description": "also the extra table"},
        "samples": {"type": "array", "description": "samples", "items": {
            "type": "object", "properties": {"name": {"type": "string"}, "depth": {"type": "number"}}}},
    },
}


def findings(outputs: dict, examples: list[dict] | None = None) -> list:
    facts = WorkflowFacts(id="wf", folder="/r/workflows/wf", rel="workflows/wf", schema=SCHEMA,
                          manifest={"id": "wf", "outputs": outputs},
                          examples=[ExampleFacts(name=f"workflows/wf/examples/ex{i}.yaml", resolved_params=p)
                                    for i, p in enumerate(examples or [{"dataset": "d.csv"}])])
    return declaration_findings(facts)


def table(**declared) -> dict:
    return {"t": {"path": "results/t.csv", "type": "csv-table", "description": "t", **declared}}


def one(outputs: dict, **kw):
    (found,) = findings(outputs, **kw)
    assert found.workflow == "wf" and found.file == "workflows/wf/workflow.yaml" and found.code in CODES
    assert "workflows/CONTRIBUTING.md" in found.hint
    return found


def test_well_formed_declarations_have_no_findings():
    outputs = {
        **table(columns={"of": "dataset", "keep": "columns", "order": "keep", "minus": "drop", "fixed": ["id"],
                         "plus": ["target", {"param": "columns", "each": ["{}_mean"]}, "samples.name"],
                         "last": ["score"]}),
        "fixed": {"path": "f.tsv", "type": "tsv", "description": "f", "columns": ["a", "b"]},
        "m": {"path": "m.json", "type": "json", "description": "m", "keys": ["/accuracy", "/segments/0/b", "/a~1b"]},
        "x": {"path": "x.csv", "type": "csv-table", "description": "x",
              "when": {"make_extra": True, "strategy": ["remove", "fill_mean"], "rows": 3}},
    }
    assert findings(outputs, examples=[{"dataset": "d.csv", "make_extra": True, "strategy": "remove", "rows": 3}]) == []


def test_columns_on_an_output_that_is_not_a_table_are_refused():
    found = one({"p": {"path": "p.png", "type": "png", "description": "p", "columns": ["a"]}})
    assert found.code == "declaration_invalid"
    assert found.message == ("outputs.p.columns is declared on a `png` output; only tables (csv-table, tsv-table, "
                             "tsv) have columns")
    assert found.hint.startswith("drop `columns`, or give the output its table type")


def test_keys_on_an_output_that_is_not_json_are_refused():
    found = one(table(keys=["/a"]))
    assert found.message == "outputs.t.keys is declared on a `csv-table` output; only json outputs have keys"


def test_of_naming_an_undeclared_param_is_refused_with_did_you_mean():
    found = one(table(columns={"of": "datset"}))
    assert found.message == "outputs.t.columns.of names param `datset`, which schema.json does not declare " \
                            "(did you mean `dataset`?)"
    assert "e.g. `dataset`" in found.hint


@pytest.mark.parametrize("of, what", [("reference", "a fasta file"), ("rows", "not an x-artifact file"),
                                      ("samples.name", "a field of each list item")])
def test_of_naming_a_param_that_is_not_one_input_table_is_refused(of, what):
    found = one(table(columns={"of": of}))
    assert found.message.startswith(f"outputs.t.columns.of names param `{of}`, which is {what}, not one "
                                    "x-artifact table")


@pytest.mark.parametrize("field, param", [("keep", "rows"), ("minus", "target"), ("keep", "strategy"),
                                          ("minus", "samples")])
def test_keep_and_minus_must_name_a_list_of_strings(field, param):
    found = one(table(columns={"of": "dataset", field: param}))
    assert found.message.startswith(f"outputs.t.columns.{field} names param `{param}`, which can hold more than "
                                    f"column names")
    assert f"columns.{field} needs a list of strings)" in found.message
    assert "type array with items of type string" in found.hint


def test_plus_may_name_one_string_but_not_a_number():
    assert findings(table(columns={"plus": "target"})) == []
    found = one(table(columns={"plus": "rows"}))
    assert found.message.startswith("outputs.t.columns.plus names param `rows`, which can hold more than column "
                                    "names (its schema allows integer; columns.plus needs a list of strings or one "
                                    "string)")


def test_a_field_of_each_item_must_be_a_string_to_be_a_column():
    found = one(table(columns={"plus": ["samples.depth"]}))
    assert found.message.startswith("outputs.t.columns.plus[0] names param `samples.depth`")


def test_keep_without_of_is_refused():
    found = one(table(columns={"keep": "columns", "fixed": ["id"]}))
    assert found.message == "outputs.t.columns.keep has no `of`: it picks columns of the table `of` names"


def test_order_keep_without_a_keep_list_is_refused():
    found = one(table(columns={"of": "dataset", "order": "keep"}))
    assert found.message == "outputs.t.columns.order is `keep`, but there is no `keep` list to take the order from"


def test_an_each_template_without_a_placeholder_is_refused():
    found = one(table(columns={"plus": [{"param": "columns", "each": ["{}_mean", "score"]}]}))
    assert found.message == ("outputs.t.columns.plus[0].each template `score` has no `{}`, so every item gives the "
                             "same column")


def test_a_columns_object_that_names_no_columns_is_refused():
    assert findings(table(columns={"of": "dataset", "minus": "drop"})) == []  # the header less `drop`
    found = one(table(columns={"order": "header"}))
    assert found.message == "outputs.t.columns declares no columns (no `of`, `fixed`, `plus` or `last`)"


@pytest.mark.parametrize("key, says", [
    ("accuracy", "`accuracy` does not start with `/`"), ("", "the empty pointer names the whole document"),
    ("/a~2", "has a `~` not followed by 0 or 1"),
])
def test_a_key_that_is_not_a_json_pointer_is_refused(key, says):
    found = one({"m": {"path": "m.json", "type": "json", "description": "m", "keys": ["/ok", key]}})
    assert found.message.startswith("outputs.m.keys[1] is not a JSON pointer: ") and says in found.message
    assert "e.g. `/accuracy`" in found.hint


def test_when_naming_an_undeclared_param_is_refused():
    found = one(table(when={"make_extras": True}))
    assert found.message == "outputs.t.when.make_extras names param `make_extras`, which schema.json does not " \
                            "declare (did you mean `make_extra`?)"


@pytest.mark.parametrize("when, says", [
    ({"strategy": "fill_median"}, "allows 'fill_median', which param `strategy` can never have: 'fill_median' is "
                                  "not one of ['remove', 'fill_mean']"),
    ({"rows": 0}, "allows 0, which param `rows` can never have: 0 is less than the minimum of 1"),
    ({"make_extra": [True, "yes"]}, "allows 'yes', which param `make_extra` can never have"),
])
def test_when_with_a_value_the_schema_forbids_is_refused(when, says):
    found = one(table(when=when), examples=[{"dataset": "d.csv", **{k: v if not isinstance(v, list) else v[0]
                                                                     for k, v in when.items()}}])
    assert found.message.startswith(f"outputs.t.when.{next(iter(when))} {says}")


def test_when_on_a_list_param_is_refused():
    found = one(table(when={"columns": ["a"]}))
    assert found.message == "outputs.t.when.columns tests param `columns`, which is not one plain value (array)"


def test_when_that_no_example_meets_is_a_warning():
    found = one(table(when={"make_extra": True}), examples=[{"dataset": "a.csv", "make_extra": False}])
    assert (found.severity, found.code) == ("warning", "when_unexercised")
    assert found.message == "outputs.t.when holds for none of the examples (ex0.yaml), so no example shows the " \
                            "output being produced"


# -- through the real `snakegate check` ----------------------------------------------------------------


@pytest.fixture
def checked(tmp_path, cli):
    """check(outputs_yaml) -> (exit code, findings) of the clean fixture with these extra outputs."""
    root = tmp_path / "registry"
    shutil.copytree(ROOT / "tests" / "fixtures" / "broken" / "data", root / "data")
    folder = root / "workflows" / "clean"
    shutil.copytree(CLEAN, folder)

    def check(outputs_yaml: str):
        manifest = folder / "workflow.yaml"
        manifest.write_text((CLEAN / "workflow.yaml").read_text() + outputs_yaml)
        code, out, err = cli("--registry", root, "check", "clean", "--json", "--no-hygiene")
        assert "Traceback" not in out + err
        return code, json.loads(out)["findings"]
    return check


def test_snakegate_check_passes_a_well_formed_declaration_of_the_fixture(checked):
    code, found = checked("  head:\n    path: results/head.csv\n    type: csv-table\n    description: the kept rows\n"
                          "    columns: {of: table_file}\n")
    assert code == 0 and found == []


def test_snakegate_check_fails_naming_workflow_output_field_and_fix(checked):
    code, found = checked("  head:\n    path: results/head.csv\n    type: csv-table\n    description: the kept rows\n"
                          "    columns: {of: rows}\n    keys: [/n]\n")
    assert code == 1
    assert [(f["workflow"], f["code"], f["file"]) for f in found] == [("clean", "declaration_invalid",
                                                                      "workflows/clean/workflow.yaml")] * 2
    messages = sorted(f["message"] for f in found)
    assert messages[0].startswith("outputs.head.columns.of names param `rows`, which is not an x-artifact file")
    assert messages[1] == "outputs.head.keys is declared on a `csv-table` output; only json outputs have keys"
    assert all(f["hint"] for f in found)
