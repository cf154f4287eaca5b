"""The CLI read at 80 columns (COLUMNS=80), compared with the text a person should see: `runs` (header,
newest last for every kind, filters, JSON), `show-run` (params, readable lists, where a run came from),
`show` (word-boundary wrapping, real types), `run -n`, `--cores all`.

`runs` and `show-run` read run records: here they are run folders written as the run store writes them
(run.json, invocation.json), with fixed times so the expected text is exact. The runs that need
Snakemake (chat, MCP, fork, CSV diff, export) are in tests/views/test_cli_runs.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from registry_copies import TABULAR_VERSION, copy_registry, make_registry, new_run, run_names, snakegate

WORKFLOWS = ["classifier-benchmark", "pl-power-series", "pump-probe", "surrogate-design", "tabular-profile",
             "variant-calling"]


@pytest.fixture(autouse=True)
def _eighty_columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")


def _run_folder(runs: Path, run_id: str, record: dict | None, invocation: dict | None = None,
                raw: str | None = None) -> Path:
    folder = runs / run_id
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(raw if raw is not None else json.dumps({"run_id": run_id, **record}))
    if invocation is not None:  # as the gate writes it: the id is the sha256 of the canonical invocation
        from snakegate.provenance.hashing import canonical_json, sha256_text
        (folder / "invocation.json").write_text(json.dumps({"invocation_id": sha256_text(canonical_json(invocation)),
                                                            "invocation": invocation}))
    return folder


def _at(folder: Path, iso: str) -> None:
    import datetime as dt
    stamp = dt.datetime.fromisoformat(iso).replace(tzinfo=dt.timezone.utc).timestamp()
    os.utime(folder, (stamp, stamp))


@pytest.fixture
def store(tmp_path) -> Path:
    """A registry whose runs/ holds one run of each kind, their folder names not in time order."""
    root = copy_registry(tmp_path / "registry")
    runs = root / "runs"
    _run_folder(runs, "20261120T090000Z-aaaaaaaa", {
        "workflow": "tabular-profile", "status": "succeeded", "source": "snakegate run",
        "started": "2026-11-20T09:00:00.000Z", "ended": "2026-11-20T09:00:12.300Z", "duration_s": 12.3})
    _run_folder(runs, "plain-bbbbbbbbbbbb", {  # plain snakemake: its id does not sort by time
        "workflow": "tabular-profile", "status": "incomplete", "source": "snakemake",
        "started": "2026-11-23T10:00:00.000Z", "duration_s": 75.0, "missing_outputs": ["results/profile.json"]})
    _run_folder(runs, "20261122T080000Z-cccccccc", {
        "workflow": "classifier-benchmark", "status": "failed", "source": "snakegate run",
        "started": "2026-11-22T08:00:00.000Z", "duration_s": 3960.0, "error": "ValueError: no rows left"})
    _run_folder(runs, "20261121T070000Z-dddddddd", {
        "workflow": "surrogate-design", "status": "interrupted", "source": "snakegate run",
        "started": "2026-11-21T07:00:00.000Z", "interrupted_detected_at": "2026-11-21T08:00:00.000Z"})
    damaged = _run_folder(runs, "20261124T000000Z-eeeeeeee", None, raw='{"run_id": "20261124T00')
    _at(damaged, "2026-11-24T00:00:00")
    return root


def test_runs_lists_every_kind_newest_last_under_a_header(store, cli):
    code, out, err = cli("--registry", store, "runs")
    assert code == 0, err
    assert out == (  # the workflow column gives way to fit 80 columns; the note goes under its run
        "RUN                        WORKFLOW         STATUS       STARTED (UTC)      TIME\n"
        "20261120T090000Z-aaaaaaaa  tabular-profile  succeeded    2026-11-20 09:00  12.3s\n"
        "20261121T070000Z-dddddddd  surrogate-desi…  interrupted  2026-11-21 07:00      -\n"
        "20261122T080000Z-cccccccc  classifier-ben…  failed       2026-11-22 08:00  1h06m\n"
        "plain-bbbbbbbbbbbb         tabular-profile  incomplete   2026-11-23 10:00  1m15s\n"
        "20261124T000000Z-eeeeeeee  -                unreadable   -                     -\n"
        "    note: run.json is not valid JSON (Unterminated string starting at at line 1\n"
        "    column 12)\n")
    assert max(len(line) for line in out.splitlines()) <= 80


def test_runs_filters_by_workflow_status_time_and_count(store, cli):
    code, out, _ = cli("--registry", store, "runs", "--workflow", "tabular-profile")
    assert [line.split()[0] for line in out.splitlines()] == [
        "RUN", "20261120T090000Z-aaaaaaaa", "plain-bbbbbbbbbbbb", "(2"]
    assert out.splitlines()[-1] == "(2 of 5 runs shown, newest last)"
    code, out, _ = cli("--registry", store, "runs", "--status", "failed")
    assert [line.split()[0] for line in out.splitlines()[1:2]] == ["20261122T080000Z-cccccccc"]
    code, out, _ = cli("--registry", store, "runs", "--since", "2026-11-22")
    assert [line.split()[0] for line in out.splitlines()[1:4]] == [
        "20261122T080000Z-cccccccc", "plain-bbbbbbbbbbbb", "20261124T000000Z-eeeeeeee"]
    code, out, _ = cli("--registry", store, "runs", "--limit", "2")
    assert out.splitlines()[1].startswith("plain-bbbbbbbbbbbb") and "(2 of 5 runs shown, newest last)" in out


def test_runs_json_is_newest_last_with_the_same_filters(store, cli):
    code, out, _ = cli("--registry", store, "runs", "--json", "--since", "2026-11-21T12:00Z", "--limit", "1")
    data = json.loads(out)
    assert [r["run_id"] for r in data["runs"]] == ["20261124T000000Z-eeeeeeee"]
    assert data["matched"] == 3 and data["total"] == 5
    assert data["runs"][0]["status"] == "unreadable" and "run.json" in data["runs"][0]["note"]


@pytest.mark.parametrize("args, message", [
    (["--status", "faild"], "--status 'faild' is not a run status; did you mean `failed`?"),
    (["--since", "yesterday"], "--since 'yesterday' is not a time; give a UTC date or time"),
    (["--limit", "0"], "--limit must be at least 1 (got 0)"),
])
def test_runs_refuses_a_bad_filter_naming_it_and_the_fix(store, cli, args, message):
    code, out, err = cli("--registry", store, "runs", *args)
    assert code == 2 and message in err and "Traceback" not in err


def test_runs_says_when_nothing_matches(store, cli):
    code, out, _ = cli("--registry", store, "runs", "--workflow", "tabular-profil")
    assert code == 0
    assert out.startswith("no run matches the filters among the 5 runs in ")
    assert "(runs exist of: classifier-benchmark, surrogate-design, tabular-profile)" in out


SHOW_RUN = """\
run_id          20261125T100000Z-ffffffff
workflow        tabular-profile {version}
status          failed
source          chat (proposed by qwen2.5:7b via openai-compatible, approved by
                Jane Doe)
