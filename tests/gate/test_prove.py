"""The gate refuses every bad invocation with the right `code` and `path`, through `snakegate validate --json`.

Bad inputs are real files built in a throwaway registry: a PNG named .csv, a
symlink inside data/ pointing outside it, a path climbing out with `..`.
"""
import json
import os
from pathlib import Path

import pytest

from registry_copies import TABULAR_SCHEMA, TABULAR_VERSION
from snakegate.gate.prove import gate
from snakegate.registry.workflows import Registry
from snakegate.config.read import parse_yaml
from snakegate.registry.settings import load_settings

PENGUINS = "data/examples/tabular-penguins.csv"
GOOD_CSV = "species,bill_length_mm\nAdelie,39.1\nGentoo,47.5\n"
PNG_BYTES = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + b"\x00" * 32


def run_config(params: str | None = None, head: str = "workflow: tabular-profile\n") -> str:
    if params is None:
        params = f"  dataset_file: {PENGUINS}\n"
    return head + "params:\n" + params


def outside_csv(reg: Path) -> Path:
    """A valid CSV next to the registry, outside every data root."""
    path = reg.parent / "outside.csv"
    path.write_text(GOOD_CSV)
    return path


def symlink_out(reg: Path) -> None:
    (reg / "data" / "examples" / "escape.csv").symlink_to(outside_csv(reg))


def symlink_loop(reg: Path) -> None:
    (reg / "data" / "loop-a.csv").symlink_to(reg / "data" / "loop-b.csv")
    (reg / "data" / "loop-b.csv").symlink_to(reg / "data" / "loop-a.csv")


def png_named_csv(reg: Path) -> None:
    (reg / "data" / "image.csv").write_bytes(PNG_BYTES)


def binary_named_csv(reg: Path) -> None:
    (reg / "data" / "blob.csv").write_bytes(bytes(range(256)) * 8)


def half_done_workflow(reg: Path) -> None:
    (reg / "workflows" / "half-done").mkdir()
    (reg / "workflows" / "half-done" / "workflow.yaml").write_text("id: half-done\n")


def json_named_csv(reg: Path) -> None:
    (reg / "data" / "doc.csv").write_text('{"species": "Adelie"}\n')


