"""Planted mistakes (issue 15): each is caught by `snakegate check`, named by its code, rule and file.

Each test copies the clean fixture contribution into a throw-away registry, plants one mistake the way a
contributor would write it (a key read with lookup(), inside a module Snakefile, through snakemake.config in
a script; a param no longer read; a hard-coded input path in a script; an unknown artifact type; a download
in a shell command), and runs the real check (real Snakemake parser and DAG) in-process.
"""
import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLEAN = ROOT / "tests" / "fixtures" / "broken" / "workflows" / "clean"


@pytest.fixture
def planted(tmp_path, cli):
    """plant(trust=..., **{file: text}) -> (exit code, findings of the `clean` workflow)."""
    root = tmp_path / "registry"
    shutil.copytree(ROOT / "tests" / "fixtures" / "broken" / "data", root / "data")
    folder = root / "workflows" / "clean"
    shutil.copytree(CLEAN, folder)

    def plant(edit=None, trust=None, hygiene=False, **files):
        for name, text in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
        if edit:
            edit(folder)
        if trust:
            manifest = folder / "workflow.yaml"
            manifest.write_text(manifest.read_text().replace("trust: community", f"trust: {trust}"))
        code, out, err = cli("--registry", root, "check", "clean", "--json", *([] if hygiene else ["--no-hygiene"]))
        assert "Traceback" not in out + err
        return code, json.loads(out)["findings"]
    return plant


def errors(findings, code):
    return [f for f in findings if f["code"] == code and f["severity"] == "error"]


SNAKEFILE = (CLEAN / "Snakefile").read_text()


def test_the_clean_contribution_has_no_findings(planted):
    code, findings = planted()
    assert code == 0 and findings == []


def test_an_undeclared_key_read_with_lookup_is_caught(planted):
    text = SNAKEFILE.replace('rows=config["rows"],', 'rows=config["rows"],\n        sep=lookup(dpath="format/sep", within=config),')
    code, findings = planted(Snakefile=text)
    (found,) = errors(findings, "undeclared_config_key")
    assert code == 1
    assert "config['format']['sep'] is read with lookup() in rule `head`" in found["message"]
    assert found["rule"] == "head" and found["file"] == "workflows/clean/Snakefile"
    line = text.splitlines()[found["line"] - 1]
    assert "lookup(" in line


def test_a_lookup_of_a_declared_key_counts_as_reading_it(planted):
    text = SNAKEFILE.replace('rows=config["rows"],', 'rows=lookup(dpath="rows", within=config),')
    code, findings = planted(Snakefile=text)
    assert code == 0, [f["message"] for f in findings]


def test_an_undeclared_key_read_in_a_module_snakefile_is_caught(planted):
    text = SNAKEFILE + '''

module extra:
    snakefile:
        "rules/extra.smk"
    config:
        config


use rule * from extra as extra_*
'''
    module = '''rule note:
    output:
        note="results/note.txt",
    params:
        label=config["label"],
    shell:
        "echo {params.label} > {output.note}"
'''
    code, findings = planted(**{"Snakefile": text, "rules/extra.smk": module})
    (found,) = errors(findings, "undeclared_config_key")
    assert "config['label'] is read in a module Snakefile in rule `note`" in found["message"]
    assert found["file"] == "workflows/clean/rules/extra.smk" and found["line"] == 5


def test_an_undeclared_key_read_by_a_script_through_snakemake_config_is_caught(planted):
    text = SNAKEFILE.replace('''    shell:
        "head -n {params.rows} {input.table} > {output.head}"''', '''    script:
        "scripts/head.py"''')
    script = '''import shutil

rows = snakemake.params.rows
label = snakemake.config["label"]
shutil.copy(snakemake.input.table, snakemake.output.head)
'''
    code, findings = planted(**{"Snakefile": text, "scripts/head.py": script})
    (found,) = errors(findings, "undeclared_config_key")
    assert "config['label'] is read by its script in rule `head`" in found["message"]
    assert found["file"] == "workflows/clean/scripts/head.py" and found["line"] == 4


