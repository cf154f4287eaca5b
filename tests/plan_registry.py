"""A throw-away registry for the plan doors: tabular-profile and classifier-benchmark (from the checkout,
without its test cases), the demo tables, and any extra workflows; optionally a git repository.

Imported by the tests that build, gate and run plans through a door (chat, guided dialogue, MCP, TUI,
init --plan); tests/ is on sys.path under pytest's default import mode.
"""

from __future__ import annotations

from pathlib import Path

from registry_copies import REPO, make_registry

PENGUINS = "data/examples/tabular-penguins.csv"
SIZE_COLUMNS = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "sex"]
CLEAN = {"name": "clean", "workflow": "tabular-profile",
         "params": {"dataset_file": PENGUINS, "columns": SIZE_COLUMNS}}
BENCH = {"name": "bench", "workflow": "classifier-benchmark",
         "params": {"dataset": {"from": "clean", "output": "cleaned"}, "label_column": "sex"}}


def workflow_files(wf_id: str) -> dict[str, str]:
    """A checkout workflow's authored files (its test cases left out: they hold images), as text."""
    folder = REPO / "workflows" / wf_id
    return {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*"))
            if p.is_file() and "test" not in p.relative_to(folder).parts[:1] and "__pycache__" not in p.parts}


def make_plan_registry(root: Path, extra: dict[str, dict] | None = None, *, with_git: bool = False) -> Path:
    """tabular-profile + classifier-benchmark (+ `extra`) and the demo tables in `root`."""
    return make_registry(root, {"classifier-benchmark": workflow_files("classifier-benchmark"), **(extra or {})},
                         with_git=with_git)
