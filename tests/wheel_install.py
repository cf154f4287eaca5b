"""snakegate as a user gets it: a wheel built from this checkout, installed into a fresh virtual environment.

The checkout is copied first (its links to workflows/, data/examples/, profiles/ and the top-level
Snakefile followed, as a build from the checkout follows them), so building never writes into the checkout.
The environment sees the system's site-packages for the heavy dependencies (Snakemake, pandas, Textual: no
network needed); snakegate itself is installed into the environment from the wheel, without its
dependencies, and `Installed.where_snakegate()` says which snakegate a process there imports.

Imported by the test modules (tests/ is on sys.path under pytest's default import mode).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUILD_FILES = ("pyproject.toml", "README.md")
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", ".snakemake")


def build_wheel(work: Path) -> Path:
    """The wheel of this checkout, built in a copy of it under `work`."""
    source = work / "source"
    source.mkdir(parents=True)
    for name in BUILD_FILES:
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "snakegate", source / "snakegate", ignore=SKIP)  # links followed: their files
    out = work / "dist"
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(source)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = out.glob("snakegate-*.whl")
    return wheel


@dataclass
class Installed:
    venv: Path

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    @property
    def snakegate(self) -> str:
        return str(self.venv / "bin" / "snakegate")

    @property
    def site_packages(self) -> Path:
        out = subprocess.run([self.python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True, env=self.env())
        return Path(out.stdout.strip())

    def env(self, **extra: str) -> dict:
        """The user's environment with this one activated: no PYTHONPATH, no snakegate settings."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("SNAKEGATE_") and k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
        env["PATH"] = os.pathsep.join([str(self.venv / "bin"), env.get("PATH", "")])
        env["VIRTUAL_ENV"] = str(self.venv)
        env.update(extra)
        return env

    def run(self, argv: list[str], cwd: Path, timeout: float = 600, **extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(argv, cwd=cwd, env=self.env(**extra), capture_output=True, text=True, timeout=timeout)

    def where_snakegate(self, cwd: Path) -> Path:
        """The snakegate package a Python of this environment imports in `cwd` (the folder a Snakefile there
        puts first on sys.path)."""
        out = self.run([self.python, "-c", "import sys; sys.path.insert(0, ''); import snakegate.entry as e; "
                                           "print(e.__file__)"], cwd=cwd)
        assert out.returncode == 0, out.stderr
        return Path(out.stdout.strip()).parent.parent


def install(wheel: Path, venv: Path) -> Installed:
    """A fresh environment at `venv` holding the wheel (its dependencies from the system's site-packages)."""
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300)
    installed = Installed(venv)
    # --ignore-installed: a snakegate already in the system's site-packages (an editable checkout) must not
    # stand in for the wheel; --no-deps: the dependencies are the system's
    proc = installed.run([installed.python, "-m", "pip", "install", "--quiet", "--no-deps", "--ignore-installed",
                          str(wheel)], cwd=venv)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return installed
