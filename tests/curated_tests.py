"""One real `snakegate test` of every curated workflow, made once per session and read by several modules.

The run is the console command over the checkout (`snakegate --registry <repo> test <every curated id>`) with
the plot probe on the path (tests/plot_probe/sitecustomize.py, which records every figure a workflow saves
and changes no byte of it). tests/workflows/test_plot_labels.py reads the figures; the `snakegate test`
tests of tests/contribute/ read what the command printed for tabular-profile's two test cases, which the
same run holds (they used to run `snakegate test tabular-profile` twice more for it).

`curated_test_run` is a session fixture (conftest.py imports it, so one value serves every module).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

import pytest

from registry_copies import REPO

PROBE = REPO / "tests" / "plot_probe"
CURATED = sorted(p.parent.name for p in (REPO / "workflows").glob("*/workflow.yaml"))


@dataclass(frozen=True)
class CuratedTestRun:
    """The command's exit code and output, and the probe's record of every figure saved (paths as written)."""

    returncode: int
    stdout: str
    stderr: str
    figures: tuple[dict, ...]

    @property
    def expected_returncode(self) -> int:
        """0 when every case ran; 1 when the command skipped a case (a workflow's declared tool is not
        installed here): a case that could not run proves nothing, so `snakegate test` never passes it."""
        return 1 if "skip  " in self.stdout else 0

    def cases(self, workflow: str) -> str:
        """What the command printed for `workflow`'s test cases: each case's status line and the lines under it."""
        out, keep = [], False
        for line in self.stdout.splitlines():
            if line[:6] in ("ok    ", "FAIL  ", "skip  "):
                keep = line[6:].split(":", 1)[0].split("/", 1)[0] == workflow
            elif not line.startswith(" "):
                keep = False
            if keep:
                out.append(line)
        return "\n".join(out) + "\n"


@pytest.fixture(scope="session")
def curated_test_run(tmp_path_factory) -> CuratedTestRun:
    probe = tmp_path_factory.mktemp("probe")
    path = os.pathsep.join([str(PROBE), *filter(None, [os.environ.get("PYTHONPATH")])])
    exe = shutil.which("snakegate")
    cmd = [exe] if exe else [sys.executable, "-m", "snakegate.cli"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNAKEGATE_")}
    proc = subprocess.run([*cmd, "--registry", str(REPO), "test", *CURATED], capture_output=True, text=True,
                          env={**env, "PYTHONPATH": path, "SNAKEGATE_PLOT_PROBE": str(probe)}, timeout=1500)
    figures = tuple(json.loads(p.read_text()) for p in sorted(probe.glob("*.json")))
    return CuratedTestRun(proc.returncode, proc.stdout, proc.stderr, figures)
