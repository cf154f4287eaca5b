"""A fork with a list given as comma-separated text, and the diff of it (issue 29 §3): `fork --set
columns=species,sex` runs with the list [species, sex] (the contract types `columns` as a list), and `diff`
counts the changed list as one change, shown whole.

The runs are real (tests/commands/cli_runs.py: one `snakegate run`, one fork of it); `diff` reads them
in-process.
"""

from __future__ import annotations

import json

from cli_runs import forked_columns, profiled  # noqa: F401 - the shared runs


def test_fork_set_with_commas_runs_with_the_list_the_contract_wants(forked_columns):
    proc, run_dir = forked_columns
    invocation = json.loads((run_dir / "invocation.json").read_text())["invocation"]
    assert invocation["params"]["columns"] == ["species", "sex"]
    assert "columns=[species, sex] changes rule(s)" in " ".join(proc.stdout.split())
    assert max(len(line) for line in proc.stdout.splitlines()) <= 80, proc.stdout


def test_diff_counts_a_changed_list_as_one_change(cli, profiled, forked_columns, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    (_, parent), (_, fork) = profiled, forked_columns
    code, out, err = cli("--registry", parent.parent.parent, "diff", parent.name, fork.name)
    assert code == 0, err
    assert "parameters (1 changed):" in out
    [line] = [line for line in out.splitlines() if "params.columns" in line]
    assert line.rstrip().endswith('-> ["species", "sex"]') and "[0]" not in out
