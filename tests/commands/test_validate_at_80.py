"""`snakegate validate` read at 80 columns (issue 29 §3): every line fits, a table's long list of columns is
written out once however many values miss it, and a wrong type's fix says in words what to write, with an
example in run-config syntax. And `fork --set NAME=a,b` gives a list where the contract wants one.

The gate refuses these configs before Snakemake is asked anything: the command runs in-process.
"""

from __future__ import annotations

import json

import pytest

from registry_copies import copy_registry
from snakegate.commands.lineage_cmds import parse_set
from snakegate.commands.set_values import as_contract_says

PENGUINS = "data/examples/tabular-penguins.csv"


@pytest.fixture
def registry(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    root = copy_registry(tmp_path / "registry", workflows=("classifier-benchmark", "tabular-profile"))
    monkeypatch.chdir(root)  # as a person runs it: from the registry, the config named relative to it
    return root


def _config(root, params: str) -> str:
    (root / "config.yaml").write_text(f"workflow: classifier-benchmark\nparams:\n  dataset: {PENGUINS}\n{params}")
    return "config.yaml"


def test_validate_lines_fit_80_columns_and_a_long_column_list_is_shown_once(cli, registry):
    config = _config(registry, "  label_column: speciez\n"
                               "  feature_columns: [bill_lenght_mm, flipper_len, body_mass]\n")
    code, out, _ = cli("--registry", registry, "validate", config)
    assert code == 1 and out.startswith("refused: config.yaml has 4 problems (workflow classifier-benchmark)\n")
    assert max(len(line) for line in out.splitlines()) <= 80, out
    text = " ".join(out.split())  # read as one text: the list may wrap anywhere
    assert text.count("flipper_length_mm, body_mass_g") == 1
    assert text.count("(columns as above)") == 3
    for wrong, fix in (("speciez", "species"), ("bill_lenght_mm", "bill_length_mm"), ("body_mass", "body_mass_g")):
        assert f"value `{wrong}` is not a column of {PENGUINS}" in text and f"fix: did you mean `{fix}`?" in text


def test_a_wrong_type_is_fixed_in_words_with_an_example(cli, registry):
    config = _config(registry, "  feature_columns: bill_length_mm\n  C: [1]\n  standardize: 'yes'\n")
    code, out, _ = cli("--registry", registry, "validate", config)
    text = " ".join(out.split())
    assert code == 1
    assert "`params.feature_columns` must be of type array (got string `'bill_length_mm'`) " \
           "fix: write a list, e.g. [bill_length_mm]" in text
    assert "fix: write a number, e.g. 0.5" in text and "fix: write true or false" in text
    assert "write a array" not in text and " value" not in text.split("fix:")[-1]


def test_fork_set_with_commas_gives_a_list_where_the_contract_wants_one(registry):
    schema = json.loads((registry / "workflows/tabular-profile/schema.json").read_text())
    parts, value = parse_set("columns=species,sex")
    assert as_contract_says(schema, parts, value) == ["species", "sex"]
    parts, value = parse_set("columns=species")
    assert as_contract_says(schema, parts, value) == ["species"]
    parts, value = parse_set("missing_strategy=fill_mean")  # text where text is wanted stays text
    assert as_contract_says(schema, parts, value) == "fill_mean"
    plan = {"properties": {"profile": schema}}  # a plan's run: STEP.PARAM
    parts, value = parse_set("profile.columns=island,sex")
    assert as_contract_says(plan, parts, value) == ["island", "sex"]
    numbers = {"properties": {"sizes": {"type": "array", "items": {"type": "integer"}}}}
    assert as_contract_says(numbers, *parse_set("sizes=1,2")) == [1, 2]  # items read as the list's type
    assert as_contract_says(numbers, *parse_set("sizes=1,,2")) == "1,,2"  # not a list anyone meant: the gate says


def test_unknown_params_list_the_allowed_parameters_once(cli, registry):
    config = _config(registry, "  label_column: species\n  bogus: 1\n  bogus2: 2\n")
    code, out, _ = cli("--registry", registry, "validate", config)
    text = " ".join(out.split())
    assert code == 1 and text.count("categorical_encoding, test_fraction") == 1
    assert "fix: allowed parameters: dataset, label_column," in text and "fix: allowed parameters as above" in text