R_RULE = SNAKEFILE.replace('''    shell:
        "head -n {params.rows} {input.table} > {output.head}"''', '''    script:
        "scripts/head.R"''')


def test_keys_an_r_script_reads_through_snakemake_config_in_any_form_are_checked(planted):
    """[["k"]], $k, nested $a$b and [["a"]]$b are reads; a key in a variable is a dynamic access (a warning)."""
    script = '''table <- read.csv(snakemake@input[["table"]])
rows <- snakemake@config$rows                    # declared: a read, so `rows` counts as used
sep <- snakemake@config$format$sep               # undeclared, nested
label <- snakemake@config[["label"]][["text"]]  # undeclared, [[ ]] form
key <- "rows"
n <- snakemake@config[[key]]
write.csv(head(table, snakemake@params[["rows"]]), snakemake@output[["head"]], row.names = FALSE)
'''
    code, findings = planted(**{"Snakefile": R_RULE, "scripts/head.R": script})
    undeclared = {f["line"]: f["message"] for f in errors(findings, "undeclared_config_key")}
    assert code == 1 and set(undeclared) == {3, 4}
    assert "config['format']['sep'] is read by its script in rule `head`" in undeclared[3]
    assert "config['label']['text'] is read by its script" in undeclared[4]
    (dynamic,) = [f for f in findings if f["code"] == "dynamic_config_access"]
    assert dynamic["severity"] == "warning" and dynamic["line"] == 6 and "snakemake@config[[key]]" in dynamic["message"]
    assert all(f["file"] == "workflows/clean/scripts/head.R" for f in errors(findings, "undeclared_config_key"))
    assert errors(findings, "unused_param") == []


def test_a_hard_coded_input_path_in_an_r_script_is_caught(planted):
    script = '''extra <- read.csv("data/extra.csv")  # a file no rule declares
table <- read.csv(snakemake@input[["table"]])
write.csv(head(table, snakemake@params[["rows"]]), snakemake@output[["head"]], row.names = FALSE)
'''
    code, findings = planted(trust="curated", **{"Snakefile": R_RULE, "scripts/head.R": script})
    (found,) = errors(findings, "hardcoded_path")
    assert "opens the literal path `data/extra.csv`" in found["message"] and found["line"] == 1


def test_a_path_built_with_plus_is_a_lint_warning_that_says_what_to_write_not_a_crash(planted):
    """Snakemake's own JSON lint crashed on Snakefile-level lints ("LocalSourceFile is not JSON serializable")."""
    text = SNAKEFILE.replace('head="results/head.csv",\n    params', 'head=RESULTS + "/head.csv",\n    params', 1)
    text = text.replace("\n\nrule all:", '\nRESULTS = "results"\n\n\nrule all:', 1)
    code, findings = planted(hygiene=True, Snakefile=text)
    assert code == 0 and not [f for f in findings if f["severity"] == "error"]
    (plus,) = [f for f in findings if f["code"] == "lint" and "Path composition with '+'" in f["message"]]
    line = text.splitlines()[plus["line"] - 1]
    assert plus["file"] == "workflows/clean/Snakefile" and "RESULTS +" in line
    assert "write the path as one string" in plus["hint"] and "not JSON serializable" not in str(findings)


def test_random_numbers_drawn_without_a_seed_are_named_and_a_seeded_generator_is_not(planted):
    text = SNAKEFILE.replace('''    shell:
        "head -n {params.rows} {input.table} > {output.head}"''', '''    script:
        "scripts/head.py"''')
    script = '''import numpy as np
import pandas as pd

table = pd.read_csv(snakemake.input.table)
keep = np.random.permutation(len(table))[: snakemake.params.rows]
table.iloc[sorted(keep)].to_csv(snakemake.output.head, index=False)
'''
    code, findings = planted(trust="curated", **{"Snakefile": text, "scripts/head.py": script})
    (found,) = errors(findings, "unseeded_random")
    assert "draws random numbers (np.random.permutation) but seeds no generator" in found["message"]
    assert found["file"] == "workflows/clean/scripts/head.py" and found["line"] == 5 and found["rule"] == "head"
    seeded = script.replace("keep = np.random.permutation", "rng = np.random.default_rng(7)\nkeep = rng.permutation")
    code, findings = planted(trust="curated", **{"scripts/head.py": seeded})
    assert not [f for f in findings if f["code"] == "unseeded_random"]