approved_at     2026-11-25T09:59:00Z
started         2026-11-25T10:00:00.000Z
ended           2026-11-25T10:00:04.500Z
duration_s      4.5
exit_code       1
invocation_id   ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff
params
  columns           species, bill_length_mm, body_mass_g
  dataset_file      data/examples/tabular-penguins.csv
  drop_duplicates   true
  missing_strategy  fill_mean
error           ValueError: column body_mass_g holds text ('heavy') in row 12;
                fill_mean needs numbers
failed_rule     clean
log             logs/clean.log
                | Traceback (most recent call last):
                | ValueError: column body_mass_g holds text ('heavy') in row 12
outputs
  cleaned  runs/20261125T100000Z-ffffffff/results/cleaned.csv (missing)
  profile  runs/20261125T100000Z-ffffffff/results/profile.json (missing)
folder          {folder}
"""


def test_show_run_gives_params_readable_lists_the_chat_source_and_the_failure(store, cli):
    run_id = "20261125T100000Z-ffffffff"
    error = "ValueError: column body_mass_g holds text ('heavy') in row 12; fill_mean needs numbers"
    folder = _run_folder(store / "runs", run_id, {
        "workflow": "tabular-profile", "version": TABULAR_VERSION, "status": "failed", "source": "snakegate run",
        "started": "2026-11-25T10:00:00.000Z", "ended": "2026-11-25T10:00:04.500Z", "duration_s": 4.5,
        "exit_code": 1, "invocation_id": "f" * 64, "error": error,
        "failure": {"rule": "clean", "exception": "ValueError", "message": error, "log": "logs/clean.log",
                    "log_tail": ["Traceback (most recent call last):",
                                 "ValueError: column body_mass_g holds text ('heavy') in row 12"]},
        "origin": {"model": "qwen2.5:7b", "proposed_by_backend": "openai-compatible", "approved_by": "Jane Doe",
                   "approved_at": "2026-11-25T09:59:00Z", "conversation_id": "c-1"},
        "outputs": [{"name": "cleaned", "path": f"runs/{run_id}/results/cleaned.csv", "exists": False},
                    {"name": "profile", "path": f"runs/{run_id}/results/profile.json", "exists": False}]},
        invocation={"workflow": "tabular-profile", "version": TABULAR_VERSION, "params": {
            "columns": ["species", "bill_length_mm", "body_mass_g"],
            "dataset_file": "data/examples/tabular-penguins.csv", "drop_duplicates": True,
            "missing_strategy": "fill_mean"}})
    code, out, err = cli("--registry", store, "show-run", run_id)
    assert code == 0, err
    assert out == SHOW_RUN.format(version=TABULAR_VERSION, folder=folder)
    assert "['" not in out  # no Python list repr anywhere


def test_show_wraps_at_word_boundaries_and_names_real_types(cli, registry_root):
    code, out, _ = cli("--registry", registry_root, "show", "tabular-profile")
    assert code == 0
    assert "  missing_strategy: one of remove, fill_mean, fill_median; default remove\n" in out
    assert "  columns: list of columns of dataset_file (at least 1 item, no repeats);\n    optional\n" in out
    assert "  dataset_file: path to a csv-table file; required\n" in out
    assert "  drop_duplicates: true/false; default true\n" in out
    code, out, _ = cli("--registry", registry_root, "show", "surrogate-design")
    assert "  constraints: mapping from column of dataset_file to object with min (number),\n" in out
    assert "  objective: mapping from column of dataset_file to one of maximize, minimize;\n" in out
    assert "  n_candidates: integer (≥ 1, ≤ 1000); default 50\n" in out
    code, out, _ = cli("--registry", registry_root, "show", "pump-probe")
    assert "  signal_roi: list of integers (exactly 4 items, each ≥ 0); required\n" in out
    code, out, _ = cli("--registry", registry_root, "show", "variant-calling")
    assert "  samples: list of objects, each with name (text, required), reads (path to a\n" in out


@pytest.mark.parametrize("workflow", WORKFLOWS)
def test_show_fits_80_columns_and_never_breaks_a_word(cli, registry_root, workflow):
    from snakegate.registry.workflows import Registry

    code, out, _ = cli("--registry", registry_root, "show", workflow)
    assert code == 0
    words = set(out.split())
    wf = Registry.load(registry_root).get(workflow)
    texts = [wf.manifest.description] + [p.get("description", "") for p in wf.schema["properties"].values()]
    for text in texts:
        for word in text.split():
            assert word in words, word  # every word of every description arrives whole
    for line in out.splitlines():
        assert len(line.rstrip().rsplit(" ", 1)[0]) < 80, line  # only a last, unbreakable word may overflow


@pytest.mark.parametrize("flag", ["-n", "--dry-run", "--dryrun"])
def test_run_dry_run_points_to_validate_and_runs_nothing(cli, registry_root, tmp_path, monkeypatch, flag):
    monkeypatch.setenv("SNAKEGATE_RUNS", str(tmp_path / "runs"))
    code, out, err = cli("--registry", registry_root, "run", "workflows/tabular-profile/examples/basic.yaml", flag)
    assert code == 2
    assert "snakegate run has no dry run: `snakegate validate workflows/tabular-profile/examples/basic.yaml`" in err
    assert not (tmp_path / "runs").exists()


def test_cores_all_is_taken_as_snakemake_takes_it(tmp_path):
    root = make_registry(tmp_path / "registry")
    before = run_names(root)
    proc = snakegate(root, "run", "workflows/tabular-profile/examples/basic.yaml", "--cores", "all")
    assert proc.returncode == 0, proc.stderr
    record = json.loads((new_run(root, before) / "run.json").read_text())
    assert record["status"] == "succeeded" and record["options"]["cores"] == "all"
    proc = snakegate(root, "run", "workflows/tabular-profile/examples/basic.yaml", "--cores", "many")
    assert proc.returncode == 2 and "expected a number of cores or `all` (got 'many')" in proc.stderr
