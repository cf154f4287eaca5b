"""Stage, then trust (issue 22.1): a job reads exactly the bytes that were gated.

Every gated input is copied into runs/<id>/inputs/ before any job and the workflow is handed the copies,
so a data file swapped, rewritten or replaced by a symlink while a run goes never reaches a job, on
`snakegate run` and on plain `snakemake` alike; a staged copy changed in the run folder fails the run
with input_changed. Sample sheets: the gate checks the exact string the workflow reads, and the run is
handed a copy of the sheet whose path cells name the staged files. Real Snakemake, real files.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from registry_copies import make_registry, snakegate
from waits import (  # noqa: F401 - fixtures
    PENGUINS, finish, gate_dir, only_run, plain_start, record_of, registry, sg_start, sha256, wait_for, waits_config)

FORGED = "species,secret\nadelie,42\n"


def _start(path: str, registry, config):
    return sg_start(registry, "run", config) if path == "snakegate run" else plain_start(registry, config)


@pytest.mark.parametrize("path", ["snakegate run", "plain snakemake"])
def test_a_data_file_swapped_for_a_symlink_and_put_back_during_the_run_never_reaches_a_job(registry, tmp_path,
                                                                                          gate_dir, path):
    table = registry / "data" / "examples" / "swap.csv"
    shutil.copy(registry / PENGUINS, table)
    gated, original = sha256(table), table.read_bytes()
    outside = tmp_path / "outside.csv"
    outside.write_text(FORGED)
    proc = _start(path, registry, waits_config(tmp_path, gate_dir, table="data/examples/swap.csv"))
    try:
        wait_for(gate_dir / "started")  # the first job is running and has not read its input yet
        table.unlink()
        table.symlink_to(outside)
    finally:
        (gate_dir / "go").touch()
    wait_for(only_run(registry) / "results" / "copied.csv")
    table.unlink()
    table.write_bytes(original)  # put back before the run ends
    out, err = finish(proc)
    assert proc.returncode == 0, out + err
    run_dir = only_run(registry)
    assert record_of(run_dir)["status"] == "succeeded"
    # the job read the staged copy: the gated bytes, never the outside file
    assert (run_dir / "results" / "copied.csv").read_bytes() == original
    assert b"secret" not in b"".join(p.read_bytes() for p in (run_dir / "results").rglob("*") if p.is_file())
    staged = json.loads((run_dir / "inputs.json").read_text())["inputs"]["params.table"]
    assert staged["sha256"] == gated and staged["source"] == "data/examples/swap.csv"
    assert sha256(run_dir / staged["path"]) == gated
    assert json.loads((run_dir / "invocation.json").read_text())["invocation"]["inputs"]["params.table"] == gated
    verify = snakegate(registry, "verify", run_dir.name)
    assert verify.returncode == 0, verify.stdout


@pytest.mark.parametrize("path", ["snakegate run", "plain snakemake"])
def test_a_staged_input_changed_in_the_run_folder_during_the_run_fails_it(registry, tmp_path, gate_dir, path):
    proc = _start(path, registry, waits_config(tmp_path, gate_dir))
    try:
        wait_for(gate_dir / "started")
        run_dir = only_run(registry)
        copy = run_dir / "inputs" / PENGUINS
        gated = sha256(copy)
        copy.chmod(0o644)  # someone who can write the run folder
        copy.write_text(FORGED)
    finally:
        (gate_dir / "go").touch()
    out, err = finish(proc)
    assert proc.returncode != 0, out + err
    record = record_of(run_dir)
    assert record["status"] == "failed" and record["error_code"] == "input_changed"
    [changed] = record["input_changed"]
    assert changed["param"] == "params.table" and changed["path"] == f"runs/{run_dir.name}/inputs/{PENGUINS}"
    assert changed["gated_sha256"] == gated and changed["current_sha256"] == sha256(copy)
    assert gated[:12] in record["error"]


def test_the_data_roots_are_never_written_and_the_staged_copies_are_read_only(registry, tmp_path, gate_dir):
    before = {p: p.stat().st_mtime_ns for p in (registry / "data").rglob("*")}
    (gate_dir / "go").touch()
    out, err = finish(sg_start(registry, "run", waits_config(tmp_path, gate_dir)))
    run_dir = only_run(registry)
    assert record_of(run_dir)["status"] == "succeeded", out + err
    assert {p: p.stat().st_mtime_ns for p in (registry / "data").rglob("*")} == before
    copy = run_dir / "inputs" / PENGUINS
    assert copy.stat().st_mode & 0o777 == 0o444
    assert copy.stat().st_mtime_ns == (registry / PENGUINS).stat().st_mtime_ns  # kept, as cp -p does


def test_hard_link_staging_shares_the_bytes_and_still_checks_them(tmp_path):
    root = make_registry(tmp_path / "registry")
    (root / "snakegate.toml").write_text('[run]\nstage_inputs = "link"\n')
    proc = snakegate(root, "run", "workflows/tabular-profile/examples/basic.yaml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run_dir = only_run(root)
    copy = run_dir / "inputs" / PENGUINS
    assert os.path.samefile(copy, root / PENGUINS)
    assert json.loads((run_dir / "inputs.json").read_text())["mode"] == "link"


def test_a_bad_stage_inputs_setting_is_a_clear_message(tmp_path):
    root = make_registry(tmp_path / "registry")
    (root / "snakegate.toml").write_text('[run]\nstage_inputs = "symlink"\n')
    proc = snakegate(root, "run", "workflows/tabular-profile/examples/basic.yaml")
    assert proc.returncode == 2
    assert 'run.stage_inputs must be "copy" or "link", got \'symlink\'' in proc.stderr


# ---- sample sheets --------------------------------------------------------------------------------
SHEET_WORKFLOW = {
    "workflow.yaml": """\
        id: sheet-cat
        version: 0.1.0
        title: Sheet cat
        description: Concatenates the text files a sample sheet names.
        tags: [test]
        maintainers: [{name: snakegate tests}]
        trust: community
        rules:
          cat: {input: {files: text}, output: {joined: text}}
        outputs:
          joined: {path: results/joined.txt, type: text, description: The files one after the other.}
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": False,
        "required": ["samples"],
        "properties": {"samples": {
            "type": "string", "x-artifact": "tsv-table", "description": "One row per sample: name and file.",
            "x-sample-sheet": {"type": "object", "required": ["name", "file"], "additionalProperties": False,
                               "properties": {"name": {"type": "string", "description": "Sample name."},
                                              "file": {"type": "string", "x-artifact": "text",
                                                       "description": "The sample's text file."}}}}},
    }),
    "Snakefile": """\
        import pandas as pd

        SHEET = pd.read_csv(config["samples"], sep="\\t", dtype=str)


        rule all:
            input:
                "results/joined.txt",


        rule cat:
            input:
                files=list(SHEET["file"]),
            output:
                joined="results/joined.txt",
            shell:
                "cat {input.files:q} > {output.joined:q}"
        """,
}