def test_a_param_no_longer_read_is_caught(planted):
    text = SNAKEFILE.replace('        rows=config["rows"],\n', '').replace("head -n {params.rows}", "head -n 2")
    code, findings = planted(Snakefile=text)
    (found,) = errors(findings, "unused_param")
    assert "param `rows` is declared in schema.json but no rule or function reads it" in found["message"]


def test_a_hard_coded_input_path_in_a_script_is_caught(planted):
    text = SNAKEFILE.replace('''    shell:
        "head -n {params.rows} {input.table} > {output.head}"''', '''    script:
        "scripts/head.py"''')
    script = '''import pandas as pd

lookup = pd.read_csv("data/lookup.csv")
pd.read_csv(snakemake.input.table).head(snakemake.params.rows).to_csv(snakemake.output.head, index=False)
'''
    code, findings = planted(trust="curated", **{"Snakefile": text, "scripts/head.py": script})
    (found,) = errors(findings, "hardcoded_path")
    assert "opens the literal path `data/lookup.csv`" in found["message"]
    assert found["file"] == "workflows/clean/scripts/head.py" and found["line"] == 3 and found["rule"] == "head"


def test_an_unknown_artifact_type_in_workflow_yaml_is_caught(planted):
    def typo(folder):
        manifest = folder / "workflow.yaml"
        manifest.write_text(manifest.read_text().replace("output: {tally: text}", "output: {tally: txet}"))
    code, findings = planted(edit=typo)
    found = errors(findings, "unknown_artifact_type")
    assert found and "rules.tally.output.tally is `txet`" in found[0]["message"]
    assert "did you mean `text`?" in found[0]["hint"]


def test_a_download_in_a_shell_command_is_an_error_for_curated_and_a_warning_for_community(planted):
    text = SNAKEFILE.replace('"wc -l < {input.head} > {output.tally}"',
                             '"wget -q https://example.org/extra.csv && wc -l < {input.head} > {output.tally}"')
    code, findings = planted(Snakefile=text)
    (found,) = [f for f in findings if f["code"] == "download"]
    assert code == 0 and found["severity"] == "warning" and found["rule"] == "tally"
    assert "downloads (`wget`)" in found["message"]
    code, findings = planted(trust="curated")
    (found,) = [f for f in findings if f["code"] == "download"]
    assert code == 1 and found["severity"] == "error"


def test_a_wrapper_and_a_conda_env_without_its_file_are_named(planted):
    text = SNAKEFILE.replace('''    shell:
        "wc -l < {input.head} > {output.tally}"''', '''    conda:
        "envs/tally.yaml"
    wrapper:
        "v7.6.0/bio/wc"''')
    code, findings = planted(Snakefile=text)
    codes = {f["code"]: f for f in findings}
    assert "wrapper `v7.6.0/bio/wc`" in codes["wrapper_unchecked"]["message"]
    assert "`envs/tally.yaml`, which is not a file in the workflow folder" in codes["conda_env_missing"]["message"]


def test_an_absolute_path_in_a_shell_command_is_named(planted):
    text = SNAKEFILE.replace('"wc -l < {input.head} > {output.tally}"',
                             '"cat /data/shared/extra.csv {input.head} | wc -l > {output.tally}"')
    code, findings = planted(Snakefile=text)
    (found,) = [f for f in findings if f["code"] == "hardcoded_path"]
    assert "absolute path /data/shared/extra.csv" in found["message"]


