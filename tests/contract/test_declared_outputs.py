"""Issue 24 §2: what an output declares it will hold, computed from the declaration and the params alone.

`declared_columns` gives a table output's columns (a fixed list, or fixed + the header of an input table,
kept/removed by list params, + items of params + last), `declared_keys` the JSON pointers a consumer may rely
on, `produced_when` whether the output exists for these params. They read no file: the header of an input
comes from the caller (a file's for `snakegate test`, an upstream step's declaration for a plan).
"""
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from snakegate.contract.outputs import (
    column_difference, declared_columns, declared_keys, expand_outputs, missing_keys, pointer_problem,
    produced_when, resolves,
)
from snakegate.models import DeclaredOutput
from snakegate.registry.workflows import manifest_problems

ROOT = Path(__file__).resolve().parents[2]
PENGUINS = ["species", "island", "bill_length_mm", "body_mass_g", "sex", "year"]
HEADERS = {"dataset_file": PENGUINS}


def table(spec, **params):
    decl = {"path": "results/t.csv", "type": "csv-table", "description": "a table", "columns": spec}
    return declared_columns(decl, params, HEADERS.get)


def test_a_columns_list_is_the_fixed_form():
    assert table(["id", "score"]) == ["id", "score"]


def test_columns_of_an_input_table_are_its_header():
    assert table({"of": "dataset_file"}) == PENGUINS


@pytest.mark.parametrize("keep", [None, []], ids=["absent", "empty"])
def test_an_absent_or_empty_keep_list_keeps_every_column(keep):
    params = {} if keep is None else {"keep_these": keep}
    assert table({"of": "dataset_file", "keep": "keep_these"}, **params) == PENGUINS


def test_keep_restricts_the_header_in_the_headers_order():
    assert table({"of": "dataset_file", "keep": "columns"}, columns=["sex", "species"]) == ["species", "sex"]


def test_order_keep_gives_the_kept_columns_in_the_lists_order():
    spec = {"of": "dataset_file", "keep": "columns", "order": "keep"}
    assert table(spec, columns=["sex", "species"]) == ["sex", "species"]
    assert table(spec) == PENGUINS  # nothing kept: the whole header, in its order


def test_minus_removes_columns_of_the_header():
    assert table({"of": "dataset_file", "minus": "drop"}, drop=["island", "year"]) == \
        ["species", "bill_length_mm", "body_mass_g", "sex"]


def test_fixed_come_first_then_the_header_then_plus_each_column_once():
    spec = {"fixed": ["id", "species"], "of": "dataset_file", "minus": "drop", "plus": "targets"}
    got = table(spec, drop=["island", "bill_length_mm", "body_mass_g", "year"], targets=["sex", "hardness"])
    assert got == ["id", "species", "sex", "hardness"]


def test_plus_may_hold_one_string():
    assert table({"fixed": ["id"], "plus": "target"}, target="hardness_hv") == ["id", "hardness_hv"]


def test_an_absent_plus_param_adds_nothing():
    assert table({"fixed": ["id"], "plus": "target"}) == ["id"]


def test_each_template_gives_columns_item_by_item_and_last_ends_the_table():
    spec = {"fixed": ["rank"], "plus": ["features", {"param": "targets", "each": ["{}_predicted", "{}_std"]}],
            "last": ["score"]}
    got = table(spec, features=["Fe", "Ni"], targets=["hv", "ys"])
    assert got == ["rank", "Fe", "Ni", "hv_predicted", "hv_std", "ys_predicted", "ys_std", "score"]


def test_plus_reads_a_field_of_each_item_of_a_list_param():
    samples = [{"name": "alpha", "reads": "a.fq.gz"}, {"name": "beta", "reads": "b.fq.gz"}]
    assert table({"fixed": ["contig", "start", "end"], "plus": "samples.name"}, samples=samples) == \
        ["contig", "start", "end", "alpha", "beta"]


def test_an_unknown_input_header_gives_no_columns_rather_than_a_guess():
    spec = {"of": "dataset_file"}
    assert declared_columns({"columns": spec}, {}, lambda param: None) is None


