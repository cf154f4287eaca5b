"""Sensitive values in the records: a keyed hash (HMAC-SHA256) under a per-registry key, never the value.

A throw-away git registry with a one-rule workflow whose `token` is `x-sensitive`; a real
`snakegate run` and plain `snakemake` on its config. The key lives at `.snakegate/secret.key`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from registry_copies import LABEL_PARAM, TOKEN_PARAM, clean_env, git, make_registry, new_run, note_workflow, \
    run_names, snakegate
from snakegate.provenance.document import ensure_rendering

SECRET = "tok-7f3a9c2e-guessable"
NOTE = note_workflow("secret-note", "Secret note", "Writes a note; holds a token.",
                     {"token": TOKEN_PARAM, "label": LABEL_PARAM})


@pytest.fixture(scope="module")
def registry(tmp_path_factory) -> Path:
    root = make_registry(tmp_path_factory.mktemp("secrets") / "registry", {"secret-note": NOTE}, with_git=True)
    (root / "note.yaml").write_text(f"workflow: secret-note\nparams:\n  token: {SECRET}\n  label: hello\n")
    return root


@pytest.fixture(scope="module")
def run_dir(registry) -> Path:
    before = run_names(registry)
    proc = snakegate(registry, "run", "note.yaml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return new_run(registry, before)


def key_of(registry: Path) -> bytes:
    return bytes.fromhex((registry / ".snakegate" / "secret.key").read_text().strip())


def keyed(registry: Path, value) -> str:
    return "hmac-sha256:" + hmac.new(key_of(registry), json.dumps(value).encode(), hashlib.sha256).hexdigest()


def validate_id(registry: Path, config: str = "note.yaml") -> str:
    proc = snakegate(registry, "validate", "--json", config)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)["invocation_id"]


def test_the_record_holds_a_keyed_hash_that_a_guess_cannot_confirm(run_dir, registry):
    data = json.loads((run_dir / "prov.json").read_text())
    inv = next(a for a in data["entity"].values() if "sg:params" in a and "sg:invocationId" in a)
    params = json.loads(inv["sg:params"] if isinstance(inv["sg:params"], str) else inv["sg:params"]["$"])
    plain_sha256 = hashlib.sha256(json.dumps(SECRET).encode()).hexdigest()
    assert params["token"] == keyed(registry, SECRET)
    assert plain_sha256 not in (run_dir / "prov.json").read_text()
    assert params["label"] == "hello"


def test_no_record_but_config_yaml_holds_the_plaintext(run_dir):
    for name in ("invocation.json", "run.json", "prov.json", "prov.provn", "prov.ttl"):
        path = ensure_rendering(run_dir, name) if name == "prov.ttl" else run_dir / name
        assert SECRET not in path.read_text(), name
    assert SECRET in (run_dir / "config.yaml").read_text()  # Snakemake needs it


def test_config_yaml_is_readable_by_its_owner_only(run_dir):
    assert stat.S_IMODE((run_dir / "config.yaml").stat().st_mode) == 0o600


def test_the_key_is_made_on_first_use_outside_the_runs_owner_only_and_git_ignored(run_dir, registry):
    key = registry / ".snakegate" / "secret.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    assert not key.resolve().is_relative_to((registry / "runs").resolve())
    assert len(key_of(registry)) == 32
    assert git(registry, "check-ignore", ".snakegate/secret.key") == ".snakegate/secret.key"
    assert ".snakegate" not in git(registry, "status", "--porcelain", "--untracked-files=all")


def test_the_invocation_id_is_stable_for_the_same_value_and_key(run_dir, registry):
    recorded = json.loads((run_dir / "invocation.json").read_text())
    assert recorded["invocation"]["params"]["token"] == keyed(registry, SECRET)
    assert validate_id(registry) == recorded["invocation_id"] == validate_id(registry)
    other = registry / "other.yaml"
    other.write_text(f"workflow: secret-note\nparams:\n  token: {SECRET}x\n  label: hello\n")
    assert validate_id(registry, "other.yaml") != recorded["invocation_id"]


def test_plain_snakemake_accepts_the_run_config_the_keyed_hash_pinned(run_dir, registry, tmp_path):
    config = tmp_path / "again.yaml"
    text = (run_dir / "config.yaml").read_text().replace(f"run_id: {run_dir.name}", "run_id: again-1")
    config.write_text(text)
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--configfile", str(config), "--cores", "1"],
                          cwd=registry, env=clean_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads((registry / "runs" / "again-1" / "run.json").read_text())["status"] == "succeeded"


def test_an_export_carries_the_keyed_hash_and_no_plaintext(run_dir, registry, tmp_path):
    dest = tmp_path / "crate"
    proc = snakegate(registry, "export", run_dir.name, "--ro-crate", dest)
    assert proc.returncode == 0, proc.stderr
    for path in dest.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(errors="replace"), path
    metadata = (dest / "ro-crate-metadata.json").read_text()
    assert keyed(registry, SECRET) in metadata


def test_a_key_other_users_can_read_is_refused_with_the_fix(registry, run_dir):
    key = registry / ".snakegate" / "secret.key"
    os.chmod(key, 0o644)
    try:
        proc = snakegate(registry, "validate", "note.yaml")
        assert proc.returncode == 1
        said = " ".join((proc.stderr + proc.stdout).split())  # refusals wrap at 80 columns
        assert "[secret_key]" in said and f"chmod 600 {key}" in said
    finally:
        os.chmod(key, 0o600)


def test_a_workflow_without_sensitive_params_makes_no_key(tmp_path):
    root = make_registry(tmp_path / "registry")
    proc = snakegate(root, "validate", "workflows/tabular-profile/examples/basic.yaml")
    assert proc.returncode == 0, proc.stderr
    from snakegate.provenance.secrets import key_path

    assert not key_path(root).exists()


def test_the_key_is_made_once_even_by_racing_processes(tmp_path):
    from snakegate.provenance import secrets

    code = ("import sys; from snakegate.provenance import secrets; "
            "sys.stdout.write(secrets.registry_key(sys.argv[1]).hex())")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
             for _ in range(6)]
    keys = {p.communicate(timeout=60)[0] for p in procs}
    assert keys == {secrets.registry_key(tmp_path).hex()}
