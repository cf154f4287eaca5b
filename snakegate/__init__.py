"""snakegate: talk freely, execute strictly. Core package: registry, contract, gate, runner, CLI."""

import os as _os

__version__ = "0.1.0"

# DESIGN.md keeps provenance/, agent/, tui/ and schemas/ beside snakegate/ and pyproject maps them to
# snakegate.provenance etc. An installed package has them inside. But Snakemake puts the registry root
# (the top-level Snakefile's folder) first on sys.path, and so does `python -m` run from there: then
# this source folder is imported instead of the installed package, and the mapped subpackages must be
# found beside it.
_here = _os.path.dirname(_os.path.abspath(__file__))
_source_root = _os.path.dirname(_here)
if not _os.path.isdir(_os.path.join(_here, "provenance")) and _os.path.isfile(
        _os.path.join(_source_root, "provenance", "__init__.py")):
    __path__.append(_source_root)
