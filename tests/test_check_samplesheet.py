"""Sample sheets at the gate (issue 15.3): a table param with `x-sample-sheet` has its rows checked
against a column schema (errors name row, line, column and value), and the files its path columns
name are resolved inside the data roots and hashed into the invocation. Real files, the real gate."""
import json

import pytest

from registry_copies import make_registry
from snakegate.gate import gate
from snakegate.registry import Registry
from snakegate.settings import load_settings

SHEET_SCHEMA = {
    "type": "object",
    "properties": {
        "sample": {"type": "string", "pattern": "^[A-Za-z0-9_]+$", "description": "sample name"},
        "condition": {"type": "string", "enum": ["treated", "untreated"], "description": "condition"},
        "replicate": {"type": "integer", "minimum": 1, "description": "replicate number"},
        "reads": {"type": "string", "x-artifact": "fastq", "description": "reads of the sample"},
    },
    "required": ["sample", "condition", "reads"],
}

WORKFLOW = {
    "workflow.yaml": """\
        id: sheets
        version: 0.1.0
        title: Sample sheet test
        description: Counts the lines of every read file a sample sheet lists.
        tags: [test]
        maintainers: [{name: snakegate tests}]
        trust: community
        rules:
          count: {input: {sheet: tsv-table}, output: {counts: text}}
        outputs:
          counts: {path: results/counts.txt, type: text, description: Lines per read file.}
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": False,
        "required": ["samples"],
        "properties": {"samples": {"type": "string", "x-artifact": "tsv-table", "x-sample-sheet": SHEET_SCHEMA,
                                   "description": "One row per sample: name, condition, replicate, reads file."},
                       "table": {"type": "string", "x-artifact": "csv-table", "x-min-rows": 1,
                                 "description": "An optional table that must have rows.", "default": "data/t.csv"}},
    }),
    "Snakefile": """\
        from snakemake.utils import validate

        validate(config, "schema.json")


        rule count:
            input:
                sheet=config["samples"],
                table=config["table"],
            output:
                counts="results/counts.txt",
            shell:
                "wc -l {input.sheet} > {output.counts}"
        """,
}

FASTQ = "@r1\nACGT\n+\nIIII\n"


@pytest.fixture
def registry(tmp_path):
    root = make_registry(tmp_path / "reg", {"sheets": WORKFLOW})
    (root / "data" / "reads").mkdir(parents=True)
    for name in ("a", "b"):
        (root / "data" / "reads" / f"{name}.fastq").write_text(FASTQ.replace("r1", name))
    (root / "data" / "t.csv").write_text("x,y\n1,2\n")
    return root


def write_sheet(root, rows, header="sample\tcondition\treplicate\treads"):
    path = root / "data" / "samples.tsv"
    path.write_text("\n".join([header] + ["\t".join(r) for r in rows]) + "\n")
    return path


def run_gate(root, **params):
    return gate(Registry.load(root), {"workflow": "sheets", "params": {"samples": "data/samples.tsv", **params}},
                load_settings(root), check_dag=False)


def messages(result):
    return [e.message for e in result.errors]


def test_a_good_sample_sheet_passes_and_its_files_are_hashed_into_the_invocation(registry):
    write_sheet(registry, [("A", "treated", "1", "data/reads/a.fastq"), ("B", "untreated", "2", "data/reads/b.fastq")])
    result = run_gate(registry)
    assert result.ok, result.errors
    assert set(result.invocation.inputs) == {"params.samples", "params.table", "params.samples[row 1].reads",
                                             "params.samples[row 2].reads"}


def test_changing_a_file_the_sheet_names_changes_the_invocation_id(registry):
    write_sheet(registry, [("A", "treated", "1", "data/reads/a.fastq")])
    first = run_gate(registry).invocation_id
    (registry / "data" / "reads" / "a.fastq").write_text(FASTQ.replace("ACGT", "ACGA"))
    assert run_gate(registry).invocation_id != first


def test_a_bad_cell_names_row_line_column_and_value(registry):
    write_sheet(registry, [("A", "treated", "1", "data/reads/a.fastq"), ("B", "untreatd", "two", "data/reads/b.fastq")])
    result = run_gate(registry)
    assert not result.ok
    by_path = {e.path: e for e in result.errors}
    assert set(by_path) == {"params.samples[row 2].condition", "params.samples[row 2].replicate"}
    cond = by_path["params.samples[row 2].condition"]
    assert cond.code == "sample_sheet"
    assert "row 2 (line 3), column `condition`: value `untreatd` must be one of treated, untreated" in cond.message
    assert cond.hint == "did you mean `untreated`?"
    assert "value `two` must be of type integer" in by_path["params.samples[row 2].replicate"].message


def test_an_empty_required_cell_and_a_missing_column_are_refused(registry):
    write_sheet(registry, [("A", "", "1", "data/reads/a.fastq")])
    (err,) = run_gate(registry).errors
    assert err.path == "params.samples[row 1].condition" and "is empty but required" in err.message
    write_sheet(registry, [("A", "data/reads/a.fastq")], header="sample\treads")
    (err,) = run_gate(registry).errors
    assert err.path == "params.samples.condition" and "has no column `condition`" in err.message


def test_a_path_in_the_sheet_outside_the_data_roots_is_refused(registry, tmp_path):
    outside = tmp_path / "secret.fastq"
    outside.write_text(FASTQ)
    write_sheet(registry, [("A", "treated", "1", str(outside)), ("B", "treated", "1", "../secret.fastq")])
    result = run_gate(registry)
    assert [e.path for e in result.errors] == ["params.samples[row 1].reads", "params.samples[row 2].reads"]
    assert all("outside the allowed data roots" in m for m in messages(result))


def test_a_symlink_in_the_data_root_pointing_outside_is_refused(registry, tmp_path):
    outside = tmp_path / "secret.fastq"
    outside.write_text(FASTQ)
    (registry / "data" / "reads" / "link.fastq").symlink_to(outside)
    write_sheet(registry, [("A", "treated", "1", "data/reads/link.fastq")])
    (err,) = run_gate(registry).errors
    assert "outside the allowed data roots" in err.message and str(outside) in err.message


def test_a_missing_or_mistyped_file_in_the_sheet_is_refused(registry):
    (registry / "data" / "reads" / "c.fastq").write_text(">not a fastq\nACGT\n")
    write_sheet(registry, [("A", "treated", "1", "data/reads/nope.fastq"), ("C", "treated", "1", "data/reads/c.fastq")])
    errors = run_gate(registry).errors
    assert "does not exist" in errors[0].message
    assert "is not a fastq" in errors[1].message


def test_a_sample_sheet_with_a_header_and_no_rows_is_refused(registry):
    write_sheet(registry, [])
    (err,) = run_gate(registry).errors
    assert err.code == "sample_sheet" and "has a header but no rows" in err.message


def test_a_header_only_table_is_refused_when_the_contract_asks_for_rows(registry):
    write_sheet(registry, [("A", "treated", "1", "data/reads/a.fastq")])
    (registry / "data" / "empty.csv").write_text("x,y\n")
    (err,) = run_gate(registry, table="data/empty.csv").errors
    assert err.path == "params.table" and "has 0 data row(s)" in err.message


def test_a_sample_sheet_keyword_on_a_non_table_is_a_contract_problem():
    from snakegate.contract import contract_problems

    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
              "additionalProperties": False,
              "properties": {"s": {"type": "string", "x-artifact": "json", "description": "sheet",
                                   "x-sample-sheet": {"properties": {"f": {"x-artifact": "fastqq"}}}}}}
    problems = [p for _, p in contract_problems(schema)]
    assert any("needs x-artifact csv-table or tsv-table" in p for p in problems)
    assert any("'fastqq' is not a known artifact type" in p for p in problems)
