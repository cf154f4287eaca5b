"""Sample sheets at the gate (issue 15.3): a table param with `x-sample-sheet` has its rows checked
against a column schema (errors name row, line, column and value), and the files its path columns
name are resolved inside the data roots and hashed into the invocation. Real files, the real gate."""
import json

import pytest

from registry_copies import make_registry
from snakegate.gate.prove import gate
from snakegate.registry.workflows import Registry
from snakegate.registry.settings import load_settings

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


def registry_with_reads(path, workflows):
    root = make_registry(path, workflows)
    (root / "data" / "reads").mkdir(parents=True)
    for name in ("a", "b"):
        (root / "data" / "reads" / f"{name}.fastq").write_text(FASTQ.replace("r1", name))
    return root


@pytest.fixture
def registry(tmp_path):
    root = registry_with_reads(tmp_path / "reg", {"sheets": WORKFLOW})
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
    from snakegate.contract.dialect import contract_problems

    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
              "additionalProperties": False,
              "properties": {"s": {"type": "string", "x-artifact": "json", "description": "sheet",
                                   "x-sample-sheet": {"properties": {"f": {"x-artifact": "fastqq"}}}}}}
    problems = [p for _, p in contract_problems(schema)]
    assert any("needs x-artifact csv-table or tsv-table" in p for p in problems)
    assert any("'fastqq' is not a known artifact type" in p for p in problems)


# -- relative sheet paths mean the same file to the gate, the check, `snakegate test` and a run ---------------

READS_WORKFLOW = {
    "workflow.yaml": WORKFLOW["workflow.yaml"].replace("id: sheets", "id: reads").replace(
        "count: {input: {sheet: tsv-table}, output: {counts: text}}",
        "count: {input: {reads: fastq}, output: {counts: text}}"),
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": False,
        "required": ["samples"],
        "properties": {"samples": {"type": "string", "x-artifact": "tsv-table", "x-sample-sheet": SHEET_SCHEMA,
                                   "description": "One row per sample: name, condition, replicate, reads file."}},
    }),
    # the sheet is read when the Snakefile loads, and the files it lists are the rule's inputs
    "Snakefile": """\
        import csv

        from snakemake.utils import validate

        validate(config, "schema.json")

        with open(config["samples"]) as sheet:
            READS = [row["reads"] for row in csv.DictReader(sheet, delimiter="\\t")]


        rule count:
            input:
                reads=READS,
            output:
                counts="results/counts.txt",
            shell:
                "cat {input.reads} | wc -l > {output.counts}"
        """,
    "examples/basic.yaml": "workflow: reads\nparams:\n  samples: data/samples.tsv\n",
    "test/basic/config.yaml": "workflow: reads\nparams:\n  samples: workflows/reads/test/data/samples.tsv\n",
    "test/basic/expected/results/counts.txt": "8\n",
    "test/data/a.fastq": FASTQ.replace("r1", "a"),
    "test/data/b.fastq": FASTQ.replace("r1", "b"),
    "test/data/samples.tsv": "sample\tcondition\treads\na\ttreated\tworkflows/reads/test/data/a.fastq\n"
                             "b\tuntreated\tworkflows/reads/test/data/b.fastq\n",
}


@pytest.fixture
def reads_registry(tmp_path):
    root = registry_with_reads(tmp_path / "reg", {"reads": READS_WORKFLOW})
    write_sheet(root, [["a", "treated", "1", "data/reads/a.fastq"], ["b", "untreated", "2", "data/reads/b.fastq"]])
    return root


def test_relative_sheet_paths_resolve_against_the_registry_root_under_snakegate_test(reads_registry, cli):
    """The gate resolves them against the registry root; `snakegate test` runs in a temporary folder and
    must read the same files (before, Snakemake there found no workflows/reads/test/data/a.fastq)."""
    sheet = reads_registry / "workflows/reads/test/data/samples.tsv"
    before = sheet.read_bytes()
    code, out, err = cli("--registry", reads_registry, "test", "reads")
    assert code == 0, out + err
    assert "ok    reads/basic" in out and "identical        counts (results/counts.txt)" in out
    assert sheet.read_bytes() == before  # the gated sheet itself is never rewritten


def test_relative_sheet_paths_build_the_dag_in_validate_and_check(reads_registry, cli):
    code, out, err = cli("--registry", reads_registry, "validate", reads_registry / "workflows/reads/examples/basic.yaml")
    assert code == 0 and "passes the gate" in out, out + err
    code, out, err = cli("--registry", reads_registry, "check", "reads", "--json", "--no-hygiene")
    findings = json.loads(out)["findings"]
    assert code == 0 and [f for f in findings if f["severity"] == "error"] == [], findings


def test_an_absolute_copy_changes_only_the_relative_path_cells(tmp_path):
    from snakegate.gate.sheet_paths import absolute_text

    (tmp_path / "data").mkdir()
    text = "sample\tcondition\treads\na\ttreated\tdata/a.fastq\nb\tuntreated\t/abs/b.fastq\n"
    new = absolute_text(text, "\t", {"reads"}, tmp_path)
    assert new == (f"sample\tcondition\treads\na\ttreated\t{(tmp_path / 'data/a.fastq').resolve()}\n"
                   "b\tuntreated\t/abs/b.fastq\n")
    assert absolute_text("sample\treads\nb\t/abs/b.fastq\n", "\t", {"reads"}, tmp_path) is None
