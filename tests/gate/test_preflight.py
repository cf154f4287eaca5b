"""A workflow's preflight.py refuses cross-field mistakes at the gate, on every path, before any job.

The real curated preflights (surrogate-design, classifier-benchmark,
pl-power-series) are driven through `snakegate validate`, `snakegate run`, plain
`snakemake` with the top-level Snakefile and the agent's validate_params; broken
preflights (one that raises, one that returns nonsense, one that does not load,
one that tries to change the params) live in throwaway registries and must
refuse, never pass.
"""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from registry_copies import ROOT, clean_env, make_registry, snakegate
from snakegate.agent.actions.platform import ActionContext, call_action
from snakegate.gate.prove import gate
from snakegate.registry.workflows import Registry
from snakegate.registry.settings import load_settings

ALLOYS = "data/examples/surrogate-alloys.csv"


def copy_workflows(reg: Path, *ids: str, data: tuple[str, ...] = ()) -> Path:
    for wf_id in ids:
        shutil.copytree(ROOT / "workflows" / wf_id, reg / "workflows" / wf_id,
                        ignore=shutil.ignore_patterns("__pycache__", ".snakemake", "test"))
    for name in data:
        shutil.copy(ROOT / "data" / "examples" / name, reg / "data" / "examples" / name)
    return reg


@pytest.fixture
def reg(tmp_path):
    root = make_registry(tmp_path / "reg")
    return copy_workflows(root, "surrogate-design", "classifier-benchmark", "pl-power-series",
                          data=("surrogate-alloys.csv", "pl-campaign.csv"))


def surrogate(**overrides) -> dict:
    params = {"dataset_file": ALLOYS, "feature_columns": ["Fe", "Ni", "Co", "Cr"],
              "target_properties": ["hardness_hv"]} | overrides
    return {"workflow": "surrogate-design", "params": params}


def gate_errors(reg: Path, invocation: dict, **kw) -> list:
    result = gate(Registry.load(reg), invocation, load_settings(reg), **kw)
    return [] if result.ok else result.errors


def write_config(reg: Path, invocation: dict, name: str = "run.yaml") -> Path:
    path = reg / name
    path.write_text(json.dumps(invocation))  # JSON is YAML
    return path


# ---- the curated preflights -------------------------------------------------------------------

def test_target_that_is_also_a_feature_is_refused_by_the_gate_naming_both_lists(reg):
    errors = gate_errors(reg, surrogate(target_properties=["hardness_hv", "Cr"]))
    assert [(e.path, e.code) for e in errors] == [("params.target_properties", "preflight")]
    assert "Cr" in errors[0].message and "feature_columns" in errors[0].message
    assert "remove Cr from `feature_columns` or from `target_properties`" in errors[0].hint


def test_constraint_with_min_above_max_is_refused_with_the_swap_as_fix(reg):
    errors = gate_errors(reg, surrogate(constraints={"Cr": {"min": 30, "max": 15}}))
    assert [(e.path, e.code) for e in errors] == [("params.constraints.Cr", "preflight")]
    assert "min 30 is greater than max 15" in errors[0].message
    assert "min: 15, max: 30" in errors[0].hint


def test_objective_or_constraint_on_the_wrong_kind_of_column_is_refused(reg):
    errors = gate_errors(reg, surrogate(objective={"Fe": "minimize"}, constraints={"hardness_hv": {"max": 400}}))
    assert {(e.path, e.code) for e in errors} == {("params.objective.Fe", "preflight"),
                                                  ("params.constraints.hardness_hv", "preflight")}
    by_path = {e.path: e for e in errors}
    assert by_path["params.objective.Fe"].choices == ["hardness_hv"]
    assert by_path["params.constraints.hardness_hv"].choices == ["Fe", "Ni", "Co", "Cr"]


def test_pl_power_series_refuses_one_column_used_as_two_axes(reg):
    errors = gate_errors(reg, {"workflow": "pl-power-series",
                               "params": {"spectra_file": "data/examples/pl-campaign.csv",
                                          "counts_column": "wavelength_nm"}})
    assert [(e.path, e.code) for e in errors] == [("params.counts_column", "preflight")]
    assert "`wavelength_column`" in errors[0].message
    assert errors[0].choices == ["counts"]  # the header's remaining column, read by the gate


def test_classifier_refuses_a_table_with_nothing_but_the_label(reg):
    (reg / "data" / "labels.csv").write_text("target\n0\n1\n0\n1\n")
    errors = gate_errors(reg, {"workflow": "classifier-benchmark", "params": {"dataset": "data/labels.csv"}})
    assert [(e.path, e.code) for e in errors] == [("params.dataset", "preflight")]
    assert "no column besides the label column `target`" in errors[0].message