def test_a_param_holding_something_other_than_names_gives_no_columns():
    assert table({"fixed": ["id"], "plus": "targets"}, targets=[1, 2]) is None
    assert table({"of": "dataset_file", "keep": "columns"}, columns={"a": 1}) is None


def test_an_output_without_columns_declares_none():
    assert declared_columns({"path": "x.json", "type": "json"}, {}, HEADERS.get) is None


def test_the_header_of_an_input_may_be_an_upstream_outputs_declared_columns():
    """A plan: step 2's table is step 1's declared output, so its header is step 1's declaration."""
    clean = {"columns": {"of": "dataset_file", "keep": "columns", "order": "keep"}}
    upstream = declared_columns(clean, {"columns": ["body_mass_g", "species"]}, HEADERS.get)
    scored = {"columns": {"fixed": ["id"], "of": "table", "minus": "drop", "plus": "target"}}
    got = declared_columns(scored, {"drop": ["species"], "target": "mass_class"}, {"table": upstream}.get)
    assert got == ["id", "body_mass_g", "mass_class"]


def test_the_model_and_the_manifest_dict_give_the_same_columns():
    decl = {"path": "results/c.csv", "type": "csv-table", "description": "c",
            "columns": {"fixed": ["rank"], "plus": [{"param": "t", "each": ["{}_p"]}], "last": ["score"]}}
    params = {"t": ["a", "b"]}
    assert declared_columns(DeclaredOutput.model_validate(decl), params, HEADERS.get) == \
        declared_columns(decl, params, HEADERS.get) == ["rank", "a_p", "b_p", "score"]


def test_declared_columns_reads_no_file(tmp_path):
    """Pure: a param naming a real file is not opened; the header comes only from header_of."""
    csv = tmp_path / "t.csv"
    csv.write_text("a,b\n1,2\n")
    opened = []
    watching = [True]

    def hook(event, args):
        if watching[0] and event == "open":
            opened.append(args[0])
    sys.addaudithook(hook)
    try:
        got = declared_columns({"columns": {"of": "dataset_file"}}, {"dataset_file": str(csv)}, lambda p: ["x"])
    finally:
        watching[0] = False
    assert got == ["x"] and opened == []


# -- keys ------------------------------------------------------------------------------------------


def test_declared_keys_are_the_listed_pointers():
    assert declared_keys({"keys": ["/accuracy", "/roc_auc"]}) == ["/accuracy", "/roc_auc"]
    assert declared_keys({"path": "m.json"}) is None


@pytest.mark.parametrize("pointer, says", [
    ("", "whole document"), ("accuracy", "does not start with `/`"), ("/a~2b", "`~` not followed by 0 or 1"),
    ("/a~", "`~` not followed by 0 or 1"),
])
def test_a_malformed_json_pointer_is_named(pointer, says):
    assert says in pointer_problem(pointer)


@pytest.mark.parametrize("pointer", ["/accuracy", "/segments/0/b", "/a~1b", "/m~0n", "/"])
def test_a_well_formed_json_pointer_has_no_problem(pointer):
    assert pointer_problem(pointer) is None


def test_pointers_resolve_through_objects_arrays_and_escapes():
    doc = {"segments": [{"b": 0.6}], "a/b": 1, "m~n": None, "": 2}
    assert resolves(doc, "/segments/0/b") and resolves(doc, "/a~1b") and resolves(doc, "/m~0n") and resolves(doc, "/")
    assert not resolves(doc, "/segments/1") and not resolves(doc, "/segments/01") and not resolves(doc, "/segments/-")
    assert not resolves(doc, "/segments/0/b/c")


def test_missing_keys_names_the_declared_keys_the_file_lacks():
    decl = {"keys": ["/accuracy", "/roc_auc", "/n_test"]}
    assert missing_keys(decl, {"accuracy": 0.9, "n_test": None}) == ["/roc_auc"]


# -- when ------------------------------------------------------------------------------------------


def test_an_output_without_when_is_always_produced():
    assert produced_when({"path": "x"}, {})