def _sheet_registry(tmp_path, cell_b: str):
    root = make_registry(tmp_path / "registry", {"sheet-cat": SHEET_WORKFLOW})
    data = root / "data" / "sheet"
    data.mkdir(parents=True)
    (data / "a.txt").write_text("alpha\n")
    (data / "b.txt").write_text("beta\n")
    (data / "samples.tsv").write_text(f"name\tfile\na\tdata/sheet/a.txt\nb\t{cell_b}\n")
    config = tmp_path / "run.yaml"
    config.write_text("workflow: sheet-cat\nparams:\n  samples: data/sheet/samples.tsv\n")
    return root, config


def test_a_sample_sheet_path_cell_with_a_trailing_space_is_refused_naming_row_and_column(tmp_path):
    root, config = _sheet_registry(tmp_path, "data/sheet/b.txt ")
    # a second name in the data root that the stripped path would never have seen
    (root / "data" / "sheet" / "b.txt ").symlink_to("/etc/hostname")
    proc = snakegate(root, "validate", config)
    assert proc.returncode == 1
    said = " ".join(proc.stdout.split())  # refusals wrap at 80 columns
    assert "params.samples[row 2].file" in said
    assert "has spaces or tabs before or after the path" in said
    assert "write the path exactly as the file is named" in said


def test_a_control_character_in_a_sample_sheet_path_cell_is_refused(tmp_path):
    root, config = _sheet_registry(tmp_path, "data/sheet/b\x01.txt")
    proc = snakegate(root, "validate", config)
    assert proc.returncode == 1
    assert "holds a control character" in " ".join(proc.stdout.split())  # refusals wrap at 80 columns


@pytest.mark.parametrize("path", ["snakegate run", "plain snakemake"])
def test_a_run_reads_its_sample_sheet_files_from_staged_copies_named_in_a_staged_sheet(tmp_path, path):
    root, config = _sheet_registry(tmp_path, "data/sheet/b.txt")
    proc = _start(path, root, config)
    out, err = finish(proc)
    assert proc.returncode == 0, out + err
    run_dir = only_run(root)
    assert (run_dir / "results" / "joined.txt").read_text() == "alpha\nbeta\n"
    entries = json.loads((run_dir / "inputs.json").read_text())["inputs"]
    sheet = entries["params.samples"]
    staged_sheet = (run_dir / sheet["path"]).read_text()
    # the staged sheet names the staged files, by absolute path; everything else as written
    assert staged_sheet.splitlines()[0] == "name\tfile"
    for row, key in ((1, "params.samples[row 1].file"), (2, "params.samples[row 2].file")):
        assert staged_sheet.splitlines()[row].split("\t")[1] == str(run_dir / entries[key]["path"])
    assert sheet["gated_sha256"] == sha256(root / "data" / "sheet" / "samples.tsv")
    assert sheet["sha256"] == sha256(run_dir / sheet["path"])
    # the job read the staged copies: editing the data root afterwards changes nothing the record says
    (root / "data" / "sheet" / "b.txt").write_text("changed\n")
    verify = snakegate(root, "verify", run_dir.name)
    assert verify.returncode == 0, verify.stdout
