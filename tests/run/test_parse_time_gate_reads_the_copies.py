"""Snakemake's first step under `snakegate run` gates the run (a workflow's or a plan's) again, and reads the run
folder's staged copies to do it, never the data root: someone who writes to a data root after `snakegate run` staged its inputs can
neither reach a job nor fail the run (snakegate/run/prepare.py `_staged_copies`).

The real CLI and the real Snakemake: `snakegate run` stages and gates, and its Snakemake child is held before it
reads its config (tests/run/waits.py PAUSE_HOOK) while the test empties the data root's table and writes bytes
there that no check would pass.
"""

from __future__ import annotations

import hashlib

import pytest

from registry_copies import clean_env
from waits import PAUSE_HOOK, PENGUINS, finish, only_run, record_of, registry, sg_start, wait_for  # noqa: F401


PLAN = """\
plan: profile-only
steps:
  profile:
    workflow: tabular-profile
    params:
      dataset_file: data/examples/tabular-penguins.csv
"""


@pytest.mark.parametrize("what", ["workflow", "plan"])
def test_a_source_spoiled_after_staging_neither_fails_the_run_nor_reaches_a_job(registry, tmp_path, what):
    hook, pause = tmp_path / "hook", tmp_path / "pause"
    hook.mkdir()
    pause.mkdir()
    (hook / "sitecustomize.py").write_text(PAUSE_HOOK)
    source = registry / PENGUINS
    original = source.read_bytes()
    config = "workflows/tabular-profile/examples/basic.yaml"
    if what == "plan":
        config = str(tmp_path / "plan.yaml")
        (tmp_path / "plan.yaml").write_text(PLAN)
    proc = sg_start(registry, "run", config,
                    env=clean_env(PYTHONPATH=str(hook), TEST_PAUSE_BEFORE_SNAKEMAKE=str(pause)))
    try:
        wait_for(pause / "paused")  # staged and gated; Snakemake started and held before its own gate
        source.write_bytes(b"\x00\x01 not a table\n")  # the format check would refuse these bytes
    finally:
        (pause / "go").touch()
    out, err = finish(proc)
    assert proc.returncode == 0, out + err
    run_dir = only_run(registry)
    assert record_of(run_dir)["status"] == "succeeded"
    [copy] = (run_dir / "inputs").rglob("tabular-penguins.csv")
    assert hashlib.sha256(copy.read_bytes()).digest() == hashlib.sha256(original).digest()
    [cleaned] = run_dir.rglob("cleaned.csv")
    assert b"not a table" not in cleaned.read_bytes()
    assert source.read_bytes() == b"\x00\x01 not a table\n"  # the data root really was spoiled