def test_every_curated_example_passes_its_preflight():
    registry, settings = Registry.load(ROOT), load_settings(ROOT)
    for wf in registry.workflows.values():
        for example in wf.examples():
            from snakegate.config.read import read_run_config
            data, _ = read_run_config(example)
            result = gate(registry, data, settings, check_dag=False, check_tools=False)
            assert result.ok, (example, result.errors)


def test_snakegate_run_refuses_before_making_a_run_folder(reg):
    config = write_config(reg, surrogate(target_properties=["Cr"]))
    proc = snakegate(reg, "run", config, "--cores", "1")
    assert proc.returncode == 1
    assert "[preflight]" in proc.stdout + proc.stderr
    assert not (reg / "runs").exists() or not any((reg / "runs").iterdir())


def test_plain_snakemake_with_the_top_level_snakefile_refuses_at_parse_time(reg):
    config = write_config(reg, surrogate(constraints={"Ni": {"min": 40, "max": 10}}))
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--configfile", str(config), "--cores", "1"],
                          cwd=reg, env=clean_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "params.constraints.Ni [preflight]" in out and "no job was started" in out
    assert not (reg / "runs").exists() or not any((reg / "runs").iterdir())


def test_agent_validate_params_gets_the_preflight_refusal_as_a_question(reg):
    ctx = ActionContext(Registry.load(reg), load_settings(reg))
    outcome = call_action(ctx, "validate_params", {"workflow": "surrogate-design",
                                                   "params": surrogate(objective={"Ni": "maximize"})["params"]})
    assert outcome.ok is False and outcome.proposal is None
    assert [(e["path"], e["code"]) for e in outcome.result["errors"]] == [("params.objective.Ni", "preflight")]
    assert outcome.result["errors"][0]["choices"] == ["hardness_hv"]


# ---- broken preflights fail closed ------------------------------------------------------------

WORKFLOW_YAML = """\
    id: {id}
    version: 0.1.0
    title: Preflight probe
    description: A one-rule workflow whose preflight.py is under test.
    tags: [test]
    maintainers: [{{name: snakegate tests}}]
    trust: community
    rules:
      copy: {{input: {{src: csv-table}}, output: {{dst: csv-table}}}}
    outputs:
      dst: {{path: results/copy.csv, type: csv-table, description: The copied table.}}
    """
SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": False,
    "required": ["table"],
    "properties": {
        "table": {"type": "string", "x-artifact": "csv-table", "description": "A CSV table."},
        "columns": {"type": "array", "items": {"type": "string"}, "default": ["a"], "description": "Columns."},
        "frames": {"type": ["string", "null"], "x-artifact": "npz", "default": None, "description": "An npz."},
    },
}
SNAKEFILE = """\
    rule copy:
        input:
            src=config["table"],
        output:
            dst="results/copy.csv",
        params:
            columns=config["columns"],
            frames=config["frames"],
        shell:
            "cp {input.src} {output.dst}"
    """


def probe(tmp_path: Path, preflight_source: str | None, wf_id: str = "probe") -> Path:
    files = {"workflow.yaml": WORKFLOW_YAML.format(id=wf_id), "schema.json": json.dumps(SCHEMA),
             "Snakefile": SNAKEFILE}
    if preflight_source is not None:
        files["preflight.py"] = preflight_source
    root = make_registry(tmp_path / "reg", {wf_id: files})
    (root / "data" / "t.csv").write_text("a,b\n1,2\n")
    return root


def probe_errors(root: Path, **params) -> list:
    return gate_errors(root, {"workflow": "probe", "params": {"table": "data/t.csv"} | params})


@pytest.mark.parametrize("source, says", [
    ("def preflight(params, artifacts):\n    raise KeyError('oops')\n", "crashed on these params (KeyError"),
    ("def preflight(params, artifacts):\n    return 'all good'\n", "returned a str, not a list of findings"),
    ("def preflight(params, artifacts):\n    return None\n", "returned a NoneType"),
    ("def preflight(params, artifacts):\n    return [{'path': 'table'}]\n", "returned item 0 that is not a finding"),
    ("def preflight(params, artifacts):\n    return [{'path': 'x', 'message': 'm', 'code': 'ok'}]\n", "returned item 0 that is not a finding"),
    ("def preflight(params, artifacts):\n    return ['no']\n", "is not of type 'object'"),
    ("def preflight(params:\n", "does not load (SyntaxError"),
    ("import no_such_module_anywhere\n", "does not load (ModuleNotFoundError"),
    ("def check(params, artifacts):\n    return []\n", "defines no function `preflight(params, artifacts)`"),
    ("def preflight(params, artifacts):\n    params['columns'] = []\n    return []\n", "crashed on these params (TypeError"),
    ("def preflight(params, artifacts):\n    params['columns'].append('z')\n    return []\n", "crashed on these params"),
    ("def preflight(params):\n    return []\n", "crashed on these params (TypeError"),
])
def test_a_broken_preflight_is_a_gate_failure_never_a_pass(tmp_path, source, says):
    errors = probe_errors(probe(tmp_path, source))
    assert len(errors) == 1 and errors[0].code == "preflight", errors
    assert says in errors[0].message
    assert "workflows/probe/preflight.py" in errors[0].message + (errors[0].hint or "")
    assert "not in your params" in errors[0].hint


