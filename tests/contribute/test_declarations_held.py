"""Issue 24 §2: `snakegate test` holds every output declaration against the real outputs of each test case.

A table's header must equal the columns declared for the case's params and real input headers, every declared
JSON key must resolve, and an output with `when` must exist exactly when its condition holds. A declaration
that lies fails the case (exit 1), so it fails the registry's CI. Real Snakemake runs tabular-profile in a
throw-away registry whose workflow.yaml (and, for `when`, Snakefile) a test edits.
"""
import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from snakegate.contribute.testcases import hold_declarations
from snakegate.models import Manifest
from snakegate.registry.workflows import Workflow

CLEANED = "columns: {of: dataset_file, keep: columns, order: keep}"
KEYS = "keys: [/rows_in, /rows_out, /column_order, /columns]"


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


@pytest.fixture
def tabular(tmp_registry):
    return tmp_registry / "workflows" / "tabular-profile"


def test_the_curated_declarations_hold_in_both_test_cases(curated_test_run):
    """The session's `snakegate test` of every curated workflow (curated_tests.py), read for tabular-profile."""
    code, out, err = curated_test_run.returncode, curated_test_run.cases("tabular-profile"), curated_test_run.stderr
    assert code == curated_test_run.expected_returncode, curated_test_run.stdout + err
    assert out.count("as declared      cleaned (results/cleaned.csv): ") == 2
    assert "as declared      cleaned (results/cleaned.csv): 8 columns as declared" in out  # basic: every column
    assert "as declared      cleaned (results/cleaned.csv): 4 columns as declared" in out  # fill-mean: 4 kept
    assert out.count("as declared      profile (results/profile.json): all 4 declared keys resolve") == 2
    assert "not as declared" not in out


def test_a_declared_column_the_table_lacks_fails_the_case_naming_it(tabular, tmp_registry, cli):
    edit(tabular / "workflow.yaml", CLEANED, "columns: {fixed: [row_id], of: dataset_file, keep: columns, order: keep}")
    code, out, err = cli("--registry", tmp_registry, "test", "tabular-profile", "--case", "fill-mean")
    assert code == 1 and "FAIL  tabular-profile/fill-mean" in out
    assert ("not as declared  cleaned (results/cleaned.csv): columns: missing `row_id` (the file has species, "
            "bill_depth_mm, body_mass_g, sex; the declaration says row_id, species, bill_depth_mm, body_mass_g, sex)"
            ) in out
    assert "identical        cleaned (results/cleaned.csv)" in out  # the bytes still match: only the claim lies
    assert "Traceback" not in out + err


def test_columns_the_declaration_leaves_out_fail_the_case_naming_them(tabular, tmp_registry, cli):
    edit(tabular / "workflow.yaml", CLEANED, "columns: [species, island, sex]")
    code, out, err = cli("--registry", tmp_registry, "test", "tabular-profile", "--case", "basic")
    assert code == 1 and "1 failed" in out
    assert ("not as declared  cleaned (results/cleaned.csv): columns: not declared `bill_length_mm`, `bill_depth_mm`, "
            "`flipper_length_mm`, `body_mass_g`, `year`") in out


def test_kept_columns_in_another_order_than_declared_fail_and_order_keep_holds(tabular, tmp_registry, cli):
    """load keeps `columns` in that list's order: without `order: keep` the declaration says the header's."""
    edit(tabular / "test/fill-mean/config.yaml", "columns: [species, bill_depth_mm, body_mass_g, sex]",
         "columns: [sex, species]")
    edit(tabular / "workflow.yaml", CLEANED, "columns: {of: dataset_file, keep: columns}")
    code, out, err = cli("--registry", tmp_registry, "test", "tabular-profile", "--case", "fill-mean", "--update")
    assert code == 1
    assert ("not as declared  cleaned (results/cleaned.csv): columns: the same columns in another order (the file "
            "has sex, species; the declaration says species, sex)") in out
    edit(tabular / "workflow.yaml", "columns: {of: dataset_file, keep: columns}", CLEANED)
    code, out, err = cli("--registry", tmp_registry, "test", "tabular-profile", "--case", "fill-mean")
    assert code == 0, out + err
    assert "as declared      cleaned (results/cleaned.csv): 2 columns as declared" in out


def test_a_declared_key_missing_from_the_json_fails_the_case_naming_it(tabular, tmp_registry, cli):
    edit(tabular / "workflow.yaml", KEYS, "keys: [/rows_in, /rows_dropped, /columns/species/kind, /columns/Species]")
    code, out, err = cli("--registry", tmp_registry, "test", "tabular-profile", "--case", "basic")
    assert code == 1 and "FAIL  tabular-profile/basic" in out
    assert ("not as declared  profile (results/profile.json): declared keys name nothing in the file: /rows_dropped, "
            "/columns/Species (of 4 declared)") in out


# -- when --------------------------------------------------------------------------------------------

PLOT_IN_ALL = '        plot="results/profile.png",\n'


def plot_only_when(tabular: Path, drop_duplicates: bool) -> None:
    """The Snakefile's default target asks for the plot only when drop_duplicates is `drop_duplicates`."""
    edit(tabular / "Snakefile", PLOT_IN_ALL,
         f'        **({{"plot": "results/profile.png"}} if config["drop_duplicates"] is {drop_duplicates} else {{}}),\n')


