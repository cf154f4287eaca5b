"""Records that prove themselves (issue 22.4): `verify`, `rerun` and `fork` re-derive what a run folder claims.

One real run of tabular-profile, then each test edits its record the way someone who can write the run
folder could — invocation.json keeping its id, an output together with its hash in prov.json, run.json,
the seal itself, the workflow copy, a reused intermediate — and puts it back afterwards. Each edit is
found: by the invocation id the record no longer hashes to, or by the seal (seal.json, whose own hash the
registry's run index keeps outside the run folder).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from registry_copies import make_registry, run_names, snakegate


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> tuple[Path, Path]:
    root = make_registry(tmp_path_factory.mktemp("sealed") / "registry", with_git=True)
    proc = snakegate(root, "run", "workflows/tabular-profile/examples/basic.yaml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (run_dir,) = (root / "runs").iterdir()
    return root, run_dir


class Kept:
    """Files of the run folder as they were; put back (with their modes) when the test ends."""

    def __init__(self, *paths: Path):
        self.saved = {p: (p.read_bytes(), p.stat().st_mode) for p in paths}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for path, (data, mode) in self.saved.items():
            path.chmod(0o644)
            path.write_bytes(data)
            path.chmod(mode & 0o777)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_an_untouched_run_proves_itself_and_its_seal_holds(finished):
    root, run_dir = finished
    proc = snakegate(root, "verify", run_dir.name)
    assert proc.returncode == 0, proc.stdout
    assert "sealed: seal" in proc.stdout and "is the one in the registry's run index" in proc.stdout
    report = json.loads(snakegate(root, "verify", run_dir.name, "--json").stdout)
    assert report["ok"] and report["seal"]["state"] == "intact" and report["record_problems"] == []


def test_an_invocation_json_edited_keeping_its_id_fails_verify(finished):
    root, run_dir = finished
    record = run_dir / "invocation.json"
    with Kept(record):
        data = json.loads(record.read_text())
        data["invocation"]["params"]["missing_strategy"] = "fill_mean"  # params that never ran
        record.write_text(json.dumps(data))
        proc = snakegate(root, "verify", run_dir.name)
    assert proc.returncode == 1
    assert "names invocation" in proc.stdout and "but holds one that hashes to" in proc.stdout
    assert "invocation.json: changed after the seal" in proc.stdout


def test_an_output_changed_together_with_its_hash_in_prov_json_fails_verify(finished):
    root, run_dir = finished
    output, prov = run_dir / "results" / "profile.json", run_dir / "prov.json"
    with Kept(output, prov):
        old = _sha(output.read_bytes())
        forged = output.read_bytes().replace(b"{", b"{\"forged\": true, ", 1)
        output.chmod(0o644)
        output.write_bytes(forged)
        prov.write_text(prov.read_text().replace(old, _sha(forged)))
        proc = snakegate(root, "verify", run_dir.name)
    assert proc.returncode == 1
    assert "results/profile.json: changed after the seal" in proc.stdout
    assert "prov.json: changed after the seal" in proc.stdout


def test_a_run_json_edited_after_the_end_fails_verify(finished):
    root, run_dir = finished
    record = run_dir / "run.json"
    with Kept(record):
        data = json.loads(record.read_text())
        data["approved_by"] = "someone else"
        record.write_text(json.dumps(data))
        proc = snakegate(root, "verify", run_dir.name)
    assert proc.returncode == 1
    assert "run.json: changed after the seal" in proc.stdout


def test_a_seal_rewritten_to_match_an_edited_record_is_caught_by_the_run_index(finished):
    root, run_dir = finished
    record, seal = run_dir / "run.json", run_dir / "seal.json"
    with Kept(record, seal):
        record.write_text(record.read_text().replace('"succeeded"', '"succeeded" ', 1))
        data = json.loads(seal.read_text())
        data["files"]["run.json"] = _sha(record.read_bytes())
        seal.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        proc = snakegate(root, "verify", run_dir.name)
    assert proc.returncode == 1
    assert "but the run index recorded the seal" in proc.stdout and "the seal was rewritten" in proc.stdout


@pytest.mark.parametrize("command", [["rerun"], ["fork", "--set", "missing_strategy=fill_mean"]])
def test_rerun_and_fork_refuse_a_parent_whose_workflow_copy_changed(finished, command):
    root, run_dir = finished
    script = next((run_dir / "workflow" / "scripts").glob("*.py"))
    before = run_names(root)
    with Kept(script):
        script.chmod(0o644)
        script.write_text(script.read_text() + "\n# edited after the run\n")
        proc = snakegate(root, command[0], run_dir.name, *command[1:])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "does not prove itself" in proc.stderr
    assert "workflow copy" in proc.stderr and "no longer has the content hash" in proc.stderr
    assert run_names(root) == before  # nothing ran


def test_fork_refuses_a_forged_intermediate_even_with_prov_json_edited_to_match(finished):
    root, run_dir = finished
    loaded, prov = run_dir / "results" / "loaded.csv", run_dir / "prov.json"
    before = run_names(root)
    with Kept(loaded, prov):
        old = _sha(loaded.read_bytes())
        forged = loaded.read_bytes().replace(b"Adelie", b"Adelle", 1)
        loaded.chmod(0o644)
        loaded.write_bytes(forged)
        prov.write_text(prov.read_text().replace(old, _sha(forged)))
        proc = snakegate(root, "fork", run_dir.name, "--set", "missing_strategy=fill_mean")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "results/loaded.csv: changed after the seal" in proc.stderr
    assert run_names(root) == before


def test_a_run_without_a_seal_is_called_unsealed_not_tampered(finished, tmp_path):
    root, run_dir = finished
    seal, index = run_dir / "seal.json", root / ".snakegate" / "runs" / f"{run_dir.name}.json"
    shutil.copy(seal, tmp_path / "seal.json")
    shutil.copy(index, tmp_path / "index.json")
    seal.unlink()
    index.unlink()
    try:
        proc = snakegate(root, "verify", run_dir.name)
    finally:
        shutil.copy(tmp_path / "seal.json", seal)
        shutil.copy(tmp_path / "index.json", index)
    assert proc.returncode == 0, proc.stdout
    assert "unsealed: the run has no seal" in proc.stdout
