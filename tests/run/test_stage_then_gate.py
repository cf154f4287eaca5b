"""Stage, then gate (issue 30: hash once, at staging): `snakegate run`'s gate takes each input's digest from the
copy it writes as it reads the source (snakegate.run.stage.Prestage), so the source is read once before the run;
the copies move into the run folder the gate names, and a refused gate leaves none behind.

The front end's gate and run folder run here in-process (runner._gate, runner.fill_run_folder), as `snakegate run`
calls them; bytes read are this process's own count (/proc/self/io, `rchar`). No Snakemake is started.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest

from registry_copies import REPO, make_registry
from snakegate.provenance import runstore
from snakegate.registry.settings import load_settings
from snakegate.registry.workflows import Registry
from snakegate.run import runner, stage

SIZE = 4 << 20
BLOB = REPO / "bench" / "blob"  # one input of any bytes, which its job never reads


def bytes_read() -> int:
    with open("/proc/self/io") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("rchar:"))


@pytest.fixture
def blob_registry(tmp_path):
    """(root, settings, registry, invocation, sha256 of the input): the blob workflow and a 4 MiB input."""
    files = {p.name: p.read_text() for p in BLOB.iterdir() if p.is_file()}
    root = make_registry(tmp_path / "registry", {"blob": files})
    data = os.urandom(SIZE)
    (root / "data" / "blob").mkdir(parents=True)
    (root / "data" / "blob" / "big.pkl").write_bytes(data)
    invocation = {"workflow": "blob", "params": {"blob": "data/blob/big.pkl"}}
    return root, load_settings(root), Registry.load(root), invocation, hashlib.sha256(data).hexdigest()


def test_snakegate_runs_gate_reads_an_input_once_copying_it_and_the_run_folder_does_not_copy_it_again(
        blob_registry):
    _root, settings, registry, invocation, digest = blob_registry
    prestage = stage.Prestage(settings.runs_dir, settings.registry_root, settings.stage_inputs)
    before = bytes_read()
    result = runner._gate(registry, invocation, settings, check_dag=False, prestage=prestage)
    gated = bytes_read() - before
    assert result.ok, result.errors
    assert result.invocation.inputs == {"params.blob": digest}
    assert SIZE <= gated < SIZE * 5 // 4  # one read of the source: the copy's, hashed as it is written

    run_dir = settings.runs_dir / "r1"
    run_dir.mkdir()
    before = bytes_read()
    runner.fill_run_folder(registry, settings, result, "r1", run_dir, runner.RunOptions(), {}, runstore.utc_now(),
                           prestage)
    assert bytes_read() - before < SIZE // 4  # the copy moved in, never made or hashed again
    entry = runstore.read_json(run_dir / runstore.INPUTS_JSON)["inputs"]["params.blob"]
    assert (entry["sha256"], entry["source"], entry["path"]) == (digest, "data/blob/big.pkl", "inputs/data/blob/big.pkl")
    assert hashlib.sha256((run_dir / entry["path"]).read_bytes()).hexdigest() == digest
    assert sorted(p.name for p in settings.runs_dir.iterdir()) == ["r1"]  # its scratch folder is gone


@pytest.mark.parametrize("refusal", ["claimed-id", "not-approved"])
def test_a_refused_gate_leaves_no_staged_copy_and_no_runs_folder(blob_registry, refusal):
    _root, settings, registry, invocation, _digest = blob_registry
    options = runner.RunOptions()
    if refusal == "claimed-id":  # refused after the inputs were hashed (and copied)
        with pytest.raises(runner.GateRejected) as refused:
            runner.execute(registry, settings, {**invocation, "invocation_id": "0" * 64}, options)
        assert [e.code for e in refused.value.result.errors] == ["invocation_mismatch"]
    else:
        with pytest.raises(runner.NotApproved):
            runner.execute(registry, settings, invocation, options, approved_invocation_id="0" * 64)
    assert not settings.runs_dir.exists()


def test_a_refused_gate_leaves_the_runs_folder_it_found_as_it_was(blob_registry):
    _root, settings, registry, invocation, _digest = blob_registry
    (settings.runs_dir / "earlier").mkdir(parents=True)
    with pytest.raises(runner.NotApproved):
        runner.execute(registry, settings, invocation, runner.RunOptions(), approved_invocation_id="0" * 64)
    assert [p.name for p in settings.runs_dir.iterdir()] == ["earlier"]


def test_a_runs_folder_that_cannot_take_the_copies_is_a_message_naming_it_and_nothing_is_left(blob_registry):
    _root, settings, registry, invocation, _digest = blob_registry
    settings.runs_dir.write_text("not a folder\n")  # every copy into it fails, as on a broken mount
    with pytest.raises(runner.RecordUnwritable) as refused:
        runner.execute(registry, settings, invocation, runner.RunOptions())
    assert str(settings.runs_dir) in refused.value.message and "nothing was run" in refused.value.message
    assert settings.runs_dir.read_text() == "not a folder\n"


# a front end that has staged one input and waits: prints its scratch folder's name
STAGING = """
import sys, time
from pathlib import Path
from snakegate.run import stage
prestage = stage.Prestage(Path(sys.argv[1]), Path(sys.argv[2]), "copy")
prestage.digest("params.table", Path(sys.argv[3]))
print(prestage.folder.name, flush=True)
time.sleep(600)
"""


def test_the_copies_of_a_front_end_that_died_while_staging_are_removed_by_the_next_one(tmp_path):
    runs = tmp_path / "runs"
    source = tmp_path / "table.csv"
    source.write_text("a,b\n1,2\n")
    staging = [subprocess.Popen([sys.executable, "-c", STAGING, str(runs), str(tmp_path), str(source)],
                                stdout=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        names = {"dead": staging[0].stdout.readline().strip(), "alive": staging[1].stdout.readline().strip()}
        staging[0].kill()  # SIGKILL, by its PID: the front end gets no chance to clean up
        staging[0].wait(timeout=30)
        assert (runs / names["dead"] / "inputs").is_dir()  # its copies are left behind
        names["elsewhere"] = f".staging-another-host-{staging[0].pid}-0badc0de"  # another host's: not ours to judge
        (runs / names["elsewhere"] / "inputs").mkdir(parents=True)
        (runs / names["elsewhere"] / ".lock").write_text(f"pid {staging[0].pid}")
        prestage = stage.Prestage(runs, tmp_path, "copy")
        left = {p.name for p in runs.iterdir()}
        assert names["dead"] not in left  # removed, read-only copies and all
        assert {names["alive"], names["elsewhere"]} <= left  # a live front end's, and one another host may still use
        assert not prestage.folder.exists()  # made only when a copy is written into it
    finally:
        for proc in staging:
            proc.kill()
            proc.wait(timeout=30)
