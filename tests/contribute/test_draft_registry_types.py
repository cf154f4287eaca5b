"""`snakegate draft` types files with the types of the registry it drafts into (issue 27 §1): a `.gtf` in a
registry whose snakegate.toml declares `[types.gtf]` is typed gtf, as that registry's `check` types it; in a
registry that does not, it is left for the contributor to decide. A registry's broken [types] is refused with
its message before anything is written.

Draft only reads the Snakefiles written here (no Snakemake run): pure and fast.
"""

import json
import textwrap
from pathlib import Path

import pytest
import yaml

from snakegate import metaschemas
from snakegate.contribute.draft import draft
from snakegate.errors import UserError

GTF_TYPE = """
[types.gtf]
description = "GTF gene annotation: nine tab-separated columns, no header"
extensions = [".gtf"]
check = "columns"
columns = 9
"""

SNAKEFILE = """
configfile: "config.yaml"
rule all:
    input: "results/genes.gtf"
rule annotate:
    input: genome=config["genome"], annotation=config["annotation"]
    output: gtf="results/genes.gtf"
    shell: "cat {input.annotation} > {output.gtf}"
"""


def _draft(tmp_path: Path, settings: str | None):
    root = tmp_path / "registry"
    (root / "workflows").mkdir(parents=True)
    if settings is not None:
        (root / "snakegate.toml").write_text(settings)
    folder = tmp_path / "upstream"
    (folder / "ref").mkdir(parents=True)
    (folder / "Snakefile").write_text(textwrap.dedent(SNAKEFILE))
    (folder / "config.yaml").write_text("genome: ref/genome.fa\nannotation: ref/genes.gtf\n")
    (folder / "ref" / "genome.fa").write_text(">chr1\nACGT\n")
    (folder / "ref" / "genes.gtf").write_text("chr1\tx\tgene\t1\t4\t.\t+\t.\tgene_id \"g\";\n")
    (folder / "LICENSE").write_text("MIT License\n")
    try:
        result = draft(folder, root, "wf")
    finally:
        metaschemas.use_registry_types({})  # leave no registry's types in force for the next test
    manifest = yaml.safe_load((result.folder / "workflow.yaml").read_text())
    schema = json.loads((result.folder / "schema.json").read_text())
    return result, manifest, schema


def test_an_output_and_an_input_of_a_type_the_registry_declares_are_typed_with_it(tmp_path):
    result, manifest, schema = _draft(tmp_path, GTF_TYPE)
    assert manifest["rules"]["annotate"]["output"] == {"gtf": "gtf"}
    assert manifest["outputs"]["genes"] == {"path": "results/genes.gtf", "type": "gtf",
                                            "description": "TODO: describe what genes.gtf holds"}
    assert schema["properties"]["annotation"]["x-artifact"] == "gtf"
    assert schema["properties"]["genome"]["x-artifact"] == "fasta"  # the built-in types still hold
    assert not [d for d in result.decide if "annotate.output.gtf" in d]


def test_an_input_read_from_a_param_takes_the_params_artifact_type(tmp_path):
    result, manifest, _ = _draft(tmp_path, GTF_TYPE)
    assert manifest["rules"]["annotate"]["input"] == {"genome": "fasta", "annotation": "gtf"}
    assert not [d for d in result.decide if "rules.annotate.input" in d]


def test_without_the_registrys_type_the_gtf_is_left_for_the_contributor(tmp_path):
    result, manifest, _ = _draft(tmp_path, None)
    assert manifest["outputs"]["genes"]["type"] != "gtf"
    assert any("rules.annotate.output.gtf" in d for d in result.decide + result.unsure)


def test_a_registry_whose_types_do_not_load_is_refused_naming_the_field_and_nothing_is_written(tmp_path):
    with pytest.raises(UserError) as refused:
        _draft(tmp_path, GTF_TYPE.replace('check = "columns"', 'check = "colums"'))
    assert "types.gtf.check" in refused.value.message and "did you mean `columns`" in refused.value.message
    assert not (tmp_path / "registry" / "workflows" / "wf").exists()
