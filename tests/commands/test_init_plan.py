"""`snakegate init --plan a,b` writes a plan template (every param of each step, optional ones commented
with default and description, the `from` edges filled where an earlier step's output fits a later step's
file param, the other fitting outputs named), and `snakegate show` lists the workflows each output feeds
and each input file comes from. The console command in a fresh process, in a throw-away registry; the
written template is checked by the real plan gate.
"""

from __future__ import annotations

import json

import pytest
import yaml

from plan_registry import make_plan_registry
from registry_copies import snakegate


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    return make_plan_registry(tmp_path_factory.mktemp("initplan") / "registry")


def test_a_plan_template_has_every_param_of_each_step_and_the_edge_its_types_allow(registry):
    proc = snakegate(registry, "init", "--plan", "tabular-profile,classifier-benchmark")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    config = yaml.safe_load(text)
    assert list(config["steps"]) == ["profile", "benchmark"]
    profile, bench = config["steps"]["profile"], config["steps"]["benchmark"]
    assert profile["workflow"] == "tabular-profile" and profile["version"] == "1.0.0"
    assert profile["params"] == {"dataset_file": "data/examples/tabular-penguins.csv"}  # required: an example's
    assert bench["params"] == {"dataset": {"from": "profile", "output": "cleaned"}, "label_column": "target"}
    # the optional ones, commented out with their default and description
    for line in ("# missing_strategy: remove", "# drop_duplicates: true", "# columns:", "# model: logistic_regression",
                 "# test_fraction: 0.2", "# seed: 0"):
        assert f"      {line}\n" in text, line
    assert "# Optional, default 0.2. Fraction of the rows held out" in text
    assert "# From step `profile`: its output `cleaned` (csv-table)." in text
    assert "# CHECK: must name columns of step `profile`'s output `cleaned`: the columns of" in text


def test_the_template_passes_the_plan_gate_once_its_checked_column_is_set(registry):
    proc = snakegate(registry, "init", "--plan", "clean=tabular-profile,bench=classifier-benchmark", "-o", "p.yaml")
    assert proc.returncode == 0 and "wrote p.yaml" in proc.stdout, proc.stderr
    path = registry / "p.yaml"
    refused = snakegate(registry, "validate", "p.yaml")
    assert refused.returncode == 1 and "steps.bench.params.label_column [column_missing]" in refused.stdout
    path.write_text(path.read_text().replace("label_column: target", "label_column: sex"))
    ok = snakegate(registry, "validate", "p.yaml", "--json")
    assert ok.returncode == 0, ok.stdout
    result = json.loads(ok.stdout)
    assert result["ok"] and set(result["steps"]) == {"clean", "bench"}
    again = snakegate(registry, "init", "--plan", "tabular-profile", "-o", "p.yaml")
    assert again.returncode != 0 and "already exists" in again.stderr  # never overwritten


def test_the_nearest_earlier_step_feeds_and_the_other_fitting_outputs_are_named(registry):
    text = snakegate(registry, "init", "--plan", "tabular-profile,tabular-profile,classifier-benchmark").stdout
    config = yaml.safe_load(text)
    assert list(config["steps"]) == ["profile", "profile_2", "benchmark"]
    assert config["steps"]["profile_2"]["params"]["dataset_file"] == {"from": "profile", "output": "cleaned"}
    assert config["steps"]["benchmark"]["params"]["dataset"] == {"from": "profile_2", "output": "cleaned"}
    assert "# From step `profile_2`: its output `cleaned` (csv-table); also fits: profile.cleaned." in text


def test_steps_no_output_fits_keep_their_own_inputs(registry):
    config = yaml.safe_load(snakegate(registry, "init", "--plan", "classifier-benchmark,tabular-profile").stdout)
    # classifier-benchmark makes json and png: nothing the profile's csv-table input can take
    assert config["steps"]["profile"]["params"]["dataset_file"] == "data/examples/tabular-penguins.csv"


@pytest.mark.parametrize("args,says", [
    (["--plan", "clean=tabular-profile,clean=classifier-benchmark"], "step name `clean` is used twice"),
    (["--plan", "Clean=tabular-profile"], "step name `Clean` must be 1-32 lowercase letters"),
    (["--plan", "tabular-profle"], "did you mean `tabular-profile`?"),
    (["--plan", " , "], "--plan needs workflow ids"),
    (["tabular-profile", "--plan", "tabular-profile"], "not both"),
    ([], "name a workflow"),
])
def test_a_bad_plan_request_is_refused_with_its_fix_and_no_traceback(registry, args, says):
    proc = snakegate(registry, "init", *args)
    assert proc.returncode in (1, 2) and says in proc.stderr and not proc.stdout


def test_show_lists_which_workflows_each_output_feeds_and_each_input_comes_from(registry):
    text = snakegate(registry, "show", "tabular-profile").stdout
    assert "Connects to (its outputs as another workflow's input)\n  cleaned → classifier-benchmark.dataset, " \
           "tabular-profile.dataset_file\n  profile → none\n  plot → none\n" in text
    assert "Takes from (workflows that make its input files)\n  dataset_file ← tabular-profile.cleaned\n" in text
    assert "  dataset ← tabular-profile.cleaned" in snakegate(registry, "show", "classifier-benchmark").stdout
    shown = json.loads(snakegate(registry, "show", "tabular-profile", "--json").stdout)["connections"]
    (bench,) = [c for c in shown["consumers"]["cleaned"] if c["consumer"] == "classifier-benchmark"]
    assert bench["param"] == "dataset" and bench["column_params"] == ["label_column", "feature_columns"]
    assert [c["producer"] for c in shown["producers"]["dataset_file"]] == ["tabular-profile"]
