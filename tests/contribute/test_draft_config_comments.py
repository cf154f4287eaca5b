"""`snakegate draft` reads what a workflow's config.yaml says in its comments (issue 27 §2, contracts closer to
the config's intent): comments become descriptions, commented-out optional keys are declared, and a
placeholder left to be filled is warned about instead of becoming a default. Pure: draft only reads files.
"""

import json
import textwrap
from pathlib import Path

from snakegate.contribute.config_notes import read_notes
from snakegate.contribute.draft import draft

CONFIG = """\
# The sample sheet, one row per sample
samples: config/samples.tsv   # tab-separated
reference:
  # the genome, as FASTA
  genome: TODO
  # index: ref/genome.fa.fai
threads: 4  # cores per job
# minimum base quality kept
# min_quality: 20
# Note: read the docs before changing anything below
outdir: <path/to/output>
"""


def _drafted_schema(tmp_path: Path):
    folder = tmp_path / "upstream"
    (folder / "config").mkdir(parents=True)
    (folder / "LICENSE").write_text("MIT\n")
    (folder / "config" / "config.yaml").write_text(CONFIG)
    (folder / "Snakefile").write_text(textwrap.dedent('''\
        configfile: "config/config.yaml"
        rule all:
            output: "out.txt"
            threads: config["threads"]
            shell: "echo {config[samples]} {config[reference][genome]} {config[outdir]} > {output}"
        '''))
    root = tmp_path / "registry"
    (root / "workflows").mkdir(parents=True)
    result = draft(folder, root, "wf")
    return result, json.loads((result.folder / "schema.json").read_text())


def test_comments_beside_and_above_a_key_become_its_description(tmp_path):
    _, schema = _drafted_schema(tmp_path)
    props = schema["properties"]
    assert props["samples"]["description"] == "The sample sheet, one row per sample tab-separated"
    assert props["threads"]["description"] == "cores per job"
    assert props["reference"]["properties"]["genome"]["description"] == "the genome, as FASTA"


def test_a_commented_out_key_is_declared_optional_with_its_value_as_an_example(tmp_path):
    _, schema = _drafted_schema(tmp_path)
    props = schema["properties"]
    assert props["min_quality"] == {"type": "integer", "description": "minimum base quality kept", "examples": [20]}
    assert "min_quality" not in schema["required"]
    index = props["reference"]["properties"]["index"]
    assert index["type"] == "string" and index["examples"] == ["ref/genome.fa.fai"] and "default" not in index
    assert index["description"] == 'TODO: describe `index` (commented out in their config, e.g. "ref/genome.fa.fai")'


def test_prose_in_a_comment_is_not_taken_for_a_commented_out_key(tmp_path):
    notes = read_notes(CONFIG)
    assert ("Note",) not in notes.commented and ("note",) not in notes.commented
    assert set(notes.commented) == {("reference", "index"), ("min_quality",)}


def test_a_placeholder_value_is_warned_about_and_never_made_a_default(tmp_path):
    result, schema = _drafted_schema(tmp_path)
    assert "default" not in schema["properties"]["reference"]["properties"]["genome"]
    assert "default" not in schema["properties"]["outdir"]
    assert schema["properties"]["threads"]["default"] == 4
    decide = "\n".join(result.decide)
    assert ("schema.json: their config/config.yaml leaves `reference.genome` as a placeholder ('TODO'), so it is "
            "no default") in decide
    assert "leaves `outdir` as a placeholder ('<path/to/output>')" in decide


def test_a_description_their_schema_gives_is_kept_over_a_comment(tmp_path):
    from snakegate.contribute.draft_contract import contract

    notes = read_notes("threshold: 0.5  # a comment\n")
    theirs = {"type": "object", "properties": {"threshold": {"type": "number", "description": "theirs"}}}
    schema = contract(theirs, {"threshold": 0.5}, lambda v: False, {}, notes)
    assert schema["properties"]["threshold"]["description"] == "theirs"
