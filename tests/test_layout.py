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
              "snakegate": "templates/report.html.j2"}
    for package, name in wanted.items():
        assert (REPO / package.replace(".", "/") / name).is_file()
        assert any(fnmatch.fnmatch(name, pattern) for pattern in data.get(package, [])), (package, name)
