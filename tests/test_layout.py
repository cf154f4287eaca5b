"""The layout: every subpackage (provenance, agent, tui, schemas among them) imports from a source checkout.

Snakemake puts the registry root first on sys.path, so with a regular (non-editable) install the
top-level Snakefile imports the checkout's snakegate/ folder, not the installed package.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_mapped_subpackages_import_from_the_source_checkout_without_an_install():
    # -S: no site-packages, so no installed or editable snakegate can answer; only the checkout on sys.path
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "import snakegate.provenance.runstore, snakegate.agent, snakegate.tui, snakegate.schemas; "
            "print(snakegate.provenance.runstore.__file__)")
    proc = subprocess.run([sys.executable, "-S", "-c", code, str(REPO)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()) == REPO / "snakegate" / "provenance" / "runstore.py"



def test_the_install_ships_the_data_files_the_chat_and_the_gate_read():
    """A plain `pip install .` ships only .py files unless package-data names the rest: the chat's
    layout (tui/chat.tcss) and the meta-schemas must be named, or the installed command breaks."""
    import fnmatch
    from setuptools.config.pyprojecttoml import read_configuration
    tool = read_configuration(REPO / "pyproject.toml")["tool"]["setuptools"]
    data = tool["package-data"]
    wanted = {"snakegate.tui": "chat.tcss", "snakegate.schemas": "contract.schema.json",
              "snakegate.views": "templates/report.html.j2"}
    for package, name in wanted.items():
        assert (REPO / package.replace(".", "/") / name).is_file()
        assert any(fnmatch.fnmatch(name, pattern) for pattern in data.get(package, [])), (package, name)


def test_every_data_file_of_the_package_is_named_by_package_data_so_a_wheel_ships_it():
    """Everything under snakegate/ that is not Python (the entry Snakefile, composer.smk, the schemas, the
    Turtle vocabulary, the registry template, the curated workflows and their data behind the package's
    links) must match a package-data pattern of the package that holds it, or a wheel leaves it out
    (tests/registry/test_own_registry.py builds one and uses it)."""
    import fnmatch
    import functools
    import glob
    import os
    from setuptools.config.pyprojecttoml import read_configuration
    tool = read_configuration(REPO / "pyproject.toml")["tool"]["setuptools"]
    data, excluded = tool["package-data"], tool.get("exclude-package-data", {}).get("*", [])

    @functools.cache
    def shipped(owner: Path) -> set[str]:  # as setuptools finds package data: a recursive glob per pattern
        package = ".".join(owner.relative_to(REPO).parts)
        return {os.path.normpath(f) for pattern in data.get(package, [])
                for f in glob.glob(os.path.join(owner, pattern), recursive=True)}

    missing = []
    for folder, dirs, files in os.walk(REPO / "snakegate", followlinks=True):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", ".snakemake")]
        for name in files:
            path = Path(folder) / name
            in_package = (path.parent / "__init__.py").is_file()  # a module, not a workflow's script
            if (name.endswith(".py") and in_package) or any(fnmatch.fnmatch(str(path), p) for p in excluded):
                continue
            owner = next(p for p in [path.parent, *path.parents] if (p / "__init__.py").is_file())
            if os.path.normpath(path) not in shipped(owner):
                missing.append(path.relative_to(REPO).as_posix())
    assert not missing, missing
    assert (REPO / "snakegate" / "examples" / "workflows" / "tabular-profile" / "workflow.yaml").is_file()


# ---- the layering: rooms import downward only, no room has an import cycle (import-linter) --------

def _lint_imports(package_parent: Path) -> subprocess.CompletedProcess:
    """import-linter's `lint-imports` over the `snakegate` package found first on sys.path, with this
    repository's contracts (pyproject.toml [tool.importlinter])."""
    import os
    import shutil

    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    return subprocess.run([exe, "--config", str(REPO / "pyproject.toml"), "--no-cache"], cwd=package_parent,
                          env=env, capture_output=True, text=True, timeout=300)