def test_when_holds_for_the_value_or_one_of_a_list_of_values():
    assert produced_when({"when": {"model": "random_forest"}}, {"model": "random_forest"})
    assert not produced_when({"when": {"model": "random_forest"}}, {"model": "logistic_regression"})
    assert produced_when({"when": {"strategy": ["fill_mean", "fill_median"]}}, {"strategy": "fill_median"})
    assert not produced_when({"when": {"a": 1, "b": True}}, {"a": 1, "b": False})


def test_when_compares_as_json_does_true_is_not_one():
    assert not produced_when({"when": {"make_extra": True}}, {"make_extra": 1})
    assert produced_when({"when": {"n": 2}}, {"n": 2.0})


def test_when_on_a_param_the_params_do_not_hold_does_not_hold():
    assert not produced_when({"when": {"make_extra": True}}, {})
    assert produced_when({"when": {"limit": None}}, {"limit": None})  # an explicit null is a value


def test_an_output_whose_when_does_not_hold_is_left_out_of_the_expanded_outputs():
    outputs = {"table": {"path": "results/t.csv", "type": "csv-table"},
               "extra": {"path": "results/extra.csv", "type": "csv-table", "when": {"make_extra": True}}}
    assert [name for name, _, _ in expand_outputs(outputs, {"make_extra": False})] == ["table"]
    assert [name for name, _, _ in expand_outputs(outputs, {"make_extra": True})] == ["table", "extra"]


# -- comparing a real header with the declaration ----------------------------------------------------


def test_column_difference_names_missing_and_undeclared_columns():
    said = column_difference(["id", "species", "mass"], ["id", "species", "island"])
    assert said.startswith("missing `mass`; not declared `island`")
    assert "the file has id, species, island; the declaration says id, species, mass" in said


def test_column_difference_names_another_order_and_repeated_columns():
    assert column_difference(["a", "b"], ["b", "a"]).startswith("the same columns in another order")
    assert column_difference(["a", "b"], ["a", "b", "a"]).startswith("`a` more than once")
    assert column_difference(["a", "b"], ["a", "b"]) is None


# -- the manifest accepts the format -------------------------------------------------------------------


def manifest_with(outputs_yaml: str) -> dict:
    data = YAML(typ="safe").load((ROOT / "workflows/tabular-profile/workflow.yaml").read_text())
    data["outputs"] = YAML(typ="safe").load(outputs_yaml)
    return data


FORMAT = """\
cleaned:
  path: results/cleaned.csv
  type: csv-table
  description: the cleaned table
  columns: {of: dataset_file, keep: columns, minus: drop, fixed: [id], plus: targets}
fixed:
  path: results/fixed.csv
  type: csv-table
  description: a fixed list
  columns: [a, b, c]
metrics:
  path: results/metrics.json
  type: json
  description: metrics
  keys: [/accuracy, /roc_auc]
extra:
  path: results/extra.csv
  type: csv-table
  description: sometimes
  when: {make_extra: true, strategy: [fill_mean, fill_median]}
"""


def test_the_manifest_meta_schema_and_the_model_accept_the_declarations():
    data = manifest_with(FORMAT)
    assert manifest_problems(data, "tabular-profile") == []
    for name, decl in data["outputs"].items():
        DeclaredOutput.model_validate(decl)


@pytest.mark.parametrize("columns, says", [
    ("{of: 1}", "outputs.t.columns"), ("{of: dataset_file, drop: x}", "outputs.t.columns"),
    ("[a, a]", "outputs.t.columns"), ("{plus: [{param: t}]}", "outputs.t.columns"),
    ("{order: sorted}", "outputs.t.columns"),
], ids=["of not a name", "unknown field", "repeated column", "each missing", "unknown order"])
def test_the_meta_schema_refuses_a_misshapen_columns_declaration(columns, says):
    data = manifest_with(f"t: {{path: t.csv, type: csv-table, description: t, columns: {columns}}}")
    problems = manifest_problems(data, "tabular-profile")
    assert problems and all(p.startswith(says) for p in problems), problems
