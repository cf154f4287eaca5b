"""The gate checks the bytes it hashes (issue 30's stage-then-gate, closed at the checks): someone who can write
to a data root swaps an input between the gate's content checks and its hashing.

The race is real and placed: a wrapper around one of snakegate's own functions that runs at that moment
(the first format check of the file, or the hashing of it) swaps the file on disk (a prepared file renamed over
it, or a rewrite in place) and then calls the original. No Snakemake is started: the gate runs in-process,
with `snakegate run`'s real Prestage (runner._gate, runner.fill_run_folder) or without one (`snakegate validate`,
plans, plain snakemake's parse-time gate).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from registry_copies import make_registry

from snakegate.contract import artifacts
from snakegate.gate import prove
from snakegate.provenance import runstore
from snakegate.provenance.hashing import folder_hash
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry
from snakegate.run import runner, stage

SHEET_ROW = {
    "type": "object",
    "properties": {"sample": {"type": "string", "pattern": "^[A-Za-z0-9_]+$", "description": "sample name"},
                   "reads": {"type": "string", "x-artifact": "fastq", "description": "reads of the sample"}},
    "required": ["sample", "reads"], "additionalProperties": False,
}

WORKFLOW = {
    "workflow.yaml": """\
        id: swap
        version: 0.1.0
        title: Swapped inputs
        description: Takes a table with at least two rows, some of its columns, and a sample sheet of reads.
        tags: [test]
        maintainers: [{name: snakegate tests}]
        trust: community
        rules:
          count: {input: {table: csv-table, sheet: tsv-table}, output: {counts: text}}
        outputs:
          counts: {path: results/counts.txt, type: text, description: Lines of the table and the sheet.}
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": False,
        "required": ["table", "samples"],
        "properties": {
            "table": {"type": "string", "x-artifact": "csv-table", "x-min-rows": 2, "description": "A table."},
            "columns": {"type": "array", "items": {"type": "string"}, "x-column-of": "table",
                        "description": "Columns of the table."},
            "samples": {"type": "string", "x-artifact": "tsv-table", "x-sample-sheet": SHEET_ROW,
                        "description": "One row per sample: its name and reads file."},
            "folder": {"type": "string", "x-artifact": "directory", "description": "An optional folder."}},
    }),
    "Snakefile": """\
        from snakemake.utils import validate

        validate(config, "schema.json")


        rule count:
            input:
                table=config["table"],
                sheet=config["samples"],
            output:
                counts="results/counts.txt",
            shell:
                "wc -l {input.table} {input.sheet} > {output.counts}"
        """,
}

ORIGINAL = {"table.csv": "x,y\n1,2\n3,4\n", "samples.tsv": "sample\treads\nA\tdata/reads/a.fastq\n",
            "reads/a.fastq": "@r1\nACGT\n+\nIIII\n"}
# what a writer of the data root puts there instead: each would fail a check the original passes
HOSTILE = {"table.csv": "p,q\n", "samples.tsv": "sample\treads\nnot a name!\tdata/reads/gone.fastq\n",
           "reads/a.fastq": "this is no fastq\n"}
KEYS = {"table.csv": "params.table", "samples.tsv": "params.samples", "reads/a.fastq": "params.samples[row 1].reads"}
INVOCATION = {"workflow": "swap", "params": {"table": "data/table.csv", "columns": ["x"],
                                             "samples": "data/samples.tsv"}}


@pytest.fixture
def registry(tmp_path):
    """(root, settings, registry) with the `swap` workflow and the original inputs under data/."""
    root = make_registry(tmp_path / "registry", {"swap": WORKFLOW})
    for name, text in ORIGINAL.items():
        (root / "data" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "data" / name).write_text(text)
    return root, load_settings(root), Registry.load(root)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def rename_over(path: Path, text: str) -> None:
    """A prepared file renamed over `path`, as a writer swapping it atomically would."""
    prepared = path.with_name(path.name + ".prepared")
    prepared.write_text(text)
    os.rename(prepared, path)


def rewrite_in_place(path: Path, text: str) -> None:
    """The same inode rewritten, as a writer holding it open would."""
    with open(path, "r+") as fh:
        fh.write(text)
        fh.truncate()


def swap_at_first_check(monkeypatch, root: Path, names) -> list[str]:
    """Each of `names` (under data/) is renamed over with its HOSTILE text as the gate's first format check of
    it begins (the check is handed the source, or a staged copy of the same name); the names swapped."""
    original, swapped = artifacts.check, []

    def check(path, type_name):
        for name in names:
            if name not in swapped and Path(path).as_posix().endswith("data/" + name):
                rename_over(root / "data" / name, HOSTILE[name])
                swapped.append(name)
        return original(path, type_name)

    monkeypatch.setattr(artifacts, "check", check)
    return swapped


