"""One real run shared read-only by the CLI-at-80-columns tests (issue 29 §3): `snakegate run` of
tabular-profile's basic example in a throw-away registry, the console command in a fresh process with
COLUMNS=80, and a fork of it with a list given as comma-separated text. A test module imports the fixtures it
reads.
"""

from __future__ import annotations

import pytest

from registry_copies import copy_registry, new_run, run_names, snakegate


@pytest.fixture(scope="session")
def profiled(tmp_path_factory):
    """(process, run folder) of `snakegate run` of tabular-profile's basic example."""
    root = copy_registry(tmp_path_factory.mktemp("cli80") / "registry")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COLUMNS", "80")
        proc = snakegate(root, "run", "workflows/tabular-profile/examples/basic.yaml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (run_dir,) = (root / "runs").iterdir()
    return proc, run_dir


@pytest.fixture(scope="session")
def forked_columns(profiled):
    """(process, run folder) of `snakegate fork <profiled> --set columns=species,sex`."""
    _, parent = profiled
    root = parent.parent.parent
    before = run_names(root)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COLUMNS", "80")
        proc = snakegate(root, "fork", parent.name, "--set", "columns=species,sex")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc, new_run(root, before)
