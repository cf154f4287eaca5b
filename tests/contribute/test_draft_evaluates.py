"""`snakegate draft` evaluates a workflow's IO as Snakemake would, as far as reading it can tell (issue 27 §2),
and never exits 0 with a draft it knows is wrong: what it cannot evaluate is named and the exit is 1.

Small Snakefiles written here; draft only reads them (no Snakemake run), so these tests are pure and fast.
"""

import json
import textwrap
from pathlib import Path

import pytest
import yaml

from snakegate.contribute.draft import draft


def _workflow(tmp_path: Path, snakefile: str, **files: str) -> Path:
    folder = tmp_path / "upstream"
    folder.mkdir()
    (folder / "Snakefile").write_text(textwrap.dedent(snakefile))
    (folder / "LICENSE").write_text("MIT License\n")
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(textwrap.dedent(text))
    return folder


def _draft(tmp_path: Path, snakefile: str, **files: str):
    root = tmp_path / "registry"
    (root / "workflows").mkdir(parents=True)
    result = draft(_workflow(tmp_path, snakefile, **files), root, "wf")
    manifest = yaml.safe_load((result.folder / "workflow.yaml").read_text())
    return result, manifest


def test_a_default_target_function_returning_written_paths_gives_those_outputs(tmp_path):
    result, manifest = _draft(tmp_path, """
        SAMPLES = ["a", "b"]
        def final_outputs(wildcards):
            return expand("results/{s}.csv", s=SAMPLES) + ["results/summary.json"]
        rule all:
            input: final_outputs
        rule make:
            output: "results/{s}.csv"
            shell: "touch {output}"
        rule summary:
            output: "results/summary.json"
            shell: "echo {{}} > {output}"
        """)
    assert {k: (v["path"], v["type"]) for k, v in manifest["outputs"].items()} == {
        "a": ("results/a.csv", "csv-table"), "b": ("results/b.csv", "csv-table"),
        "summary": ("results/summary.json", "json")}
    assert result.unsure == []


def test_a_default_target_calling_a_function_gives_what_it_returns(tmp_path):
    result, manifest = _draft(tmp_path, """
        def final_output():
            return ["results/report.html"]
        rule all:
            input: final_output()
        rule report:
            output: "results/report.html"
            shell: "touch {output}"
        """)
    assert manifest["outputs"] == {"report": {"path": "results/report.html", "type": "html",
                                              "description": "TODO: describe what report.html holds"}}
    assert result.unsure == []


def test_a_default_target_lambda_is_named_as_unknown_and_makes_the_draft_incomplete(tmp_path, cli):
    folder = _workflow(tmp_path, """
        rule all:
            input: lambda w: [f"results/{s}.csv" for s in config["samples"]]
        rule make:
            output: "results/{s}.csv"
            shell: "touch {output}"
        """)
    root = tmp_path / "registry"
    (root / "workflows").mkdir(parents=True)
    code, out, err = cli("--registry", root, "draft", folder, "--id", "wf")
    assert code == 1, out + err
    unsure = out.split("draft could not know (the draft is incomplete until you fill these in):\n", 1)[1]
    assert "the default target, rule `all`, asks for lambda w:" in unsure
    assert "declare the rest under outputs, each with its path and type" in unsure
    # written all the same, so the contributor can finish it
    assert yaml.safe_load((root / "workflows/wf/workflow.yaml").read_text())["outputs"] == {}


def test_rules_output_references_are_followed_to_the_files_and_their_types(tmp_path):
    result, manifest = _draft(tmp_path, """
        rule all:
            input: rules.index.output, rules.sort.output.bam
        rule sort:
            input: "data/in.bam"
            output: bam="sorted/x.bam"
            shell: "cp {input} {output}"
        rule index:
            input: rules.sort.output[0]
            output: "sorted/x.bam.bai"
            shell: "touch {output}"
        """)
    assert manifest["rules"]["index"]["input"] == {"_1": "bam"}
    assert {v["path"] for v in manifest["outputs"].values()} == {"sorted/x.bam.bai", "sorted/x.bam"}
    assert result.unsure == []


def test_multiext_outputs_are_each_typed_by_their_own_extension(tmp_path):
    result, manifest = _draft(tmp_path, """
        rule index:
            input: "ref/genome.fa"
            output: multiext("ref/genome", ".fa.fai", ".dict")
            shell: "touch {output}"
        rule named:
            input: "ref/genome.fa"
            output: multiext("out/x", table=".csv", plot=".png")
            shell: "touch {output}"
        """)
    assert manifest["rules"]["index"]["output"] == {"_1": "fai", "_2": "unknown"}
    assert manifest["rules"]["named"]["output"] == {"table": "csv-table", "plot": "png"}
    assert "give rules.index.output._2 its artifact type (ref/genome.dict)" in "\n".join(result.decide)


