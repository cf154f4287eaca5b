"""The fault matrix script (bench/fault_matrix.py) runs its scenarios for real and every row is truthful.

The quick set: the front end killed with kill -9 mid-run, the run folder
deleted mid-run, and two runs of one config at once. The full matrix (every
fault of issue 12) is `python bench/fault_matrix.py`; its table is in the README.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_quick_fault_matrix_records_every_fault_truthfully():
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "fault_matrix.py"), "--quick", "--json"],
                          capture_output=True, text=True, timeout=900)
    rows = json.loads(proc.stdout)
    assert proc.returncode == 0, rows
    got = sorted((r["scenario"], r["status"]) for r in rows)
    assert got == [("front end killed (kill -9)", "succeeded"),
                   ("run folder deleted during the run", "failed"),
                   ("two runs of one config at once", "succeeded"),
                   ("two runs of one config at once", "succeeded")]
    for row in rows:
        assert row["truthful"], row
        assert row["recorded"] == row["run"] and row["run"] >= 1, row
    deleted = next(r for r in rows if r["scenario"].startswith("run folder deleted"))
    assert "deleted or emptied" in deleted["detail"]
