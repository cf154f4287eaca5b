"""The plain-Snakemake entry to a registry, shipped inside the package: `SNAKEFILE` is its path.

A registry's own top-level `Snakefile` includes it in two lines (what `snakegate new` writes, with the
import wrapped so that a snakemake of another Python, one without snakegate, says which to run instead):

    from snakegate.entry import include_entry
    include_entry(workflow)

so `snakemake --configfile run.yaml` from the registry root runs through the gate of the installed
snakegate; `snakegate run` hands Snakemake this file itself (`--snakefile SNAKEFILE --directory <registry>`),
so no registry file can stand between a run and its gate.
Plain Python, no snakegate import: every cluster job reads it first.
"""

from __future__ import annotations

import os
from pathlib import Path

SNAKEFILE = str(Path(__file__).with_name("Snakefile"))


def include_entry(workflow) -> None:
    """Include the entry as a registry's main Snakefile would hold it: Snakemake's `include:` keeps the
    including file's default target, and the entry's own (`snakegate_all`) must be the one a run builds."""
    workflow.include(SNAKEFILE, overwrite_default_target=True)


def registry_root(workflow) -> str:
    """The registry a Snakemake process serves: the folder of the main Snakefile when that is a registry's
    own (it includes this entry), else Snakemake's working directory (this entry given as `--snakefile`)."""
    if _is_an_entry(str(workflow.main_snakefile)):
        return os.getcwd()
    return workflow.basedir


def _is_an_entry(path: str) -> bool:
    """Whether `path` is this entry, or the entry of another copy of snakegate: `snakegate run` from an
    installed snakegate hands Snakemake the installed entry, while `python -m snakemake` started in a source
    checkout imports the checkout's snakegate (the working directory comes first on sys.path), whose SNAKEFILE
    is another path to the same file."""
    real = os.path.realpath(path)
    if real == os.path.realpath(SNAKEFILE):
        return True
    folder = os.path.dirname(real)
    return (os.path.basename(real) == "Snakefile" and os.path.basename(folder) == "entry"
            and os.path.basename(os.path.dirname(folder)) == "snakegate"
            and os.path.isfile(os.path.join(folder, "__init__.py")))
