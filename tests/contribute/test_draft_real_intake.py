"""What taking rna-seq-star-deseq2 and Nextstrain's zika build in with `snakegate draft` showed draft got wrong
(issue 27 §2), each as a small Snakefile of its own: a sample sheet naming FASTQ files the workflow does not
ship, `directory()` outputs, a `configfile:` named from `workflow.basedir`, and includes from outside the
drafted folder (`../shared/`), which draft copied nothing of while exiting 0; unpack() of `dict(zip(...))`, a
default-target function building its list with append, and Nextstrain's `# key [optional] note` comments.

Draft only reads the Snakefiles written here (no Snakemake run): pure and fast.
"""
import json

import yaml

from snakegate.contribute.draft import draft
from snakegate.contribute.draft_contract import sheet_schema
from test_draft_evaluates import _workflow  # the upstream folder: a Snakefile, a LICENSE, the files named


def _draft(tmp_path, folder):
    root = tmp_path / "registry"
    (root / "workflows").mkdir(parents=True)
    result = draft(folder, root, "wf")
    return (result, yaml.safe_load((result.folder / "workflow.yaml").read_text()),
            json.loads((result.folder / "schema.json").read_text()))


def test_a_sheet_column_naming_fastq_files_the_workflow_does_not_ship_is_an_artifact_column():
    rows = [{"sample": "A", "fq1": "A.1.fq.gz", "fq2": "A.2.fq.gz", "sra": ""},
            {"sample": "B", "fq1": "B.1.fq.gz", "fq2": "", "sra": "SRR1"}]
    columns = sheet_schema({"properties": {"fq1": {"type": "string", "description": "path to FASTQ"}}}, rows,
                           exists=lambda cell: False)["properties"]
    assert columns["fq1"] == {"type": "string", "description": "path to FASTQ", "x-artifact": "fastq.gz"}
    assert columns["fq2"]["x-artifact"] == "fastq.gz"
    assert "sample" not in columns and "sra" not in columns  # names and accessions are no files


def test_a_sheet_column_of_names_or_of_several_types_stays_a_plain_column():
    rows = [{"reads": "A.1.fq.gz", "label": "v1.2"}, {"reads": "B.bam", "label": "v2"}]
    assert sheet_schema({}, rows, exists=lambda cell: False)["properties"] == {}


def test_a_directory_output_and_the_inputs_reading_it_are_typed_directory(tmp_path):
    _, manifest, _ = _draft(tmp_path, _workflow(tmp_path, """
        rule all:
            input: "results/aligned.bam"
        rule index:
            output: directory("resources/star_genome")
            shell: "mkdir -p {output}"
        rule align:
            input: idx=rules.index.output, reads="reads.fq"
            output: bam="results/aligned.bam"
            shell: "touch {output}"
        """))
    assert manifest["rules"]["index"]["output"] == {"_1": "directory"}
    assert manifest["rules"]["align"]["input"]["idx"] == "directory"


def test_a_configfile_named_from_workflow_basedir_is_the_config_draft_reads(tmp_path):
    result, _, schema = _draft(tmp_path, _workflow(tmp_path, """
        import os
        configfile: os.path.join(workflow.basedir, "defaults/config.yaml")
        rule all:
            input: "results/out.txt"
        rule make:
            output: "results/out.txt"
            params: n=config["filter"]["min_length"]
            shell: "echo {params.n} > {output}"
        """, **{"defaults/config.yaml": "filter:\n  min_length: 5385\n"}))
    assert schema["properties"]["filter"]["properties"]["min_length"]["default"] == 5385
    assert not [d for d in result.decide if "has no config.yaml" in d]


