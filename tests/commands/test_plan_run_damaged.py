"""A plan's run whose records were edited by someone who can write to the run folder — a step named like a path,
a reference whose step is markup, run.json's plan of the wrong kind, an output naming a file outside the run —
is still shown by runs, show-run, report, diff and export: never a traceback, the markup as text, and the file
outside the run never read.

A copy of the session's real plan run (tests/plan_runs.py) in a registry of its own, edited as an attacker would.
"""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from registry_copies import snakegate

MARKUP = "<script>alert(1)</script>"


@pytest.fixture
def damaged(plan_registry, plan_run, tmp_path):
    root = tmp_path / "registry"
    keep = plan_run.name
    shutil.copytree(plan_registry, root, symlinks=True,
                    ignore=lambda folder, names: [n for n in names if folder.endswith("/runs") and n != keep])
    run = root / "runs" / keep
    outside = tmp_path / "outside.txt"
    outside.write_text("not the run's\n")
    inv = json.loads((run / "invocation.json").read_text())
    steps = inv["invocation"]["steps"]
    steps["../../etc"] = steps["clean"]
    steps["bench"]["params"]["label_column"] = {"from": MARKUP, "output": "x"}
    (run / "invocation.json").write_text(json.dumps(inv))
    record = json.loads((run / "run.json").read_text())
    record["plan"] = {"label": 5, "steps": "not a mapping"}
    record["outputs"].append({"name": "bench.stolen", "step": "bench", "type": "text", "exists": True,
                              "path": f"runs/{keep}/../../../outside.txt"})
    (run / "run.json").write_text(json.dumps(record))
    return root, run, outside


def test_a_plan_record_edited_by_an_attacker_is_shown_never_a_traceback(damaged, tmp_path):
    root, run, _outside = damaged
    for args in (["runs"], ["show-run", run.name], ["diff", run.name, run.name],
                 ["report", run.name, "-o", tmp_path / "page.html"],
                 ["export", run.name, "--ro-crate", tmp_path / "crate"]):
        proc = snakegate(root, *args)  # never a traceback (the helper asserts it)
        assert proc.returncode == 0, (args, proc.stdout + proc.stderr)
    shown = snakegate(root, "show-run", run.name).stdout
    assert "  ../../etc" not in shown  # not a step name: never a step, never a path to read a workflow from
    html = (tmp_path / "page.html").read_text()
    assert MARKUP not in html and "&lt;script&gt;" in html


def test_an_output_naming_a_file_outside_its_run_is_never_read(damaged, tmp_path):
    root, run, outside = damaged
    digest = hashlib.sha256(outside.read_bytes()).hexdigest()
    diff = snakegate(root, "diff", run.name, run.name, "--json").stdout
    assert digest not in diff
    snakegate(root, "report", run.name, "-o", tmp_path / "page.html")
    html = (tmp_path / "page.html").read_text()
    assert digest not in html and "not the run" not in html
    stolen = html.split('id="output-bench.stolen"')[1].split("</div>\n  </div>")[0]
    assert "not present" in stolen
