"""The registry's own Snakefile (what `snakegate new` writes) when plain `snakemake` is not the one installed
beside snakegate: it stops before any job and says which snakemake to run, never runs without the gate."""

from __future__ import annotations

import subprocess
import sys

# Snakemake itself, in a Python where `snakegate.entry` cannot be imported (as under a system or conda
# snakemake that has no snakegate, or an older one without the entry); everything else is real.
WITHOUT_ENTRY = """
import sys
sys.modules["snakegate.entry"] = None
from snakemake.cli import main
sys.argv = ["snakemake", *sys.argv[1:]]
main()
"""


def test_plain_snakemake_without_snakegate_stops_saying_which_snakemake_to_run(tmp_path, cli):
    root = tmp_path / "lab"
    code, _out, err = cli("new", root)
    assert code == 0, err
    (root / "run.yaml").write_text("workflow: tabular-profile\nparams: {}\n")
    proc = subprocess.run([sys.executable, "-c", WITHOUT_ENTRY, "--configfile", "run.yaml", "--cores", "1"],
                          cwd=root, capture_output=True, text=True, timeout=300)
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0, said
    assert f"the Python running snakemake ({sys.executable}) has no snakegate with its entry" in said
    assert "`python -m snakemake` with its python" in said and "pip install snakegate" in said
    assert "Traceback" not in said
    assert not (root / "runs").exists() and not (root / ".snakegate").exists()  # nothing ran, nothing recorded
