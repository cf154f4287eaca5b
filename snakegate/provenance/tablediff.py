"""What changed between two versions of a CSV/TSV table: columns added and removed, rows added, removed
and changed (with the changed cells), counted, and the first few shown.

Rows are matched by their content in order (difflib on whole rows), so a row dropped or inserted in the
middle is one removal or addition, not a cascade of changes; within a replaced block of equal length,
rows are paired in order and compared cell by cell over the columns both tables have. Reads the two
files with the csv module (delimiter from the suffix); writes nothing.
"""

from __future__ import annotations

import csv
import difflib
from pathlib import Path

EXAMPLES = 5            # changes kept for display; the counts cover all of them
MAX_ROWS = 20_000       # rows per table compared by content; beyond, the first MAX_ROWS are
CELL_CHARS = 60


def _read(path: Path) -> tuple[list[str], list[tuple[str, ...]], bool]:
    """(header, rows, cut): at most MAX_ROWS rows; `cut` when the file holds more."""
    delimiter = "\t" if Path(path).suffix.lower() in (".tsv", ".tab") else ","
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        reader = csv.reader(fh, delimiter=delimiter)
        header = next(reader, [])
        rows, cut = [], False
        for row in reader:
            if len(rows) >= MAX_ROWS:
                cut = True
                break
            rows.append(tuple(row))
    return header, rows, cut


def _cell(text: str) -> str:
    return text if len(text) <= CELL_CHARS else text[:CELL_CHARS - 1] + "…"


def compare_tables(path_a: Path, path_b: Path) -> dict | None:
    """{columns_added, columns_removed, rows: [a, b], rows_added, rows_removed, rows_changed, cells_changed,
    examples: [...], cut}; None when either file cannot be read as a table. Row numbers count data rows
    from 1 (the header is line 1 of the file, row 1 is line 2)."""
    try:
        head_a, rows_a, cut_a = _read(path_a)
        head_b, rows_b, cut_b = _read(path_b)
    except (OSError, csv.Error):
        return None
    shared = [c for c in head_a if c in head_b]
    idx_a = {c: i for i, c in enumerate(head_a)}
    idx_b = {c: i for i, c in enumerate(head_b)}

    def view(row, idx):  # a row over the shared columns, so an added column does not change every row
        return tuple(row[idx[c]] if idx[c] < len(row) else "" for c in shared)

    seq_a = [view(r, idx_a) for r in rows_a]
    seq_b = [view(r, idx_b) for r in rows_b]
    out = {"columns_added": [c for c in head_b if c not in idx_a],
           "columns_removed": [c for c in head_a if c not in idx_b],
           "rows": [len(rows_a), len(rows_b)], "rows_added": 0, "rows_removed": 0, "rows_changed": 0,
           "cells_changed": 0, "examples": [], "cut": cut_a or cut_b}
    examples = out["examples"]

    def keep(example):
        if len(examples) < EXAMPLES:
            examples.append(example)

    matcher = difflib.SequenceMatcher(None, seq_a, seq_b, autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            continue
        paired = min(a1 - a0, b1 - b0) if op == "replace" else 0
        for k in range(paired):
            ra, rb = seq_a[a0 + k], seq_b[b0 + k]
            cells = [{"column": c, "a": _cell(x), "b": _cell(y)} for c, x, y in zip(shared, ra, rb) if x != y]
            out["rows_changed"] += 1
            out["cells_changed"] += len(cells)
            keep({"change": "changed", "row_a": a0 + k + 1, "row_b": b0 + k + 1, "cells": cells})
        for i in range(a0 + paired, a1):
            out["rows_removed"] += 1
            keep({"change": "removed", "row_a": i + 1, "values": [_cell(v) for v in rows_a[i]]})
        for j in range(b0 + paired, b1):
            out["rows_added"] += 1
            keep({"change": "added", "row_b": j + 1, "values": [_cell(v) for v in rows_b[j]]})
    return out


def summary(change: dict) -> str:
    """'138 -> 150 rows: 12 added, 0 removed, 3 changed (5 cells); columns added: x'."""
    a, b = change["rows"]
    cells = change["cells_changed"]
    parts = [f"{a} -> {b} rows: {change['rows_added']} added, {change['rows_removed']} removed, "
             f"{change['rows_changed']} changed ({cells} cell{'s' if cells != 1 else ''})"]
    if change["columns_added"]:
        parts.append("columns added: " + ", ".join(change["columns_added"]))
    if change["columns_removed"]:
        parts.append("columns removed: " + ", ".join(change["columns_removed"]))
    if change.get("cut"):
        parts.append(f"only the first {MAX_ROWS:,} rows of each compared")
    return "; ".join(parts)


def example_text(example: dict) -> str:
    """One change as a line: 'row 4: body_mass_g 4350 -> 4200.5, sex "" -> female' / '+ row 9: a, b, c'."""
    if example["change"] == "changed":
        where = f"row {example['row_a']}" if example["row_a"] == example["row_b"] else \
            f"row {example['row_a']} -> {example['row_b']}"
        cells = ", ".join(f"{c['column']} {_shown(c['a'])} -> {_shown(c['b'])}" for c in example["cells"])
        return f"~ {where}: {cells}"
    sign, row = ("+", example["row_b"]) if example["change"] == "added" else ("-", example["row_a"])
    return f"{sign} row {row}: " + ", ".join(_shown(v) for v in example["values"])


def _shown(value: str) -> str:
    return value if value.strip() and value == value.strip() else repr(value).replace("'", '"')
