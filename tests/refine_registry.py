"""A registry with pump-probe and a contaminated run to refine, for the refinement tests at the chat, the TUI and
MCP (tests/agent/test_refine_chat.py, tests/tui/test_refine_panel.py, tests/agent/mcp/test_mcp_refine.py).

`contaminated(tmp_path_factory)` makes, once per test process, a git registry holding pump-probe, its test
frames under data/pp/ and one real run whose background ROI sits on the signal's wing (verdict: the check
`background_uniform` fails); n_bootstrap 100 keeps every run short. Tests add runs to it and look only at the
runs they made. ROIs: one row further is still contaminated, CLEAR passes, FAR is further away still.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml
from registry_copies import REPO, make_registry, run_names  # noqa: F401 - re-exported for the tests

ON_THE_WING = [16, 24, 8, 24]      # the parent's ROI: contaminated
STILL_ON_IT = [17, 25, 8, 24]      # still contaminated
CLEAR = [20, 28, 8, 24]            # passes background_uniform
FAR = [24, 32, 8, 24]
PARAMS = {"data_file": "data/pp/frames.npz", "signal_roi": [8, 16, 12, 20], "background_roi": ON_THE_WING,
          "n_bootstrap": 100, "seed": 0}

_made: dict[str, tuple[Path, str]] = {}


def contaminated(tmp_path_factory) -> tuple[Path, str]:
    """(registry root, the contaminated parent run's id), made once per test process."""
    if "it" not in _made:
        from snakegate.registry.settings import load_settings
        from snakegate.registry.workflows import Registry
        from snakegate.run import runner

        root = make_registry(tmp_path_factory.mktemp("refine-doors") / "registry", with_git=True)
        shutil.copytree(REPO / "workflows" / "pump-probe", root / "workflows" / "pump-probe",
                        ignore=shutil.ignore_patterns("__pycache__", ".snakemake"))
        (root / "data" / "pp").mkdir(parents=True)
        shutil.copy(REPO / "workflows" / "pump-probe" / "test" / "data" / "frames.npz", root / "data" / "pp")
        (root / "contaminated.yaml").write_text(yaml.safe_dump({"workflow": "pump-probe", "params": PARAMS}))
        outcome = runner.execute(Registry.load(root), load_settings(root), {"workflow": "pump-probe",
                                                                              "params": PARAMS},
                                 runner.RunOptions(cores=1))
        checks = {c["name"]: c["status"] for c in outcome.record["verdict"]["checks"]}
        assert checks["background_uniform"] == "fail", outcome.record.get("verdict")
        _made["it"] = (root, outcome.run_id)
    return _made["it"]


def run_json(root: Path, name: str) -> dict:
    return json.loads((root / "runs" / name / "run.json").read_text())


def refinement_records(root: Path) -> list[dict]:
    folder = root / ".snakegate" / "refinements"
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []


def roi_of(root: Path, name: str):
    return run_json(root, name)["fork_changes"].get("background_roi")