def declare_plot_when(tabular: Path, drop_duplicates: bool) -> None:
    edit(tabular / "workflow.yaml", "  plot: {path: results/profile.png, type: png,",
         f"  plot: {{when: {{drop_duplicates: {str(drop_duplicates).lower()}}}, path: results/profile.png, type: png,")


def test_an_output_written_although_its_when_does_not_hold_fails_the_case(tabular, tmp_registry, cli):
    declare_plot_when(tabular, True)  # the Snakefile still always makes it
    code, out, err = cli("--registry", tmp_registry, "test", "tabular-profile", "--case", "fill-mean")
    assert code == 1 and "FAIL  tabular-profile/fill-mean" in out
    assert ("not as declared  plot (results/profile.png): the run wrote it, but its `when` {drop_duplicates: true} "
            "does not hold for these params") in out


def test_an_output_made_exactly_when_its_when_holds_passes_in_both_cases(tabular, tmp_registry, cli):
    declare_plot_when(tabular, True)
    plot_only_when(tabular, True)
    code, out, err = cli("--registry", tmp_registry, "test", "tabular-profile")
    assert code == 0, out + err
    assert "as declared      plot (results/profile.png): written, as its `when` {drop_duplicates: true} says" in out
    assert ("as declared      plot (results/profile.png): not written, as its `when` {drop_duplicates: true} says "
            "for these params") in out
    assert out.count("identical        plot (results/profile.png)") == 1  # compared only where it is made


def test_an_output_missing_although_its_when_holds_fails_the_case(tabular, tmp_registry, cli):
    declare_plot_when(tabular, False)
    plot_only_when(tabular, True)  # made for the other value
    code, out, err = cli("--registry", tmp_registry, "test", "tabular-profile", "--case", "fill-mean")
    assert code == 1
    assert "missing          plot (results/profile.png): the run did not write it" in out
    assert ("not as declared  plot (results/profile.png): the run did not write it, though its `when` "
            "{drop_duplicates: false} holds for these params") in out


# -- held against files directly: what cannot be proven is said, not passed silently --------------------


@pytest.fixture
def workflow(tabular):
    def make(**outputs) -> Workflow:
        data = YAML(typ="safe").load((tabular / "workflow.yaml").read_text())
        data["outputs"] = outputs
        return Workflow(folder=tabular, manifest=Manifest.model_validate(data))
    return make


def test_columns_of_an_input_whose_header_is_unknown_are_not_proven_and_say_why(workflow, tmp_path):
    wf = workflow(cleaned={"path": "cleaned.csv", "type": "csv-table", "description": "c",
                           "columns": {"of": "dataset_file"}})
    (tmp_path / "cleaned.csv").write_text("a,b\n1,2\n")
    (result,) = hold_declarations(wf, tmp_path, {"dataset_file": str(tmp_path / "gone.csv")}, tmp_path)
    assert result.status == "not proven"
    assert result.detail == ("its columns are not proven: the header of `dataset_file` is not a readable table here "
                             "(a built-in dataset?)")


def test_an_input_given_relative_to_the_registry_root_gives_its_header(workflow, tmp_path):
    wf = workflow(cleaned={"path": "out/cleaned.csv", "type": "csv-table", "description": "c",
                           "columns": {"of": "dataset_file", "minus": "columns"}})
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "in.csv").write_text("id,a,b\n1,2,3\n")
    (tmp_path / "work" / "out").mkdir(parents=True)
    (tmp_path / "work" / "out" / "cleaned.csv").write_text("id,b\n1,3\n")
    (result,) = hold_declarations(wf, tmp_path / "work", {"dataset_file": "data/in.csv", "columns": ["a"]}, tmp_path)
    assert (result.status, result.detail) == ("as declared", "2 columns as declared")


def test_a_json_output_that_is_not_json_is_not_as_declared(workflow, tmp_path):
    wf = workflow(profile={"path": "p.json", "type": "json", "description": "p", "keys": ["/rows_in"]})
    (tmp_path / "p.json").write_text("{not json")
    (result,) = hold_declarations(wf, tmp_path, {}, tmp_path)
    assert result.status == "not as declared" and result.detail.startswith("it is not JSON (")


def test_declared_keys_that_resolve_are_counted(workflow, tmp_path):
    wf = workflow(profile={"path": "p.json", "type": "json", "description": "p", "keys": ["/a/0", "/b~1c"]})
    (tmp_path / "p.json").write_text(json.dumps({"a": [1], "b/c": None}))
    (result,) = hold_declarations(wf, tmp_path, {}, tmp_path)
    assert (result.status, result.detail) == ("as declared", "all 2 declared keys resolve")


def test_columns_declared_on_an_output_that_is_no_table_fail_without_a_crash(workflow, tmp_path):
    wf = workflow(plot={"path": "p.png", "type": "png", "description": "p", "columns": ["a"]})
    (tmp_path / "p.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (result,) = hold_declarations(wf, tmp_path, {}, tmp_path)
    assert result.status == "not as declared" and "declares columns but is a png, not a table" in result.detail


def test_a_json_output_nested_too_deep_to_parse_fails_without_a_crash(workflow, tmp_path):
    wf = workflow(profile={"path": "p.json", "type": "json", "description": "p", "keys": ["/a"]})
    (tmp_path / "p.json").write_text("[" * 200_000 + "]" * 200_000)
    (result,) = hold_declarations(wf, tmp_path, {}, tmp_path)
    assert result.status == "not as declared" and result.detail.startswith("it is not JSON (")
