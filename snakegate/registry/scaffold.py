"""A new registry, made from the template the package ships (`snakegate new DIR`).

The template (snakegate/registry/template/) is the registry's files as they are written: `snakegate.toml`,
the `Snakefile` that includes the installed entry (snakegate.entry), a README, `.gitignore`, the CI file
`.github/workflows/registry.yml` and `profiles/slurm/`; a name starting with `dot-` is written with a dot
instead. `@SNAKEGATE_VERSION@` becomes the installed version, which the CI file pins. Then `workflows/`
(with the contribution guide) and `data/`; `with_examples` copies the curated workflows and their data
(snakegate.examples) in as well.

It writes only inside DIR, and only when DIR is new or empty: an existing registry is never overwritten.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from snakegate import __version__, examples
from snakegate.errors import UserError

TEMPLATE = Path(__file__).with_name("template")
VERSION_MARK = "@SNAKEGATE_VERSION@"
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".snakemake")
DATA_README = """\
# data/

Input files live here (`[paths] data_roots` in ../snakegate.toml): the gate refuses an input path outside
the data roots, symlinks resolved. Put large data elsewhere and add its folder to `data_roots`.
"""


def new_registry(target: Path, with_examples: bool = False) -> list[Path]:
    """Make a registry at `target`; the files written, sorted. Refuses a folder that holds anything."""
    target = Path(target)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise UserError(f"{target} already exists and is not an empty folder; snakegate new never writes over "
                        "files: name a new folder")
    written: list[Path] = []
    for source in _files(TEMPLATE):
        destination = target / _written_name(source.relative_to(TEMPLATE))
        text = source.read_text(encoding="utf-8").replace(VERSION_MARK, __version__)
        _write(destination, text)
        written.append(destination)
    guide = examples.WORKFLOWS / "CONTRIBUTING.md"
    _write(target / "workflows" / "CONTRIBUTING.md", guide.read_text(encoding="utf-8"))
    _write(target / "data" / "README.md", DATA_README)
    written += [target / "workflows" / "CONTRIBUTING.md", target / "data" / "README.md"]
    if with_examples:
        written += copy_examples(target)
    return sorted(written)


def copy_examples(target: Path) -> list[Path]:
    """The curated workflows into `target`/workflows/ and their demo data into `target`/data/examples/."""
    written = []
    for folder in sorted(p for p in examples.WORKFLOWS.iterdir() if (p / "workflow.yaml").is_file()):
        shutil.copytree(folder, target / "workflows" / folder.name, ignore=SKIP)
    shutil.copytree(examples.DATA, target / "data" / "examples", ignore=SKIP)
    for root in (target / "workflows", target / "data" / "examples"):
        written += [p for p in root.rglob("*") if p.is_file() and p.name != "CONTRIBUTING.md"]
    return written


def _files(root: Path) -> list[Path]:
    """Every file below `root`, sorted; symlinked folders followed (in a source checkout the template's
    profiles/ is a link to the repository's own, which a built wheel holds as plain files)."""
    out = []
    for folder, dirs, files in os.walk(root, followlinks=True):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", ".snakemake")]
        out += [Path(folder) / f for f in files if not f.endswith(".pyc")]
    return sorted(out)


def _written_name(relative: Path) -> Path:
    return Path(*("." + part[4:] if part.startswith("dot-") else part for part in relative.parts))


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "x", encoding="utf-8") as fh:  # "x": never over a file that appeared meanwhile
        fh.write(text)