def test_a_source_swapped_after_staging_is_never_seen_by_the_checks_the_digest_or_the_run(registry, monkeypatch):
    root, settings, reg = registry
    swapped = swap_at_first_check(monkeypatch, root, list(ORIGINAL))
    prestage = stage.Prestage(settings.runs_dir, settings.registry_root, settings.stage_inputs)
    result = runner._gate(reg, INVOCATION, settings, check_dag=False, prestage=prestage)
    assert result.ok, result.errors  # checked: the copies' header, rows, sheet and reads, not the swapped sources
    assert swapped == list(ORIGINAL)  # the data root holds the hostile files now
    assert result.invocation.inputs == {KEYS[name]: sha256(text) for name, text in ORIGINAL.items()}
    assert result.input_files["params.table"] == str((root / "data" / "table.csv").resolve())  # the source is what it names

    run_dir = settings.runs_dir / "r1"
    run_dir.mkdir()
    runner.fill_run_folder(reg, settings, result, "r1", run_dir, runner.RunOptions(), {}, runstore.utc_now(), prestage)
    entries = runstore.read_json(run_dir / runstore.INPUTS_JSON)["inputs"]
    assert (run_dir / entries["params.table"]["path"]).read_text() == ORIGINAL["table.csv"]
    assert (run_dir / entries["params.samples[row 1].reads"]["path"]).read_text() == ORIGINAL["reads/a.fastq"]
    sheet = entries["params.samples"]
    assert sheet["gated_sha256"] == sha256(ORIGINAL["samples.tsv"])  # its rewrite was made from the checked copy
    reads_copy = run_dir / entries["params.samples[row 1].reads"]["path"]
    assert (run_dir / sheet["path"]).read_text() == f"sample\treads\nA\t{reads_copy}\n"


def test_a_staged_input_that_fails_its_check_leaves_no_copy_and_no_runs_folder(registry):
    root, settings, reg = registry
    (root / "data" / "table.csv").write_text("x,y\n1,2\n")  # one row: x-min-rows refuses it, after staging it
    with pytest.raises(runner.GateRejected) as refused:
        runner.execute(reg, settings, INVOCATION, runner.RunOptions())
    assert [(e.path, e.code) for e in refused.value.result.errors] == [("params.table", "format")]
    assert not settings.runs_dir.exists()


@pytest.mark.parametrize("swap", [rename_over, rewrite_in_place], ids=["renamed-over", "rewritten"])
@pytest.mark.parametrize("name", list(ORIGINAL))
def test_without_staging_an_input_swapped_between_its_checks_and_its_hash_is_refused_naming_the_param(
        registry, monkeypatch, name, swap):
    _root, settings, reg = registry
    original_digest, swapped = prove._digest, []

    def digest(path, staged):  # the gate's hashing of each input, after every check has passed
        if Path(path).as_posix().endswith("data/" + name) and not swapped:
            swap(path, HOSTILE[name])
            swapped.append(path)
        return original_digest(path, staged)

    monkeypatch.setattr(prove, "_digest", digest)
    result = prove.gate(reg, INVOCATION, settings, check_dag=False)
    assert len(swapped) == 1
    assert not result.ok
    (error,) = result.errors
    assert (error.path, error.code) == (KEYS[name], "input_changed")
    assert f"`{KEYS[name]}` = {swapped[0]}: it changed while the gate read it" in error.message
    assert error.hint == "run again when nothing is writing it"


def test_an_untouched_input_passes_as_the_same_invocation_with_staging_and_without(registry):
    _root, settings, reg = registry
    plain = prove.gate(reg, INVOCATION, settings, check_dag=False)
    prestage = stage.Prestage(settings.runs_dir, settings.registry_root, settings.stage_inputs)
    try:
        staged = runner._gate(reg, INVOCATION, settings, check_dag=False, prestage=prestage)
    finally:
        prestage.discard()
    assert plain.ok and staged.ok, (plain.errors, staged.errors)
    assert plain.invocation.inputs == {KEYS[name]: sha256(text) for name, text in ORIGINAL.items()}
    assert (staged.invocation_id, staged.input_files, staged.checks) == \
        (plain.invocation_id, plain.input_files, plain.checks)
    assert not settings.runs_dir.exists()  # the discarded staging left nothing


def test_a_folder_input_is_staged_before_its_check_and_a_file_in_it_changed_unstaged_is_refused(
        registry, monkeypatch):
    """A `directory` input is staged whole (Prestage copies the folder, as it did) before its check; without
    staging, a file inside it rewritten between the checks and the hash is refused naming the folder's param."""
    root, settings, reg = registry
    folder = root / "data" / "folder"
    folder.mkdir()
    (folder / "part.txt").write_text("before\n")
    gated = folder_hash(folder, use_cache=False)
    invocation = {**INVOCATION, "params": {**INVOCATION["params"], "folder": "data/folder"}}
    original = artifacts.check

    def check(path, type_name):  # the folder's check: a file in the data root's folder is rewritten first
        if type_name == "directory":
            rewrite_in_place(folder / "part.txt", "after!\n")
        return original(path, type_name)

    monkeypatch.setattr(artifacts, "check", check)
    prestage = stage.Prestage(settings.runs_dir, settings.registry_root, settings.stage_inputs)
    try:
        staged = runner._gate(reg, invocation, settings, check_dag=False, prestage=prestage)
        assert staged.ok, staged.errors
        assert staged.invocation.inputs["params.folder"] == gated  # the copy, made before the rewrite
        assert (prestage.copy("params.folder", folder.resolve()) / "part.txt").read_text() == "before\n"
    finally:
        prestage.discard()

    result = prove.gate(reg, invocation, settings, check_dag=False)  # the rewrite moves the stamps again
    assert [(e.path, e.code) for e in result.errors] == [("params.folder", "input_changed")]
