"""A fork that changes a sensitive (x-sensitive) param records the change as its keyed hash from the first
byte of its run.json (issue 22.6): a fork killed before its end never leaves the new value in a record."""

from __future__ import annotations

import json

from registry_copies import LABEL_PARAM, TOKEN_PARAM, make_registry, note_workflow, run_names, snakegate


def test_a_fork_changing_a_sensitive_param_records_only_its_keyed_hash(tmp_path):
    root = make_registry(tmp_path / "registry", {"noted": note_workflow(
        "noted", "Noted", "Writes a note; holds a token.", {"token": TOKEN_PARAM, "label": LABEL_PARAM})})
    config = tmp_path / "run.yaml"
    config.write_text("workflow: noted\nparams:\n  token: first-secret-1234\n  label: hello\n")
    proc = snakegate(root, "run", config)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (parent,) = run_names(root)
    before = run_names(root)
    proc = snakegate(root, "fork", parent, "--set", "token=second-secret-5678", "--set", "label=again")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (fork,) = run_names(root) - before
    record = json.loads((root / "runs" / fork / "run.json").read_text())
    assert record["fork_changes"]["label"] == "again"
    assert record["fork_changes"]["token"].startswith("hmac-sha256:")
    for path in (root / "runs" / fork).rglob("*"):
        if path.is_file() and path.name != "config.yaml":
            assert b"second-secret-5678" not in path.read_bytes(), path