def test_unpack_inputs_are_typed_by_the_names_the_function_returns(tmp_path):
    result, manifest = _draft(tmp_path, """
        def inputs(wildcards):
            return {"reads": f"data/{wildcards.s}.fastq.gz", "reference": "ref/genome.fa"}
        rule all:
            input: "mapped/a.bam"
        rule map:
            input: unpack(inputs)
            output: "mapped/{s}.bam"
            shell: "touch {output}"
        """)
    assert manifest["rules"]["map"]["input"] == {"reads": "fastq.gz", "reference": "fasta"}
    assert result.unsure == []


def test_unpack_of_a_lambda_choosing_between_dict_literals_is_typed_by_their_names(tmp_path):
    result, manifest = _draft(tmp_path, """
        rule all:
            input: "model.json"
        rule fit:
            input: unpack(lambda w: {} if config["builtin"] else {"table": "data/table.csv"})
            output: "model.json"
            shell: "touch {output}"
        """)
    assert manifest["rules"]["fit"]["input"] == {"table": "csv-table"}
    assert result.unsure == []


def test_unpack_of_a_computed_dict_is_named_and_makes_the_draft_incomplete(tmp_path):
    result, manifest = _draft(tmp_path, """
        def inputs(wildcards):
            return {k: v for k, v in config["files"].items()}
        rule all:
            input: "mapped/a.bam"
        rule map:
            input: unpack(inputs)
            output: "mapped/{s}.bam"
            shell: "touch {output}"
        """)
    assert "input" not in manifest["rules"]["map"]  # no `_1` that Snakemake would never give
    (unsure,) = result.unsure
    assert unsure.startswith("Snakefile:6: rule `map` takes inputs from unpack(inputs), whose names draft cannot read")


def test_outputs_over_a_literal_list_are_enumerated_and_the_list_is_named(tmp_path):
    result, manifest = _draft(tmp_path, """
        COUNTRIES = ["fr", "de"]
        rule all:
            input: expand("plots/{country}.png", country=COUNTRIES)
        rule plot:
            output: "plots/{country}.png"
            shell: "touch {output}"
        """)
    assert sorted(v["path"] for v in manifest["outputs"].values()) == ["plots/de.png", "plots/fr.png"]
    assert any("enumerated over `country` from COUNTRIES" in d for d in result.decide)
    assert not any("has wildcards" in d for d in result.decide)


def test_outputs_over_a_glob_of_the_working_folder_say_where_the_wildcard_comes_from(tmp_path):
    result, manifest = _draft(tmp_path, """
        BOOKS, = glob_wildcards("data/{book}.txt")
        rule all:
            input: expand("counts/{book}.tsv", book=BOOKS)
        rule count:
            input: "data/{book}.txt"
            output: "counts/{book}.tsv"
            shell: "wc -w {input} > {output}"
        """)
    assert manifest["outputs"]["book"]["path"] == "counts/{book}.tsv"
    assert ("workflow.yaml: outputs.book.path counts/{book}.tsv: {book} takes its values from the glob of "
            "`data/{book}.txt` in the working folder, which no param names") in "\n".join(result.decide)


def test_one_input_of_files_of_several_types_is_not_typed_by_its_first_file(tmp_path):
    result, manifest = _draft(tmp_path, """
        rule all:
            input: expand("qc/{s}.{ext}", s=["a"], ext=["html", "zip"])
        rule qc:
            output: "qc/{s}.html", "qc/{s}.zip"
            shell: "touch {output}"
        rule report:
            input: expand("qc/{s}.{ext}", s=["a"], ext=["html", "zip"])
            output: "report.html"
            shell: "touch {output}"
        """)
    assert manifest["rules"]["report"]["input"] == {"_1": "unknown"}
    assert ("give rules.report.input._1 its artifact type (files of types html, zip: split them into named "
            "inputs, one type each)") in "\n".join(result.decide)


@pytest.mark.parametrize("how", ['"schemas/config.schema.json"', 'workflow.source_path("schemas/config.schema.json")'])
def test_the_schema_the_workflow_validates_its_config_with_becomes_the_contract(tmp_path, how):
    their = {"type": "object", "properties": {"threshold": {"type": "number", "minimum": 0, "maximum": 1,
                                                            "description": "cut-off for calls"}},
             "required": ["threshold"]}
    result, _ = _draft(tmp_path, f"""
        from snakemake.utils import validate
        configfile: "config.yaml"
        validate(config, {how})
        rule all:
            output: "out.txt"
            shell: "echo {{config[threshold]}} > {{output}}"
        """, **{"config.yaml": "threshold: 0.5\n", "schemas/config.schema.json": json.dumps(their)})
    schema = json.loads((result.folder / "schema.json").read_text())
    assert schema["properties"]["threshold"] == {"type": "number", "minimum": 0, "maximum": 1,
                                                 "description": "cut-off for calls", "default": 0.5}
    assert schema["required"] == ["threshold"]
    assert not any("inferred from config values only" in d for d in result.decide)