# (id, run config text, setup(registry) or None, expected code, expected path, text the hint must contain)
BAD = [
    ("unknown-workflow", run_config(head="workflow: tabular-profil\n"), None,
     "unknown_workflow", "workflow", "tabular-profile"),
    ("workflow-that-cannot-load", run_config(head="workflow: half-done\n"), half_done_workflow,
     "unknown_workflow", "workflow", "workflow.yaml"),
    ("missing-workflow-field", run_config(head=""), None, "required", "workflow", None),
    ("unknown-run-config-field", f"workflow: tabular-profile\nparms:\n  dataset_file: {PENGUINS}\n", None,
     "unknown_param", "parms", "params"),
    ("wrong-version", run_config(head='workflow: tabular-profile\nversion: "9.9.9"\n'), None,
     "version_mismatch", "version", f"version: {TABULAR_VERSION}"),
    ("version-not-a-string", run_config(head="workflow: tabular-profile\nversion: 1.0\n"), None,
     "type", "version", None),
    ("invalid-yaml", "workflow: tabular-profile\nparams:\n  dataset_file: [unclosed\n", None, "invalid_yaml", "", None),
    ("empty-file", "", None, "invalid_yaml", "", None),
    ("yaml-alias-inside-itself", f"workflow: tabular-profile\nparams:\n  dataset_file: {PENGUINS}\n  columns: &c [sex, *c]\n",
     None, "yaml_bomb", "params.columns[1]", "aliases"),
    ("yaml-alias-bomb", "workflow: tabular-profile\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9)), None, "yaml_bomb", "", None),
    ("params-not-a-mapping", "workflow: tabular-profile\nparams: [a, b]\n", None, "type", "params", None),
    ("missing-required", run_config("  missing_strategy: remove\n"), None, "required", "params.dataset_file", None),
    ("wrong-type", run_config(f"  dataset_file: {PENGUINS}\n  drop_duplicates: 'often'\n"), None,
     "type", "params.drop_duplicates", None),
    ("out-of-range", run_config(f"  dataset_file: {PENGUINS}\n  columns: []\n"), None, "range", "params.columns", None),
    ("repeated-column", run_config(f"  dataset_file: {PENGUINS}\n  columns: [sex, sex]\n"), None,
     "range", "params.columns", None),
    ("enum-typo", run_config(f"  dataset_file: {PENGUINS}\n  missing_strategy: fill_mena\n"), None,
     "enum", "params.missing_strategy", "fill_mean"),
    ("unknown-param", run_config(f"  dataset_file: {PENGUINS}\n  missing_strat: remove\n"), None,
     "unknown_param", "params.missing_strat", "missing_strategy"),
    ("path-escapes-with-dotdot", run_config("  dataset_file: data/../../outside.csv\n"),
     outside_csv, "path_outside_roots", "params.dataset_file", None),
    ("absolute-path-outside-roots", run_config("  dataset_file: /etc/hostname\n"), None,
     "path_outside_roots", "params.dataset_file", "data_roots"),
    ("symlink-escapes-data-root", run_config("  dataset_file: data/examples/escape.csv\n"),
     symlink_out, "path_outside_roots", "params.dataset_file", None),
    ("symlink-loop", run_config("  dataset_file: data/loop-a.csv\n"), symlink_loop,
     "not_found", "params.dataset_file", None),
    ("missing-file", run_config("  dataset_file: data/examples/no-such-table.csv\n"), None,
     "not_found", "params.dataset_file", None),
    ("folder-not-file", run_config("  dataset_file: data/examples\n"), None, "not_found", "params.dataset_file", None),
    ("png-named-csv", run_config("  dataset_file: data/image.csv\n"), png_named_csv,
     "format", "params.dataset_file", "csv-table"),
    ("binary-named-csv", run_config("  dataset_file: data/blob.csv\n"), binary_named_csv,
     "format", "params.dataset_file", None),
    ("json-named-csv", run_config("  dataset_file: data/doc.csv\n"), json_named_csv,
     "format", "params.dataset_file", None),
    ("column-not-in-table", run_config(f"  dataset_file: {PENGUINS}\n  columns: [species, bill_lenght_mm]\n"), None,
     "column_missing", "params.columns[1]", "bill_length_mm"),
    ("run-id-escapes-runs-folder", run_config(head="workflow: tabular-profile\nrun_id: ../elsewhere\n"), None,
     "pattern", "run_id", None),
    ("run-id-is-parent-folder", run_config(head="workflow: tabular-profile\nrun_id: '..'\n"), None,
     "pattern", "run_id", None),
    ("stale-invocation-id", run_config(head=f"workflow: tabular-profile\ninvocation_id: '{'0' * 64}'\n"), None,
     "invocation_mismatch", "invocation_id", None),
]


@pytest.mark.parametrize("text, setup, code, path, hint", [case[1:] for case in BAD], ids=[case[0] for case in BAD])
def test_bad_invocation_is_refused_with_code_and_path(tmp_registry, tmp_path, cli, monkeypatch, text, setup, code, path, hint):
    if setup:
        setup(tmp_registry)
    config = tmp_path / "run.yaml"
    config.write_text(text)
    monkeypatch.chdir(tmp_path)

    exit_code, out, err = cli("--registry", tmp_registry, "validate", "--json", config)

    assert "Traceback" not in out + err
    assert exit_code == 1, out + err
    result = json.loads(out)  # exactly one JSON object on stdout
    assert set(result) == {"ok", "invocation_id", "workflow", "errors"}
    assert result["ok"] is False and result["invocation_id"] is None
    assert all(set(e) == {"path", "code", "message", "hint"} for e in result["errors"])
    assert (code, path) in [(e["code"], e["path"]) for e in result["errors"]], result["errors"]
    if hint:
        matching = [e for e in result["errors"] if (e["code"], e["path"]) == (code, path)]
        assert any(hint in (e["hint"] or "") for e in matching), matching


def test_bad_cases_cover_every_issue_category():
    """The issue's list: each of these refusal codes has at least one case in the table."""
    needed = {"unknown_workflow", "version_mismatch", "invalid_yaml", "required", "type", "range", "enum",
              "unknown_param", "path_outside_roots", "not_found", "format", "column_missing"}
    assert needed <= {case[3] for case in BAD}
    assert len(BAD) >= 12


def test_enum_typo_hint_names_the_intended_value(tmp_registry):
    result = _gate(tmp_registry, run_config(f"  dataset_file: {PENGUINS}\n  missing_strategy: fill_medain\n"))
    [error] = result.errors
    assert error.hint == "did you mean `fill_median`?"
    assert error.choices == ["remove", "fill_mean", "fill_median"]


def test_symlink_escaping_data_root_is_refused(tmp_registry):
    symlink_out(tmp_registry)
    [error] = _gate(tmp_registry, run_config("  dataset_file: data/examples/escape.csv\n")).errors
    assert error.code == "path_outside_roots"
    assert str(tmp_registry.parent / "outside.csv") in error.message  # says where it really points


def test_symlink_inside_data_root_is_accepted(tmp_registry):
    (tmp_registry / "data" / "alias.csv").symlink_to(tmp_registry / PENGUINS)
    result = _gate(tmp_registry, run_config("  dataset_file: data/alias.csv\n"))
    assert result.ok, result.errors
    # the resolved target, not the link, is what Snakemake gets and what the id pins
    assert result.resolved_params["dataset_file"] == str(tmp_registry / PENGUINS)
    assert result.invocation.params["dataset_file"] == PENGUINS


def test_fifo_named_csv_is_refused_without_being_opened(tmp_registry):
    os.mkfifo(tmp_registry / "data" / "pipe.csv")  # opening it would block forever
    [error] = _gate(tmp_registry, run_config("  dataset_file: data/pipe.csv\n")).errors
    assert (error.code, error.path) == ("not_found", "params.dataset_file")
    assert "not a regular file" in error.message


@pytest.mark.parametrize("value", ["data/a\x00b.csv", "data/" + "x" * 300 + ".csv"], ids=["nul-byte", "name-too-long"])
def test_unusable_path_is_a_refusal_not_a_crash(tmp_registry, value):
    invocation = {"workflow": "tabular-profile", "params": {"dataset_file": value}}
    [error] = gate(Registry.load(tmp_registry), invocation, load_settings(tmp_registry)).errors
    assert (error.code, error.path) == ("not_found", "params.dataset_file")


def test_header_only_csv_passes_the_format_check(tmp_registry):
    """A CSV is proved by its header; whether it has enough rows is the workflow's business."""
    (tmp_registry / "data" / "header.csv").write_text("species,sex\n")
    result = _gate(tmp_registry, run_config("  dataset_file: data/header.csv\n"), check_dag=False)
    assert result.ok, result.errors


def test_column_names_are_read_as_pandas_reads_them(tmp_registry):
    """A byte-order mark is not part of the first name; spaces after a comma are part of the next one."""
    (tmp_registry / "data" / "excel.csv").write_bytes(b"\xef\xbb\xbfspecies, sex\nAdelie,male\n")
    ok = _gate(tmp_registry, run_config("  dataset_file: data/excel.csv\n  columns: [species, ' sex']\n"), check_dag=False)
    assert ok.ok, ok.errors
    [error] = _gate(tmp_registry, run_config("  dataset_file: data/excel.csv\n  columns: [species, sex]\n")).errors
    assert (error.code, error.path) == ("column_missing", "params.columns[1]")
    assert error.choices == ["species", " sex"]


def test_all_errors_are_reported_at_once(tmp_registry):
    result = _gate(tmp_registry, run_config(
        f"  dataset_file: {PENGUINS}\n  missing_strategy: fill_mena\n  drop_duplicates: 3\n  colums: [sex]\n"))
    assert {(e.code, e.path) for e in result.errors} == {
        ("enum", "params.missing_strategy"), ("type", "params.drop_duplicates"), ("unknown_param", "params.colums")}


def test_defaults_are_filled_in_the_canonical_invocation(tmp_registry):
    result = _gate(tmp_registry, run_config())
    assert result.ok, result.errors
    defaults = {name: sub["default"] for name, sub in TABULAR_SCHEMA["properties"].items() if "default" in sub}
    assert defaults["missing_strategy"] == "remove" and defaults["drop_duplicates"] is True
    assert result.invocation.params == {"dataset_file": PENGUINS, **defaults}
    assert list(result.invocation.inputs) == ["params.dataset_file"]


# A one-rule workflow with a number and an untyped param: what tabular-profile cannot show.
TOY_MANIFEST = """\
id: toy
version: 0.1.0
title: Toy workflow
description: Writes one number to a text file.
tags: [test]
maintainers: [{name: Test Author}]
trust: community
rules:
  write: {output: {value: text}}
outputs:
  value: {path: results/value.txt, type: text, description: The number.}
"""
TOY_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": False,
    "required": [],
    "properties": {
        "threshold": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5, "description": "A fraction."},
        "weight": {"type": "number", "default": 1, "description": "Any number, unbounded."},
        "note": {"description": "Free-form note, any JSON value."},
    },
}
TOY_SNAKEFILE = """\
rule write:
    output:
        value="results/value.txt",
    params:
        threshold=config["threshold"],
        weight=config["weight"],
        note=config.get("note"),
    shell:
        "echo {params.threshold} > {output.value}"
"""