def test_rooms_import_downward_only_and_no_room_has_an_import_cycle():
    proc = _lint_imports(REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Contracts: 2 kept, 0 broken." in proc.stdout


def test_an_upward_import_or_a_cycle_inside_a_room_breaks_the_layering_check(tmp_path):
    import shutil

    upward = tmp_path / "upward"
    shutil.copytree(REPO / "snakegate", upward / "snakegate", ignore=shutil.ignore_patterns("__pycache__"))
    with open(upward / "snakegate" / "gate" / "tools.py", "a") as fh:
        fh.write("\nfrom snakegate.run import runner  # noqa: E402,F401 - the gate reaching up into a run\n")
    proc = _lint_imports(upward)
    assert proc.returncode != 0
    assert "Rooms import downward only BROKEN" in proc.stdout
    assert "snakegate.gate.tools -> snakegate.run.runner" in proc.stdout

    cycle = tmp_path / "cycle"
    shutil.copytree(REPO / "snakegate", cycle / "snakegate", ignore=shutil.ignore_patterns("__pycache__"))
    with open(cycle / "snakegate" / "run" / "pinning.py", "a") as fh:
        fh.write("\nfrom snakegate.run import runner  # noqa: E402,F401 - pinning and runner, each importing the other\n")
    proc = _lint_imports(cycle)
    assert proc.returncode != 0
    assert "No import cycle inside a room BROKEN" in proc.stdout


# ---- a run recorded before the move (tests/fixtures/run-before-layout: made by commit c417e8a) ----

BEFORE = REPO / "tests" / "fixtures" / "run-before-layout"
BEFORE_ROOT = Path("/tmp/snakegate-premove/registry")  # where that run was made: its config names this path
BEFORE_RUN = "20261126T153503Z-dcf037df"


def test_a_run_recorded_before_the_layout_move_still_verifies_reruns_and_forks():
    """Run records hold no module names, so what the move could break is reading them: the run folder
    the code before the move wrote (tabular-profile, basic.yaml) is put back where it was made, in a
    registry of today's code, and shows, verifies, reruns to identical outputs and forks."""
    import fcntl
    import shutil

    from registry_copies import make_registry, snakegate

    BEFORE_ROOT.parent.mkdir(parents=True, exist_ok=True)
    with open(BEFORE_ROOT.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one test process at a time owns the fixed path
        if BEFORE_ROOT.exists():
            subprocess.run(["chmod", "-R", "u+w", str(BEFORE_ROOT)], check=False)
            shutil.rmtree(BEFORE_ROOT)
        make_registry(BEFORE_ROOT, with_git=True)
        shutil.copy(BEFORE / "data" / "tabular-penguins.csv", BEFORE_ROOT / "data" / "examples" / "tabular-penguins.csv")
        shutil.copytree(BEFORE / BEFORE_RUN, BEFORE_ROOT / "runs" / BEFORE_RUN)
        try:
            shown = snakegate(BEFORE_ROOT, "show-run", BEFORE_RUN)
            assert shown.returncode == 0, shown.stderr
            assert "succeeded" in shown.stdout
            verified = snakegate(BEFORE_ROOT, "verify", BEFORE_RUN)
            assert verified.returncode == 0, verified.stdout + verified.stderr
            rerun = snakegate(BEFORE_ROOT, "rerun", BEFORE_RUN)
            assert rerun.returncode == 0, rerun.stdout + rerun.stderr
            assert "differs" not in rerun.stdout and "identical" in rerun.stdout
            fork = snakegate(BEFORE_ROOT, "fork", BEFORE_RUN, "--set", "missing_strategy=fill_mean")
            assert fork.returncode == 0, fork.stdout + fork.stderr
            assert "succeeded" in fork.stdout
        finally:
            subprocess.run(["chmod", "-R", "u+w", str(BEFORE_ROOT)], check=False)
            shutil.rmtree(BEFORE_ROOT, ignore_errors=True)