def test_an_include_from_outside_the_drafted_folder_is_named_and_the_draft_is_unfinished(tmp_path):
    folder = _workflow(tmp_path, """
        include: "../shared/config.smk"
        rule all:
            input: "results/out.txt"
        rule make:
            output: "results/out.txt"
            shell: "touch {output}"
        """)
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "config.smk").write_text("MIN = 1\n")
    result, _, _ = _draft(tmp_path, folder)
    (said,) = [u for u in result.unsure if "outside" in u]
    assert said.startswith("../shared/config.smk is read from outside upstream/") and "was not copied" in said
    assert not (result.folder.parent / "shared").exists()  # nothing outside the workflow's own folder is written


def test_unpack_of_a_function_returning_dict_of_zip_gives_its_literal_names(tmp_path):
    result, manifest, _ = _draft(tmp_path, _workflow(tmp_path, """
        def get_fq(wildcards):
            if wildcards.sample == "a":
                return dict(zip(["fq1", "fq2"], expand("trimmed/{s}_{r}.fastq.gz", r=["R1", "R2"], s="a")))
            return {"fq1": "trimmed/{sample}_single.fastq.gz".format(**wildcards)}
        rule all:
            input: "results/a.bam"
        rule align:
            input: unpack(get_fq)
            output: bam="results/{sample}.bam"
            shell: "touch {output}"
        """))
    assert manifest["rules"]["align"]["input"] == {"fq1": "fastq.gz", "fq2": "fastq.gz"}
    assert not [u for u in result.unsure if "unpack" in u]


def test_a_default_target_function_building_its_list_with_append_gives_every_output_it_may_hold(tmp_path):
    result, manifest, _ = _draft(tmp_path, _workflow(tmp_path, """
        def get_final_output():
            final_output = expand("results/{name}.tsv", name=["a", "b"])
            final_output.append("results/qc/report.html")
            if config.get("pca", True):
                final_output.extend(["results/pca.svg"])
            return final_output
        rule all:
            input: get_final_output()
        rule make:
            output: "results/{name}.tsv"
            shell: "touch {output}"
        """))
    assert sorted(o["path"] for o in manifest["outputs"].values()) == [
        "results/a.tsv", "results/b.tsv", "results/pca.svg", "results/qc/report.html"]
    assert not [u for u in result.unsure if "default target" in u]


def test_a_note_naming_a_key_optional_declares_it_with_the_note_as_its_description(tmp_path):
    result, _, schema = _draft(tmp_path, _workflow(tmp_path, """
        configfile: "config.yaml"
        rule all:
            input: "results/out.txt"
        rule traits:
            output: "results/out.txt"
            params: labels=config["traits"].get("branch_labels"), conf=config["traits"].get("branch_confidence", 0)
            shell: "echo {params.labels} {params.conf} > {output}"
        """, **{"config.yaml": "traits:\n  # branch_labels [optional] columns to annotate as branch labels\n"
                               "  branch_labels:\n    - region\n"
                               "  # branch_confidence [optional] minimum confidence of a state change\n"
                               "  # Note: prose [optional] stays prose because it is no key\n"}))
    traits = schema["properties"]["traits"]["properties"]
    assert traits["branch_confidence"] == {"description": "minimum confidence of a state change"}
    assert traits["branch_labels"]["description"] == "columns to annotate as branch labels"
    assert "branch_confidence" not in schema["properties"]["traits"].get("required", [])
    assert set(traits) == {"branch_labels", "branch_confidence"}


def test_inputs_unpacked_from_a_mapping_built_from_the_config_are_named_as_unknown(tmp_path):
    result, manifest, _ = _draft(tmp_path, _workflow(tmp_path, """
        configfile: "config.yaml"
        SOURCES = {i["name"]: i["metadata"] for i in config["inputs"]}
        rule all:
            input: "results/metadata.tsv"
        rule merge_metadata:
            input: **SOURCES
            output: metadata="results/metadata.tsv"
            shell: "cat {input} > {output}"
        """, **{"config.yaml": "inputs:\\n  - name: ncbi\\n    metadata: data/metadata.tsv\\n"}))
    (said,) = [u for u in result.unsure if "merge_metadata" in u]
    assert "takes inputs from a **mapping whose names draft cannot read" in said
    assert "rules.merge_metadata.input" in said