def test_a_workflow_without_a_licence_file_is_told_so(tmp_path):
    folder = _workflow(tmp_path, 'rule all:\n    output: "out.txt"\n    shell: "touch {output}"\n')
    (folder / "LICENSE").unlink()
    root = tmp_path / "registry"
    (root / "workflows").mkdir(parents=True)
    result = draft(folder, root, "wf")
    assert ("licence: upstream/ holds no LICENSE (or COPYING) file, so nothing says the registry may copy and "
            "share this code") in result.decide[1]


def test_a_workflow_with_a_licence_file_is_not_asked_for_one(tmp_path):
    result, _ = _draft(tmp_path, 'rule all:\n    output: "out.txt"\n    shell: "touch {output}"\n')
    assert not any(d.startswith("licence:") for d in result.decide)


def test_a_snakefile_whose_functions_name_each_other_without_end_is_named_not_walked_forever(tmp_path):
    result, manifest = _draft(tmp_path, """
        def f(wildcards):
            return [f, g, f, g, f, g, f, g, f, g]
        def g(wildcards):
            return [f, g, f, g, f, g, f, g, f, g]
        rule all:
            input: f, expand("out/{a}{b}{c}{d}.txt", a=BIG, b=BIG, c=BIG, d=BIG)
        rule make:
            output: "out/{x}.txt"
            shell: "touch {output}"
        BIG = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]
        """)
    assert any("references that go on and on" in u for u in result.unsure)
    # 10,000 combinations are more than a draft lists: the pattern stays, counted rather than built
    assert [o["path"] for o in manifest["outputs"].values()] == ["out/{a}{b}{c}{d}.txt"]


def test_paths_joined_from_literals_are_evaluated_and_joined_from_values_are_not_split_into_files(tmp_path):
    result, manifest = _draft(tmp_path, """
        import os
        NAME = config["name"]
        rule all:
            input: os.path.join("results", "summary.csv"), "plots/" + "overview.png", "tables/" + NAME + ".tsv"
        rule make:
            output: "results/summary.csv", "plots/overview.png", "tables/{name}.tsv"
            shell: "touch {output}"
        """)
    assert sorted(o["path"] for o in manifest["outputs"].values()) == ["plots/overview.png", "results/summary.csv"]
    (unsure,) = result.unsure
    assert "asks for 'tables/' + NAME + '.tsv'" in unsure  # named, never guessed as files `tables/` and `.tsv`


SHEETS = """
    import pandas as pd
    from snakemake.utils import validate
    configfile: "config.yaml"
    samples = pd.read_csv(config["samples"], sep="\\t")
    validate(samples, "schemas/samples.schema.yaml")
    units = pd.read_csv(config["units"], sep="\\t")
    validate(units, "schemas/units.schema.yaml")
    rule all:
        output: "out.txt"
        shell: "touch {output}"
    """


def _row_schema(*columns: str) -> str:
    return json.dumps({"type": "object", "properties": {c: {"type": "string"} for c in columns},
                       "required": list(columns)})


def test_each_sample_sheet_gets_its_own_row_schema_not_the_first_one_found(tmp_path):
    result, _ = _draft(tmp_path, SHEETS, **{
        "config.yaml": "samples: samples.tsv\nunits: units.tsv\n",
        "samples.tsv": "sample\tcondition\na\tx\n", "units.tsv": "sample\tunit\tfq\na\t1\tdata.fq\n",
        "schemas/samples.schema.yaml": _row_schema("sample", "condition"),
        "schemas/units.schema.yaml": _row_schema("sample", "unit", "fq")})
    props = json.loads((result.folder / "schema.json").read_text())["properties"]
    assert props["samples"]["x-sample-sheet"]["required"] == ["sample", "condition"]
    assert props["units"]["x-sample-sheet"]["required"] == ["sample", "unit", "fq"]


def test_a_sheet_whose_schema_draft_cannot_tell_is_named_and_gets_none(tmp_path):
    result, _ = _draft(tmp_path, SHEETS.replace("samples.schema", "a.schema").replace("units.schema", "b.schema"), **{
        "config.yaml": "samples: samples.tsv\nunits: units.tsv\n",
        "samples.tsv": "", "units.tsv": "sample\tunit\na\t1\n",
        "schemas/a.schema.yaml": _row_schema("sample"), "schemas/b.schema.yaml": _row_schema("unit")})
    props = json.loads((result.folder / "schema.json").read_text())["properties"]
    assert "x-sample-sheet" not in props["samples"] and "x-sample-sheet" not in props["units"]
    assert any(d.startswith("schema.json: `units` is read as a table, and the workflow validates tables with "
                            "schemas/a.schema.yaml, schemas/b.schema.yaml; draft cannot tell which is its")
               for d in result.decide)
