"""Staging never follows a link and never waits on a FIFO: what reaches a run's inputs/ is the file, or the
folder, the gate resolved inside a data root (snakegate/run/nofollow.py).

Someone who can write to a data root plants, between the gate's resolution of an input and its copy, a symbolic
link to a file outside every data root (in place of the file, or of a folder on its path) or a FIFO; or hands
over a folder input that holds such a link. Each is refused, naming the param, and nothing from outside the data
roots is copied anywhere under runs/. The race is real and placed: a wrapper around the stager's own
`_stage_one` makes the swap on disk just before the original runs. The gate runs in-process with `snakegate
run`'s real Prestage (runner._gate), or without one (`snakegate validate`); no Snakemake is started.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from registry_copies import make_registry

from snakegate.gate import prove
from snakegate.provenance.hashing import folder_hash
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry
from snakegate.run import runner, stage

WORKFLOW = {
    "workflow.yaml": """\
        id: takes
        version: 0.1.0
        title: Takes a table and a folder
        description: Counts the lines of a table and lists a folder.
        tags: [test]
        maintainers: [{name: snakegate tests}]
        trust: community
        rules:
          count: {input: {table: csv-table, folder: directory}, output: {counts: text}}
        outputs:
          counts: {path: results/counts.txt, type: text, description: Lines of the table and files of the folder.}
        """,
    "schema.json": json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": False,
        "required": ["table", "folder"],
        "properties": {"table": {"type": "string", "x-artifact": "csv-table", "description": "A table."},
                       "folder": {"type": "string", "x-artifact": "directory", "description": "A folder."}},
    }),
    "Snakefile": """\
        rule count:
            input:
                table=config["table"],
                folder=config["folder"],
            output:
                counts="results/counts.txt",
            shell:
                "(wc -l {input.table}; ls -R {input.folder}) > {output.counts}"
        """,
}
INVOCATION = {"workflow": "takes", "params": {"table": "data/table.csv", "folder": "data/folder"}}
SECRET = "SECRET outside every data root\n"


@pytest.fixture
def registry(tmp_path):
    """(root, settings, registry, the outside file): the `takes` workflow, a table and a folder under data/."""
    root = make_registry(tmp_path / "registry", {"takes": WORKFLOW})
    (root / "data" / "table.csv").write_text("x,y\n1,2\n")
    (root / "data" / "folder" / "sub").mkdir(parents=True)
    (root / "data" / "folder" / "part.txt").write_text("part\n")
    (root / "data" / "folder" / "sub" / "deep.txt").write_text("deep\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "table.csv").write_text("x,y\n" + SECRET.replace(" ", "_") + ",9\n")
    (outside / "secret.txt").write_text(SECRET)
    return root, load_settings(root), Registry.load(root), outside


@pytest.fixture(autouse=True)
def no_hang():
    """A staging that waits on a FIFO fails the test instead of hanging the suite."""
    def stop(*_):
        raise TimeoutError("the gate waited on a FIFO")
    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def staged_gate(reg, settings, invocation=INVOCATION, mode="copy"):
    """`snakegate run`'s gate with its real Prestage; the scratch copies are discarded after (a refusal leaves
    nothing anyway)."""
    prestage = stage.Prestage(settings.runs_dir, settings.registry_root, mode)
    try:
        return runner._gate(reg, invocation, settings, check_dag=False, prestage=prestage)
    finally:
        prestage.discard()


def nothing_from_outside(root: Path) -> None:
    runs = root / "runs"
    leaked = [p for p in runs.rglob("*") if p.is_file() and b"SECRET" in p.read_bytes()] if runs.exists() else []
    assert leaked == []


def swap_before_staging(monkeypatch, name: str, swap) -> None:
    original = stage._stage_one

    def staging(source, dest, mode):
        if Path(source).name == name:
            swap()
        return original(source, dest, mode)

    monkeypatch.setattr(stage, "_stage_one", staging)


@pytest.mark.parametrize("entry", ["file", "folder"])
def test_a_folder_input_holding_a_link_out_of_the_data_roots_is_refused_by_validate_and_by_run(registry, entry):
    root, settings, reg, outside = registry
    (root / "data" / "folder" / "sub" / "link").symlink_to(outside / "secret.txt" if entry == "file" else outside)
    said = set()
    for result in (prove.gate(reg, INVOCATION, settings, check_dag=False), staged_gate(reg, settings)):
        assert not result.ok
        [error] = result.errors
        assert error.path == "params.folder" and "holds a symbolic link, sub/link" in error.message, error
        assert "put the file itself there" in error.message + (error.hint or "")
        said.add((error.code, error.message, error.hint))
    # validate and run refuse it in the same words, as a folder not fit to be an input (not as unreadable)
    assert len(said) == 1 and next(iter(said))[0] == "format", said
    nothing_from_outside(root)
    assert not settings.runs_dir.exists()


def test_a_folder_input_holding_a_fifo_is_refused_without_waiting_on_it(registry):
    root, settings, reg, _ = registry
    os.mkfifo(root / "data" / "folder" / "pipe")
    for result in (prove.gate(reg, INVOCATION, settings, check_dag=False), staged_gate(reg, settings)):
        assert not result.ok
        [error] = result.errors
        assert error.path == "params.folder" and "holds pipe, which is neither a file nor a folder" in error.message


def test_a_clean_folder_is_staged_whole_with_the_digest_the_gate_gives_it(registry):
    root, settings, reg, _ = registry
    plain = prove.gate(reg, INVOCATION, settings, check_dag=False)
    prestage = stage.Prestage(settings.runs_dir, settings.registry_root, "copy")
    try:
        staged = runner._gate(reg, INVOCATION, settings, check_dag=False, prestage=prestage)
        copy = prestage.copy("params.folder", (root / "data" / "folder").resolve())
        assert sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*")) == ["part.txt", "sub", "sub/deep.txt"]
    finally:
        prestage.discard()
    assert plain.ok and staged.ok, (plain.errors, staged.errors)
    assert staged.invocation.inputs["params.folder"] == plain.invocation.inputs["params.folder"] \
        == folder_hash(root / "data" / "folder", use_cache=False)


@pytest.mark.parametrize("mode", ["copy", "link"])
def test_a_file_replaced_by_a_link_out_of_the_data_roots_before_it_is_staged_is_refused(registry, monkeypatch,
                                                                                         mode):
    root, settings, reg, outside = registry
    table = root / "data" / "table.csv"

    def swap():
        os.rename(table, root / "table.csv.moved")
        table.symlink_to(outside / "table.csv")

    swap_before_staging(monkeypatch, "table.csv", swap)
    result = staged_gate(reg, settings, mode=mode)
    assert not result.ok
    assert [(e.path, e.code) for e in result.errors] == [("params.table", "input_changed")]
    assert "became a link or a special file since the gate resolved it" in result.errors[0].message
    nothing_from_outside(root)


def test_a_folder_on_the_path_replaced_by_a_link_before_staging_is_refused(registry, monkeypatch):
    root, settings, reg, outside = registry
    data = root / "data"

    def swap():  # the whole data folder now leads outside: table.csv there has the secret
        os.rename(data, root / "data.moved")
        data.symlink_to(outside)

    swap_before_staging(monkeypatch, "table.csv", swap)
    result = staged_gate(reg, settings)
    assert not result.ok
    table_error = next(e for e in result.errors if e.path == "params.table")
    assert "has a link or a file at `data` since the gate resolved it" in table_error.message
    nothing_from_outside(root)


def test_a_file_replaced_by_a_fifo_before_it_is_staged_is_refused_not_waited_on(registry, monkeypatch):
    root, settings, reg, _ = registry
    table = root / "data" / "table.csv"

    def swap():
        os.rename(table, root / "table.csv.moved")
        os.mkfifo(table)

    swap_before_staging(monkeypatch, "table.csv", swap)
    result = staged_gate(reg, settings)
    assert [e.path for e in result.errors] == ["params.table"]
    assert "is no longer a regular file since the gate resolved it" in result.errors[0].message
