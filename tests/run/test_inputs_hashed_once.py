"""Hash once, at staging (issue 30): the seal and the PROV record reuse the staging's digests of the inputs,
and still say the truth about every byte. One real run of tabular-profile, shared read-only except where a
test changes a staged copy and puts it back.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from registry_copies import make_registry, snakegate


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> tuple[Path, Path, dict]:
    root = make_registry(tmp_path_factory.mktemp("once") / "registry", with_git=True)
    proc = snakegate(root, "run", "workflows/tabular-profile/examples/basic.yaml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (run_dir,) = (root / "runs").iterdir()
    inputs = json.loads((run_dir / "inputs.json").read_text())["inputs"]
    assert inputs, "the example stages no input"
    return root, run_dir, inputs


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_prov_records_each_input_and_its_staged_copy_by_the_sha256_of_their_bytes(finished):
    root, run_dir, inputs = finished
    prov = json.loads((run_dir / "prov.json").read_text())
    gate_used = {r["prov:entity"] for r in prov["used"].values() if r["prov:activity"].endswith("/gate")}
    stage_made = {r["prov:entity"] for r in prov["wasGeneratedBy"].values() if r["prov:activity"].endswith("/stage")}
    for entry in inputs.values():
        assert f"file:{_sha(root / entry['source'])}/{entry['source']}" in gate_used
        assert f"file:{_sha(run_dir / entry['path'])}/runs/{run_dir.name}/{entry['path']}" in stage_made


def test_the_seal_names_each_staged_input_by_the_sha256_of_its_bytes(finished):
    _root, run_dir, inputs = finished
    sealed = json.loads((run_dir / "seal.json").read_text())["files"]
    for entry in inputs.values():
        assert sealed[entry["path"]] == _sha(run_dir / entry["path"]) == entry["sha256"]


def test_a_staged_input_changed_after_the_run_fails_verify_naming_it(finished):
    root, run_dir, inputs = finished
    entry = next(iter(inputs.values()))
    copy = run_dir / entry["path"]
    data, mode = copy.read_bytes(), copy.stat().st_mode
    copy.chmod(0o644)
    copy.write_bytes(data.replace(b"\n", b"\r\n", 1))
    try:
        proc = snakegate(root, "verify", run_dir.name)
        assert proc.returncode != 0, proc.stdout
        assert f"{entry['path']}: changed after the seal" in proc.stdout
    finally:
        copy.write_bytes(data)
        copy.chmod(mode & 0o777)
    assert snakegate(root, "verify", run_dir.name).returncode == 0