def test_a_broken_preflight_is_refused_by_the_cli_too(tmp_path):
    root = probe(tmp_path, "def preflight(params, artifacts):\n    return 1 / 0\n")
    write_config(root, {"workflow": "probe", "params": {"table": "data/t.csv"}})
    proc = snakegate(root, "validate", "run.yaml", "--json")
    assert proc.returncode == 1
    out = json.loads(proc.stdout)
    assert out["ok"] is False and out["errors"][0]["code"] == "preflight"
    assert "ZeroDivisionError" in out["errors"][0]["message"]


def test_preflight_sees_headers_table_profiles_and_array_shapes_never_the_arrays(tmp_path):
    seen = tmp_path / "seen.json"
    root = probe(tmp_path, f"""\
import json
def preflight(params, artifacts):
    def plain(v):
        if hasattr(v, "items"):
            return {{k: plain(x) for k, x in v.items()}}
        return [plain(x) for x in v] if isinstance(v, tuple) else v
    with open({str(seen)!r}, "w") as fh:  # a test spy; a real preflight reads no file
        json.dump({{"params": plain(params), "artifacts": plain(artifacts)}}, fh)
    return []
""")
    np.savez(root / "data" / "f.npz", frames=np.zeros((2, 3, 4, 5), dtype=np.float32), delays_ps=np.arange(2.0))
    assert probe_errors(root, frames="data/f.npz") == []
    got = json.loads(seen.read_text())
    assert got["params"] == {"table": "data/t.csv", "columns": ["a"], "frames": "data/f.npz"}
    one = {"missing": 0, "distinct": 1, "distinct_capped": False, "kind": "numeric"}
    assert got["artifacts"]["table"] == {
        "type": "csv-table", "size_bytes": 8, "columns": ["a", "b"], "rows": 1,
        "profile": {"a": {**one, "values": [[1, 1]], "min": 1.0, "max": 1.0},
                    "b": {**one, "values": [[2, 1]], "min": 2.0, "max": 2.0}},
        "cells": [[1, 2]], "profile_absent": None, "cells_absent": None, "malformed": None}
    # the small 1-D axis comes with its values; the 4-D data array only with its shape
    assert got["artifacts"]["frames"]["arrays"] == {"frames": {"shape": [2, 3, 4, 5], "dtype": "float32"},
                                                    "delays_ps": {"shape": [2], "dtype": "float64",
                                                                  "values": [0.0, 1.0]}}
    assert set(got["artifacts"]["frames"]) == {"type", "size_bytes", "arrays"}


def test_preflight_findings_keep_their_path_hint_and_choices(tmp_path):
    root = probe(tmp_path, """\
def preflight(params, artifacts):
    cols = artifacts["table"]["columns"]
    return [{"path": f"columns[{i}]", "message": f"`{c}` is odd", "hint": "pick another", "choices": list(cols)}
            for i, c in enumerate(params["columns"]) if c == "a"]
""")
    errors = probe_errors(root, columns=["b", "a"])
    assert [(e.path, e.code, e.message, e.hint, e.choices) for e in errors] == [
        ("params.columns[1]", "preflight", "`a` is odd", "pick another", ["a", "b"])]


def test_preflight_runs_only_after_the_contract_and_data_hold(tmp_path):
    root = probe(tmp_path, "def preflight(params, artifacts):\n    raise AssertionError('must not run')\n")
    errors = probe_errors(root, columns="a")  # a schema error: the preflight is not asked
    assert [e.code for e in errors] == ["type"]
    errors = gate_errors(root, {"workflow": "probe", "params": {"table": "data/missing.csv"}})
    assert [e.code for e in errors] == ["not_found"]


def test_loading_a_preflight_leaves_no_bytecode_in_the_workflow_folder(tmp_path):
    root = probe(tmp_path, "import json\ndef preflight(params, artifacts):\n    return []\n")
    before = Registry.load(root).get("probe").content_hash()
    assert probe_errors(root) == []
    assert not (root / "workflows" / "probe" / "__pycache__").exists()
    assert Registry.load(root).get("probe").content_hash() == before


def test_an_edited_preflight_takes_effect_on_the_next_gate(tmp_path):
    root = probe(tmp_path, "def preflight(params, artifacts):\n    return []\n")
    assert probe_errors(root) == []
    (root / "workflows" / "probe" / "preflight.py").write_text(
        "def preflight(params, artifacts):\n    return [{'path': 'table', 'message': 'now refused'}]\n")
    assert [e.message for e in probe_errors(root)] == ["now refused"]