def test_an_output_behind_a_checkpoint_is_not_statically_checked_never_a_false_error(planted):
    text = SNAKEFILE.replace('''rule all:
    input:
        tally="results/count.txt",''', '''rule all:
    input:
        tally="results/count.txt",
        merged="results/merged.txt",


checkpoint split:
    input:
        head="results/head.csv",
    output:
        parts=directory("results/parts"),
    shell:
        "mkdir -p {output.parts} && split -l 1 {input.head} {output.parts}/p_"


def parts(wildcards):
    folder = checkpoints.split.get().output.parts
    return sorted(f"{folder}/{p}" for p in os.listdir(folder))


rule merge:
    input:
        parts,
    output:
        merged="results/merged.txt",
    shell:
        "cat {input} > {output.merged}"''').replace('validate(config, "schema.json")', 'validate(config, "schema.json")\nimport os')

    def declare(folder):
        manifest = folder / "workflow.yaml"
        manifest.write_text(manifest.read_text().replace("outputs:\n", """  split: {input: {head: csv-table}, output: {parts: directory}}
  merge: {input: {_1: text}, output: {merged: text}}
outputs:
  merged: {path: results/merged.txt, type: text, description: The parts merged again.}
  first_part: {path: results/parts/p_aa, type: text, description: "The first part, made by the checkpoint."}
"""))
    code, findings = planted(edit=declare, Snakefile=text)
    assert code == 0, [f["message"] for f in findings]
    (found,) = [f for f in findings if f["code"] == "not_statically_checked"]
    assert found["severity"] == "warning" and "results/parts/p_aa" in found["message"] and "`split`" in found["message"]
    assert not [f for f in findings if f["severity"] == "error"]


def _add_to_manifest(rules: str):
    """An edit for `planted`: declare more rules in workflow.yaml (`rules` is YAML lines under rules:)."""
    def edit(folder):
        manifest = folder / "workflow.yaml"
        manifest.write_text(manifest.read_text().replace("rules:\n", "rules:\n" + rules, 1))
    return edit


def _add_param(name: str, spec: dict, then=None):
    """An edit for `planted`: declare one more param in schema.json (then run `then`, another edit)."""
    def edit(folder):
        schema = json.loads((folder / "schema.json").read_text())
        schema["properties"][name] = spec
        (folder / "schema.json").write_text(json.dumps(schema, indent=2))
        if then:
            then(folder)
    return edit


LABEL_RULE = '''rule all:
    input:
        tally="results/count.txt",
        labels=expand("results/label_{sample}.txt", sample=["a", "b"]),


rule label:
    output:
        label="results/label_{sample}.txt",
    params:
        text=lookup(dpath="labels/{sample}", within=config),
    shell:
        "echo {params.text} > {output.label}"
'''


def test_a_lookup_with_a_wildcard_segment_reads_the_key_above_it_not_the_whole_config(planted):
    """lookup(dpath="labels/{sample}", within=config) reads config["labels"]: the declared mapping counts as read,
    and nothing says the rule uses the whole config."""
    text = SNAKEFILE.replace('rule all:\n    input:\n        tally="results/count.txt",\n', LABEL_RULE, 1)
    labels = {"type": "object", "additionalProperties": {"type": "string"}, "default": {"a": "first", "b": "second"},
              "description": "A label per sample."}
    code, findings = planted(edit=_add_param("labels", labels, then=_add_to_manifest("  label: {output: {label: text}}\n")),
                             Snakefile=text)
    assert code == 0 and findings == [], [f["message"] for f in findings]
    # labels with listed keys: {sample} is not a key named "{sample}"; each listed key may be the one read
    props = {k: {"type": "string", "default": v, "description": f"Label of sample {k}."}
             for k, v in labels["default"].items()}
    listed = {"type": "object", "properties": props, "additionalProperties": False, "default": labels["default"],
              "description": "A label per sample."}
    code, findings = planted(edit=_add_param("labels", listed))
    assert code == 0 and not [f for f in findings if f["severity"] == "error"], [f["message"] for f in findings]
    maybe = sorted(f["message"] for f in findings if f["code"] == "unused_param")
    assert maybe == [f"param `labels.{k}` is never read by a literal key; it may be read by a dynamic config access"
                     for k in ("a", "b")]


