"""Real runs whose verdicts the views show (issue 25 §1's last point), made in one throw-away registry holding the
tiny `scored` workflow (tests/verdict_runs.py: three checks, a second a run) and pump-probe with its example
data:

- passing_run: scored, score 0.75 -> every check passes;
- failing_run: scored, score 0.3 under floor 0.4 -> `score` fails;
- unknown_run: scored whose last job fails -> `summarized` cannot be measured (the run failed);
- forked_run: `snakegate fork passing_run --set score=0.2` -> `score` fails, the rest as the parent's;
- refined_run: `snakegate refine failing_run --try score=0.6 --budget 1 --until score --yes` -> the one point
  passes (run.json `refinement`);
- contaminated_run: pump-probe's contaminated-background example with n_bootstrap 100 -> both background
  checks fail, diagnostics.json says `contaminated`;
- tampered_run: scored, passing, whose invocation.json is edited afterwards (params that never ran).

Session-scoped and imported into tests/conftest.py, so each run is made once per session whichever modules read
it (a session fixture imported into each test module would be made again for every importing module); each is
made only when a test first asks for it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from registry_copies import IGNORE, REPO, new_run, run_names, snakegate
from verdict_runs import scored_config, scored_registry

CONTAMINATED = REPO / "workflows" / "pump-probe" / "examples" / "contaminated-background.yaml"


def start(root: Path, *args, code: int = 0) -> Path:
    """`snakegate ARGS` from the registry root, which must exit with `code` and make one run folder."""
    before = run_names(root)
    proc = snakegate(root, *args)
    assert proc.returncode == code, proc.stdout + proc.stderr
    return new_run(root, before)


@pytest.fixture(scope="session")
def judged_registry(tmp_path_factory) -> Path:
    root = scored_registry(tmp_path_factory.mktemp("verdictviews") / "registry")
    shutil.copytree(REPO / "workflows" / "pump-probe", root / "workflows" / "pump-probe", ignore=IGNORE)
    shutil.copytree(REPO / "data" / "examples" / "pump-probe", root / "data" / "examples" / "pump-probe")
    return root


@pytest.fixture(scope="session")
def passing_run(judged_registry) -> Path:
    return start(judged_registry, "run", scored_config(judged_registry / "pass.yaml", score=0.75))


@pytest.fixture(scope="session")
def failing_run(judged_registry) -> Path:
    return start(judged_registry, "run", scored_config(judged_registry / "fail.yaml", score=0.3, floor=0.4))


@pytest.fixture(scope="session")
def unknown_run(judged_registry) -> Path:
    return start(judged_registry, "run", scored_config(judged_registry / "broken.yaml", fail=True), code=1)


@pytest.fixture(scope="session")
def forked_run(judged_registry, passing_run) -> Path:
    return start(judged_registry, "fork", passing_run.name, "--set", "score=0.2")


@pytest.fixture(scope="session")
def refined_run(judged_registry, failing_run) -> Path:
    return start(judged_registry, "refine", failing_run.name, "--try", "score=0.6", "--budget", "1", "--until",
                 "score", "--yes")


@pytest.fixture(scope="session")
def contaminated_run(judged_registry) -> Path:
    config = judged_registry / "contaminated.yaml"
    config.write_text(CONTAMINATED.read_text() + "  n_bootstrap: 100\n")
    return start(judged_registry, "run", config)


@pytest.fixture(scope="session")
def tampered_run(judged_registry) -> Path:
    """A passing run whose invocation.json says afterwards that it ran score 0.99 (it ran 0.75)."""
    run_dir = start(judged_registry, "run", scored_config(judged_registry / "tamper.yaml", score=0.75, sleep=0.01))
    path = run_dir / "invocation.json"
    recorded = json.loads(path.read_text())
    recorded["invocation"]["params"]["score"] = 0.99
    path.write_text(json.dumps(recorded, indent=2))
    return run_dir


def record_of(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text())
