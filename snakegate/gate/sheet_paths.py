"""Sample sheets with relative paths, wherever Snakemake does not work in the registry root.

The gate resolves a sample sheet's path cells against the registry root, and `snakegate run` runs
Snakemake there, so `data/reads/a.fastq` in a sheet means the same file to both. `snakegate test`,
the gate's DAG step and `snakegate check` run Snakemake in a temporary folder instead, where the
same cell names nothing. `with_absolute_paths()` gives those callers params whose sheet is a copy
with every relative path cell resolved exactly as the gate resolved it (the registry root, `..`
and symlinks); every other cell, the header and the column order stay as they were. A sheet without
relative path cells is handed over unchanged.

It writes only copies, named by their content, into a folder the caller gives or into one private
folder per process (removed at exit); it never changes the gated sheet or the params it is given.
"""

from __future__ import annotations

import atexit
import copy
import csv
import hashlib
import io
import shutil
import tempfile
from pathlib import Path

from snakegate.contract import artifacts
from snakegate.contract.sheets import path_columns, read_rows, row_schema

_private: Path | None = None


def _process_folder() -> Path:
    """One folder per process (mode 0700), so a copy keeps its path and a cached DAG stays valid."""
    global _private
    if _private is None or not _private.is_dir():
        _private = Path(tempfile.mkdtemp(prefix="snakegate-sheets-"))
        atexit.register(shutil.rmtree, _private, True)
    return _private


def absolute_text(text: str, delimiter: str, columns: set[str], registry_root: Path) -> str | None:
    """The sheet's text with its relative path cells made absolute, or None when none is relative (pure
    apart from resolving symlinks, as the gate does)."""
    header, rows = read_rows(text, delimiter)
    changed = False
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerow(header)
    for _line, cells in rows:
        record = []
        for column in header:
            cell = cells.get(column, "")
            if column in columns and cell.strip() and not Path(cell.strip()).expanduser().is_absolute():
                cell = str((registry_root / Path(cell.strip()).expanduser()).resolve())
                changed = True
            record.append(cell)
        writer.writerow(record)
    return out.getvalue() if changed else None


def with_absolute_paths(schema: dict, params: dict, registry_root: Path, folder: Path | None = None) -> dict:
    """`params` with each top-level sample-sheet param that has relative path cells pointing at an absolute
    copy (see the module docstring). Params that passed the gate go in; a sheet that cannot be read is left
    as it is (Snakemake then says what is missing)."""
    out = params
    for name, sub in ((schema or {}).get("properties") or {}).items():
        sheet, value = row_schema(sub), params.get(name)
        if sheet is None or not isinstance(value, str) or not path_columns(sheet):
            continue
        type_name = sub.get("x-artifact")
        try:
            text = Path(value).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        new = absolute_text(text, artifacts.delimiter(type_name), set(path_columns(sheet)), registry_root)
        if new is None:
            continue
        target_dir = folder or _process_folder()
        target = target_dir / f"{hashlib.sha256(new.encode()).hexdigest()[:16]}-{Path(value).name}"
        if not target.is_file():
            target_dir.mkdir(parents=True, exist_ok=True)
            target.write_text(new, encoding="utf-8")
        if out is params:
            out = copy.deepcopy(params)
        out[name] = str(target)
    return out
