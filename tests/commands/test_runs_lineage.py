"""`snakegate runs` says what each run was made from (issue 29 §3): a fork names its parent and the params it
changed (names only, never a value), a rerun names the run it repeats, a refinement's point says so; in the
table (within 80 columns) and in --json.

Run folders written as the run store writes run.json (a fork's `parent_run` and `fork_changes`, a rerun's
`rerun_of`, a refinement's `refinement`), with fixed times; the CLI in-process.
"""

from __future__ import annotations

import json

from registry_copies import copy_registry

PARENT, FORK, RERUN, POINT = ("20261120T090000Z-aaaaaaaa", "20261120T100000Z-bbbbbbbb",
                              "20261120T110000Z-cccccccc", "20261120T120000Z-dddddddd")


def _registry(tmp_path):
    root = copy_registry(tmp_path / "registry")
    records = {
        PARENT: {},
        FORK: {"parent_run": PARENT, "fork_changes": {"missing_strategy": "fill_median", "token": "s3cret-value"}},
        RERUN: {"rerun_of": PARENT},
        POINT: {"parent_run": FORK, "fork_changes": {"missing_strategy": "fill_mean"},
                "refinement": {"id": "r-1234", "point": 2, "points": 3}},
    }
    for n, (run_id, extra) in enumerate(records.items()):
        folder = root / "runs" / run_id
        folder.mkdir(parents=True)
        (folder / "run.json").write_text(json.dumps({
            "run_id": run_id, "workflow": "tabular-profile", "status": "succeeded", "source": "snakegate run",
            "started": f"2026-11-20T{9 + n:02d}:00:00.000Z", "duration_s": 12.0, **extra}))
    return root


def test_runs_shows_each_fork_and_rerun_under_the_run_it_was_made_from(tmp_path, cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    root = _registry(tmp_path)
    code, out, err = cli("--registry", root, "runs")
    assert code == 0, err
    lines = out.splitlines()
    below: dict[str, str] = {}  # run id -> the text under its row, wrapped lines joined
    for line in lines[1:]:
        if line.startswith("2026"):
            run = line.split()[0]
            below[run] = ""
        elif line.startswith("    "):
            below[run] = f"{below[run]} {line.strip()}".strip()
    assert below[FORK] == f"fork of {PARENT} (changed missing_strategy, token)"
    assert below[RERUN] == f"rerun of {PARENT}"
    assert below[POINT] == f"fork of {FORK} (changed missing_strategy); refinement r-1234, point 2 of 3"
    assert below[PARENT] == ""  # made from nothing: no line under it
    assert "s3cret-value" not in out and "fill_median" not in out  # names of changes only, never values
    assert max(len(line) for line in lines) <= 80


def test_runs_json_names_the_parent_of_a_fork_and_a_rerun(tmp_path, cli):
    root = _registry(tmp_path)
    code, out, _ = cli("--registry", root, "runs", "--json")
    rows = {r["run_id"]: r for r in json.loads(out)["runs"]}
    assert rows[FORK]["fork_of"] == PARENT and rows[FORK]["changed"] == ["missing_strategy", "token"]
    assert rows[RERUN]["rerun_of"] == PARENT and "fork_of" not in rows[PARENT]
    assert "s3cret-value" not in out
