"""A registry's own artifact types (snakegate.toml [types.<name>]): the gate, the check and every command
use them as they use the built-in ones; a mistake in them names the field; a registry never redefines a
built-in type, and one registry's types are not in force once another is loaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from registry_copies import make_registry
from snakegate import metaschemas
from snakegate.contract import artifacts
from snakegate.registry.types import READS
from snakegate.registry.workflows import Registry

TYPES = """
[types.pdf]
description = "A PDF document"
extensions = [".pdf"]
check = "magic"
magic = "25504446"

[types.csv-latin1]
description = "A comma-separated table saved in Latin-1"
check = "table"
delimiter = ","
encoding = "latin-1"

[types.gtf]
description = "GTF gene annotation"
extensions = [".gtf"]
check = "columns"
columns = 9
"""

PAGES = {
    "workflow.yaml": """\
        id: pages
        version: 0.1.0
        title: Pages
        description: Counts the lines of a table and copies a PDF, to type inputs only a registry declares.
        tags: [test]
        maintainers: [{name: snakegate tests}]
        trust: community
        rules:
          count: {input: {document: pdf, notes: csv-latin1}, output: {counted: text}}
        outputs:
          counted: {path: results/counted.txt, type: text, description: The copied document's size and the table.}
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
        "additionalProperties": False, "required": ["document", "notes", "column"],
        "properties": {
            "document": {"type": "string", "x-artifact": "pdf", "description": "A PDF."},
            "notes": {"type": "string", "x-artifact": "csv-latin1", "description": "A Latin-1 table."},
            "column": {"type": "string", "x-column-of": "notes", "description": "A column of notes."},
        },
    }),
    "Snakefile": """\
        rule count:
            input:
                document=config["document"],
                notes=config["notes"],
            output:
                counted="results/counted.txt",
            params:
                column=config["column"],
            shell:
                "wc -c {input.document:q} {input.notes:q} > {output.counted:q}"
        """,
}
PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n"


@pytest.fixture
def lab(tmp_path) -> Path:
    """A registry declaring pdf, csv-latin1 and gtf, with workflow `pages` typed by two of them and its data."""
    root = make_registry(tmp_path / "lab", {"pages": PAGES})
    (root / "snakegate.toml").write_text(TYPES)
    (root / "data" / "paper.pdf").write_bytes(PDF)
    (root / "data" / "notes.csv").write_bytes("Größe,Anzahl\n1,2\n3,4\n".encode("latin-1"))
    return root


def write_run(root: Path, **params) -> Path:
    config = {"workflow": "pages", "params": {"document": "data/paper.pdf", "notes": "data/notes.csv",
                                              "column": "Größe", **params}}
    path = root / "run.yaml"
    path.write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    return path


def test_the_gate_checks_an_input_of_a_registry_type_and_reads_a_latin1_header_in_its_encoding(lab, cli):
    code, out, err = cli("--registry", lab, "validate", write_run(lab))
    assert code == 0, out + err
    assert "passes the gate" in out


def test_a_file_that_is_not_of_the_registry_type_is_refused_with_the_types_own_sentence(lab, cli):
    (lab / "data" / "fake.pdf").write_text("just text\n")
    code, out, err = cli("--registry", lab, "validate", write_run(lab, document="data/fake.pdf"))
    assert code == 1
    assert "is not a pdf: its first bytes are not the pdf signature" in " ".join((out + err).split())  # wrapped at 80


def test_a_column_missing_from_the_latin1_header_is_refused_naming_the_columns_decoded(lab, cli):
    code, out, err = cli("--registry", lab, "validate", write_run(lab, column="Grosse"))
    assert code == 1
    assert "Größe" in out + err  # the header decoded as Latin-1 is what the refusal offers


