"""`snakegate runs` lists from run.json and only glances at each run's prov.json (its kind, size, first and
last bytes) instead of parsing it: a listing of many 10,000-job runs reads no PROV document (issue 30). A
truncated prov.json is still listed as unreadable; one damaged inside is found by show-run, which reads it
whole. Real run folders in a throw-away registry, the console command in a fresh process.
"""

from __future__ import annotations

import json

from registry_copies import make_registry, snakegate

DAMAGED_INSIDE, TRUNCATED, WHOLE = ("20261126T100000Z-aaaaaaaa", "20261126T100001Z-bbbbbbbb",
                                    "20261126T100002Z-cccccccc")


def _registry(tmp_path):
    root = make_registry(tmp_path / "registry")
    provs = {DAMAGED_INSIDE: '{"entity": {"x": [1, 2 nonsense ]}}', TRUNCATED: '{"entity": {"x": [1,',
             WHOLE: '{"entity": {}}'}
    for name, prov in provs.items():
        folder = root / "runs" / name
        folder.mkdir(parents=True)
        (folder / "run.json").write_text(json.dumps({
            "run_id": name, "workflow": "tabular-profile", "version": "1.0.0", "status": "succeeded",
            "started": "2026-11-26T10:00:00+00:00", "ended": "2026-11-26T10:00:05+00:00", "duration_s": 5.0}))
        (folder / "prov.json").write_text(prov)
    return root


def test_runs_lists_a_truncated_record_as_unreadable_and_show_run_finds_one_damaged_inside(tmp_path):
    root = _registry(tmp_path)
    listed = snakegate(root, "runs")
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[0]: line for line in listed.stdout.splitlines() if line.startswith("2026")}
    assert "unreadable" in rows[TRUNCATED] and "prov.json is not a whole JSON object" in listed.stdout
    assert "succeeded" in rows[WHOLE] and "succeeded" in rows[DAMAGED_INSIDE]  # listed from run.json
    shown = snakegate(root, "show-run", DAMAGED_INSIDE)
    assert shown.returncode != 0 and "prov.json is not valid JSON" in shown.stdout + shown.stderr
