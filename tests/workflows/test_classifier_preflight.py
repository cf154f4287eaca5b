"""classifier-benchmark's gate knows what its jobs would refuse: the penguins table predicting species passes,
and a table that cannot run is refused with the column, the count and the fix, before any job.

Gated in-process (the real gate: contract, data roots, profile, preflight in the sandbox, DAG) in a
throw-away registry; tables are written per test. The stratified-split rule is also held to scikit-learn's
own train_test_split: whatever the preflight accepts keeps every class on both sides.
"""
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from registry_copies import ROOT, make_registry
from snakegate.contract import table_profile
from snakegate.gate.prove import gate
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry

PENGUINS = "data/examples/tabular-penguins.csv"


@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    root = make_registry(tmp_path_factory.mktemp("classifier") / "reg")
    shutil.copytree(ROOT / "workflows" / "classifier-benchmark", root / "workflows" / "classifier-benchmark",
                    ignore=shutil.ignore_patterns("__pycache__", ".snakemake", "test"))
    return root


def errors(reg, **params):
    result = gate(Registry.load(reg), {"workflow": "classifier-benchmark", "params": params}, load_settings(reg),
                  check_dag=False)
    return [] if result.ok else result.errors


def table(reg, name, text):
    (reg / "data" / name).write_text(text)
    return f"data/{name}"


def test_predicting_species_on_the_penguins_table_passes_the_gate(reg):
    result = gate(Registry.load(reg), {"workflow": "classifier-benchmark",
                                       "params": {"dataset": PENGUINS, "label_column": "species"}}, load_settings(reg))
    assert result.ok, result.errors


def test_the_label_among_the_features_is_refused_naming_its_place(reg):
    [e] = errors(reg, dataset=PENGUINS, label_column="species", feature_columns=["island", "species"])
    assert e.path == "params.feature_columns[1]" and "label column `species`" in e.message
    assert "island" in e.choices and "species" not in e.choices


def test_a_label_with_one_class_is_refused(reg):
    path = table(reg, "one.csv", "x,y\n" + "".join(f"{i},a\n" for i in range(10)))
    [e] = errors(reg, dataset=path, label_column="y")
    assert e.path == "params.label_column" and "1 class" in e.message and "at least two" in e.message


def test_a_measurement_as_label_is_called_one(reg):
    [e] = errors(reg, dataset=PENGUINS, label_column="bill_length_mm")
    assert e.path == "params.label_column" and "looks like a measurement" in e.message


def test_a_class_the_split_would_leave_out_is_refused_with_a_fraction_that_works(reg):
    # 2 rows of c among 40: at test_fraction 0.1 its share of the 4 held-out rows rounds to none
    rows = "".join(f"{i},a\n" for i in range(19)) + "".join(f"{i},b\n" for i in range(19)) + "1,c\n2,c\n"
    path = table(reg, "rare.csv", "x,y\n" + rows)
    [e] = errors(reg, dataset=path, label_column="y", test_fraction=0.1)
    assert e.path == "params.test_fraction" and "`c`" in e.message and "held-out" in e.message
    working = float(e.hint.split("test_fraction to ")[1].split(",")[0].split(" ")[0])
    assert errors(reg, dataset=path, label_column="y", test_fraction=working) == []


def test_rows_dropped_for_a_missing_value_count_as_the_job_drops_them(reg):
    # c has three rows, but one misses its feature: two are left, too few for test_fraction 0.1 of 40 rows
    rows = "".join(f"{i},a\n" for i in range(19)) + "".join(f"{i},b\n" for i in range(18)) + "1,c\n2,c\n,c\n"
    path = table(reg, "gaps.csv", "x,y\n" + rows)
    [e] = errors(reg, dataset=path, label_column="y", test_fraction=0.1)
    assert "`c`" in e.message


def test_a_text_feature_with_too_many_categories_is_refused_for_one_hot_but_not_ordinal(reg):
    rows = "".join(f"id{i},{i % 7},{'ab'[i % 2]}\n" for i in range(120))
    path = table(reg, "ids.csv", "sample,x,y\n" + rows)
    [e] = errors(reg, dataset=path, label_column="y")
    assert e.path == "params.feature_columns" and "`sample` has 120 categories" in e.message
    assert "feature_columns" in e.hint and "ordinal" in e.hint
    assert errors(reg, dataset=path, label_column="y", categorical_encoding="ordinal") == []
    assert errors(reg, dataset=path, label_column="y", feature_columns=["x"]) == []


def test_an_infinite_feature_is_refused(reg):
    rows = "".join(f"{i},{'ab'[i % 2]}\n" for i in range(30)) + "inf,a\n"
    path = table(reg, "inf.csv", "x,y\n" + rows)
    [e] = errors(reg, dataset=path, label_column="y")
    assert "`x` holds an infinite number" in e.message


def test_a_feature_without_any_value_is_refused(reg):
    path = table(reg, "blank.csv", "x,z,y\n" + "".join(f"{i},,{'ab'[i % 2]}\n" for i in range(30)))
    [e] = errors(reg, dataset=path, label_column="y")
    assert "feature `z` has no value in any row" in e.message


def test_without_the_cells_the_preflight_lets_the_job_speak_where_dropped_rows_decide(reg, monkeypatch):
    rows = "".join(f"{i},a\n" for i in range(19)) + "".join(f"{i},b\n" for i in range(18)) + "1,c\n2,c\n,c\n"
    path = table(reg, "gaps-large.csv", "x,y\n" + rows)
    monkeypatch.setattr(table_profile, "CELLS_MAX_ROWS", 10)  # the profile only: which rows drop is unknown
    assert errors(reg, dataset=path, label_column="y", test_fraction=0.1) == []


def test_a_builtin_feature_name_it_does_not_have_is_refused(reg):
    [e] = errors(reg, dataset="builtin:breast_cancer", feature_columns=["mean radius", "radius"])
    assert e.path == "params.feature_columns[1]" and "mean radius" in e.choices


@settings(max_examples=60, deadline=None)
@given(counts=st.lists(st.integers(2, 30), min_size=2, max_size=5),
       fraction=st.sampled_from([0.1, 0.13, 0.2, 0.25, 0.33, 0.5]), seed=st.integers(0, 1000))
def test_a_split_the_preflight_accepts_keeps_every_class_on_both_sides_in_scikit_learn(counts, fraction, seed):
    import importlib.util

    from sklearn.model_selection import train_test_split

    spec = importlib.util.spec_from_file_location("cb_preflight", ROOT / "workflows" / "classifier-benchmark" /
                                                  "preflight.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    labels = [k for k, n in enumerate(counts) for _ in range(n)]
    if module._split_problem({k: n for k, n in enumerate(counts)}, fraction) is not None:
        return
    train, test = train_test_split(labels, test_size=fraction, stratify=labels, random_state=seed)
    assert set(train) == set(test) == set(range(len(counts)))