def test_a_columns_type_names_the_line_whose_width_is_wrong(lab):
    Registry.load(lab)
    good = lab / "data" / "genes.gtf"
    good.write_text("#!genome-build test\n" + "\t".join(["chr1", "src", "gene", "1", "9", ".", "+", ".",
                                                         'gene_id "g1";']) + "\n")
    assert artifacts.check(good, "gtf") is None
    bad = lab / "data" / "bad.gtf"
    bad.write_text("chr1 src gene 1 9 . + . gene_id\n")
    assert artifacts.check(bad, "gtf") == ("is not gtf: line 1 has 1 tab-separated field(s), not 9; "
                                           "are they separated by spaces?")


def test_snakegate_check_knows_the_types_the_registry_declares_and_only_those(lab, cli):
    code, out, err = cli("--registry", lab, "check", "pages")
    assert "[unknown_artifact_type]" not in out and "[schema_invalid]" not in out, out + err
    (lab / "snakegate.toml").write_text(TYPES.split("[types.gtf]")[0].replace("[types.pdf]", "[types.pdf-doc]"))
    code, out, err = cli("--registry", lab, "check", "pages")
    assert code == 1
    assert "rules.count.input.document is `pdf`, which is not an artifact type of this registry" in out
    assert "did you mean `pdf-doc`?" in out and "snakegate.toml [types.<name>]" in out


def test_a_mistake_in_the_registry_types_names_the_field_the_value_and_the_fix(lab, cli):
    (lab / "snakegate.toml").write_text('[types.gtf]\ndescription = "GTF"\ncheck = "colums"\ncolumns = 9\n'
                                        'encodng = "latin-1"\n')
    code, out, err = cli("--registry", lab, "list")
    assert code == 2
    assert "types.gtf.check: 'colums' is not one of" in err and "did you mean `columns`?" in err
    assert "types.gtf: unknown field(s) `encodng` (did you mean `encoding`?)" in err
    assert "Traceback" not in err


def test_a_field_the_check_does_not_read_is_refused_rather_than_ignored(lab, cli):
    (lab / "snakegate.toml").write_text('[types.pdf]\ndescription = "PDF"\ncheck = "magic"\nmagic = "2550"\n'
                                        'prefix = "%PDF"\n')
    code, _out, err = cli("--registry", lab, "list")
    assert code == 2
    assert "types.pdf.prefix: check `magic` does not read it" in err


def test_a_registry_never_redefines_a_builtin_type(lab, cli):
    (lab / "snakegate.toml").write_text('[types.csv-table]\ndescription = "mine"\ncheck = "text"\n')
    code, _out, err = cli("--registry", lab, "list")
    assert code == 2
    assert "types.csv-table: `csv-table` is a built-in type" in err
    assert metaschemas.artifact_types()["csv-table"]["check"] == "table"


def test_an_unknown_text_encoding_is_refused_when_the_registry_loads_not_when_a_file_is_read(lab, cli):
    (lab / "snakegate.toml").write_text('[types.old]\ndescription = "x"\ncheck = "text"\nencoding = "latin-11"\n')
    code, _out, err = cli("--registry", lab, "list")
    assert code == 2
    assert "types.old.encoding: 'latin-11' is not a text encoding Python knows" in err


def test_the_types_of_one_registry_are_not_in_force_once_another_is_loaded(lab, tmp_path):
    Registry.load(lab)
    assert "pdf" in metaschemas.artifact_types()
    Registry.load(make_registry(tmp_path / "plain"))
    assert "pdf" not in metaschemas.artifact_types()
    assert artifacts.check(lab / "data" / "paper.pdf", "pdf") == "unknown artifact type 'pdf'"


def test_every_builtin_type_is_written_in_the_form_a_registry_type_takes():
    validator = metaschemas.validator("artifact-type.schema.json")
    for name, spec in metaschemas.builtin_artifact_types().items():
        assert not list(validator.iter_errors(spec)), name
        assert set(spec) - READS[spec["check"]] <= {"description", "extensions", "check"}, name
