"""Byte-identical means every output (issue 28 §4): the first example of every curated workflow, run in two
run folders of one registry (a run and its rerun) and in a second registry in another folder (there by plain
`snakemake`), writes the same bytes to every file under results/ — no tool output, log line or intermediate
names the run folder.

The runs are curated_kinds.py's (real `snakegate run`, `snakegate rerun` and `snakemake` in real git registries).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from curated_kinds import CURATED  # the runs themselves: a session fixture in conftest.py


def digests(run_dir: Path) -> dict[str, str]:
    """Every file under the run's results/ (relative path -> sha256)."""
    results = run_dir / "results"
    return {p.relative_to(results).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(results.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("curated_kinds", CURATED, indirect=True)
def test_every_result_file_is_byte_identical_across_run_folders_and_registries(curated_kinds):
    workflow, succeeded = curated_kinds.workflow, curated_kinds.runs["succeeded"]
    first = digests(succeeded)
    assert first, f"{workflow} wrote no results"
    for other in (curated_kinds.runs["rerun"], curated_kinds.second):
        again = digests(other)
        assert sorted(again) == sorted(first), (other, set(again) ^ set(first))
        differ = sorted(path for path in first if again[path] != first[path])
        assert differ == [], f"{workflow}: {differ} differ between {succeeded} and {other}"


@pytest.mark.parametrize("curated_kinds", CURATED, indirect=True)
def test_no_result_file_names_its_run_folder(curated_kinds):
    workflow, run_dir = curated_kinds.workflow, curated_kinds.runs["succeeded"]
    for path in sorted((run_dir / "results").rglob("*")):
        if path.is_file():
            assert run_dir.name.encode() not in path.read_bytes(), (workflow, path)
            assert str(run_dir.parent.parent).encode() not in path.read_bytes(), (workflow, path)