def test_an_undeclared_key_above_a_wildcard_lookup_is_caught_even_with_a_default(planted):
    """With default= the DAG builds without the key, so only the check can say config['colours'] is undeclared."""
    text = SNAKEFILE.replace('rule all:\n    input:\n        tally="results/count.txt",\n', LABEL_RULE, 1)
    text = text.replace('dpath="labels/{sample}", within=config', 'dpath="colours/{sample}", within=config, default="grey"')
    code, findings = planted(edit=_add_to_manifest("  label: {output: {label: text}}\n"), Snakefile=text)
    (found,) = errors(findings, "undeclared_config_key")
    assert code == 1 and found["rule"] == "label"
    assert "config['colours'] is read in rule `label` by `lookup(dpath='colours/{sample}'" in found["message"]
    assert "lookup(" in text.splitlines()[found["line"] - 1]


def test_a_workflow_file_named_with_source_path_is_part_of_the_workflow_not_a_hidden_input(planted):
    text = SNAKEFILE.replace('table=config["table_file"],',
                             'table=config["table_file"],\n        header=workflow.source_path("resources/header.txt"),')
    code, findings = planted(Snakefile=text, **{"resources/header.txt": "name,value\n"})
    assert code == 0 and findings == [], [f["message"] for f in findings]


COPIES = '''rule all:
    input:
        tally="results/count.txt",
        gathered="results/gathered.csv",


rule copy:
    input:
        "results/head.csv",
    output:
        "results/copy_{n}.csv",
    shell:
        "cp {input} {output}"


rule gather:
    input:
        expand("results/copy_{n}.csv", n=[1, 2, 3]),
    output:
        gathered="results/gathered.csv",
    shell:
        "cat {input} > {output.gathered}"
'''


def test_an_untyped_unnamed_input_and_output_are_each_reported_once_per_rule_not_once_per_job(planted):
    """Rule `copy` runs as three jobs; its unnamed input and output have no type: one finding each."""
    text = SNAKEFILE.replace('rule all:\n    input:\n        tally="results/count.txt",\n', COPIES, 1)
    code, findings = planted(edit=_add_to_manifest("  copy: {}\n  gather: {input: {_1: csv-table}, output: {gathered: csv-table}}\n"),
                             Snakefile=text)
    untyped = [f["message"] for f in errors(findings, "io_name_unknown")]
    assert code == 1 and len(untyped) == 2, untyped
    assert sum("unnamed input _1 of rule `copy`" in m for m in untyped) == 1
    assert sum("unnamed output _1 of rule `copy`" in m for m in untyped) == 1


def test_a_url_as_a_param_default_an_example_value_or_a_literal_in_params_is_named(planted):
    text = SNAKEFILE.replace('rows=config["rows"],', 'rows=config["rows"],\n        mirror=config["mirror"],\n'
                             '        notes="https://example.org/notes.txt",')
    mirror = {"type": "string", "default": "https://example.org/extra.csv", "description": "Where more rows live."}

    def example(folder):
        basic = folder / "examples" / "basic.yaml"
        basic.write_text(basic.read_text() + "  mirror: https://mirror.example.org/extra.csv\n")
    code, findings = planted(edit=_add_param("mirror", mirror, then=example), Snakefile=text)
    urls = sorted(f["message"] for f in findings if f["code"] == "download")
    assert code == 0 and all(f["severity"] == "warning" for f in findings if f["code"] == "download")
    assert len(urls) == 3, urls
    assert "schema.json.properties.mirror.default is the URL https://example.org/extra.csv" in urls[2]
    assert "params.mirror = https://mirror.example.org/extra.csv in basic.yaml is a URL" in urls[0]
    assert "rule `head` passes the URL https://example.org/notes.txt in params:" in urls[1]
    code, findings = planted(trust="curated")
    assert code == 1 and len(errors(findings, "download")) == 3