@pytest.fixture
def toy_registry(tmp_registry):
    folder = tmp_registry / "workflows" / "toy"
    folder.mkdir()
    (folder / "workflow.yaml").write_text(TOY_MANIFEST)
    (folder / "schema.json").write_text(json.dumps(TOY_SCHEMA))
    (folder / "Snakefile").write_text(TOY_SNAKEFILE)
    return tmp_registry


@pytest.mark.parametrize("param, value", [("threshold", ".nan"), ("weight", ".nan"), ("weight", ".inf"),
                                          ("weight", "-.inf")])
def test_non_finite_number_is_refused(toy_registry, param, value):
    """JSON Schema lets NaN through minimum/maximum (and infinity through an unbounded number);
    the gate must refuse both, and must not crash hashing them."""
    [error] = _gate(toy_registry, f"workflow: toy\nparams:\n  {param}: {value}\n").errors
    assert (error.code, error.path) == ("range", f"params.{param}")
    assert "finite" in error.message


def test_yaml_date_in_untyped_param_is_refused(toy_registry):
    [error] = _gate(toy_registry, "workflow: toy\nparams:\n  note: 2024-01-31\n").errors
    assert (error.code, error.path) == ("type", "params.note")
    assert "quote" in error.hint


def test_number_inside_range_passes(toy_registry):
    result = _gate(toy_registry, "workflow: toy\nparams:\n  threshold: 0.25\n  note: {any: [1, 2]}\n")
    assert result.ok, result.errors
    assert result.invocation.params == {"threshold": 0.25, "weight": 1, "note": {"any": [1, 2]}}


def _gate(registry: Path, text: str, check_dag: bool = True):
    data, error = parse_yaml(text, "run.yaml")
    assert error is None, error
    return gate(Registry.load(registry), data, load_settings(registry), check_dag=check_dag)
