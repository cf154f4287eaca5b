"""What a preflight may know of a table beyond its header: row count, a profile of each column, and, for a
small table, its cells; read in one bounded streaming pass, as pandas.read_csv would read the file.

`table_facts(path, delimiter, encoding="utf-8")` returns plain data:

- `rows`: data rows under the header (blank and whitespace-only lines skipped, as pandas skips them);
- `profile`: {column: {kind, missing, distinct, distinct_capped, values, min, max}}, where `kind` is the
  dtype family pandas gives the column with its default `read_csv` settings: `numeric` (int, uint or float;
  `inf` too), `boolean` (only true and false, in any case, and no missing cell), `text` (anything else,
  including booleans with a gap and integers beyond 64 bits, which pandas keeps as objects) or `empty`
  (every cell missing: pandas reads float NaN). `missing` counts pandas' default NA strings (empty, NA,
  NaN, null, None, N/A, ...; exact, case-sensitive). `distinct` counts distinct non-missing values as pandas
  compares them (numbers by value: 1 and 1.0 are one value) up to DISTINCT_MAX (`distinct_capped` says
  there are more); `values` lists (value, count) pairs, most frequent first, when there are at most
  VALUES_MAX distinct values (else None); `min`/`max` for a numeric column (else None);
- `cells`: the data rows as tuples of typed values (numbers for a numeric column, True/False for a boolean
  one, the text as written otherwise, None where pandas sees a missing value; a short row padded with
  None), only for a table of at most CELLS_MAX_BYTES and CELLS_MAX_ROWS;
- `malformed`: a sentence when pandas could not read the file at all (a row with more fields than the
  header, text that is not UTF-8), else None;
- `profile_absent` / `cells_absent`: why `profile` / `cells` is None (too large, a field too long to read
  here, malformed), else None.

Why the bounds: the gate reads the table on every validation (the chat validates at each answer), so the
pass is bounded by PROFILE_MAX_BYTES and PROFILE_MAX_ROWS and never holds more than a bounded set per
column. Cells are handed over only for small tables (a few thousand rows: what a researcher's CSV usually
is), so a preflight can replicate a script's exact row logic (rows dropped for a missing value, per class)
within the sandbox's time and memory; above that it has the profile, and above the profile's bound only the
header, and must then let the run-time check speak.

Pure over the file's bytes: reads the file once, writes nothing, never imports pandas (the differential
test in tests/contract/test_table_profile.py holds these rules to pandas' own).
"""

from __future__ import annotations

import codecs
import csv
import re
from collections import Counter
from pathlib import Path
from typing import Any

PROFILE_MAX_BYTES = 8 * 1024 * 1024
PROFILE_MAX_ROWS = 250_000
CELLS_MAX_BYTES = 1024 * 1024
CELLS_MAX_ROWS = 20_000
DISTINCT_MAX = 1000
VALUES_MAX = 50

# pandas' default na_values (pandas._libs.parsers.STR_NA_VALUES): compared exactly, never stripped.
NA_STRINGS = frozenset({
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A",
    "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
})
# pandas' C parser: spaces and tabs around a number are allowed; no thousands separators, no hex, no '_'.
_INT = re.compile(r"[ \t]*[+-]?[0-9]+[ \t]*")
_FLOAT = re.compile(r"[ \t]*[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf|infinity))[ \t]*")
INT64_MIN, INT64_MAX, UINT64_MAX = -(2 ** 63), 2 ** 63 - 1, 2 ** 64 - 1

_MISSING, _TRUE, _FALSE, _INTEGER, _REAL, _TEXT = range(6)


def _classify(cell: str) -> tuple[int, Any]:
    """(class, value) of one raw cell as pandas' parser would see it alone."""
    if cell in NA_STRINGS:
        return _MISSING, None
    folded = cell.lower()  # pandas' booleans: true/false in any case, no spaces
    if folded == "true":
        return _TRUE, True
    if folded == "false":
        return _FALSE, False
    if _INT.fullmatch(cell):
        return _INTEGER, int(cell)
    if _FLOAT.fullmatch(cell):
        return _REAL, float(cell.strip(" \t"))
    return _TEXT, cell


def _column_profile(counts: Counter) -> tuple[dict, str]:
    """The profile of one column from the counts of its raw cells (missing ones included), and what its cells
    hold (see `typed`)."""
    missing = 0
    classes: set[int] = set()
    parsed: dict[str, Any] = {}
    huge = neg_huge = uint_range = negative = False
    for cell in counts:
        kind, value = _classify(cell)
        if kind == _MISSING:
            missing += counts[cell]
            continue
        classes.add(kind)
        parsed[cell] = value
        if kind == _INTEGER:
            huge |= value > UINT64_MAX
            uint_range |= INT64_MAX < value <= UINT64_MAX
            neg_huge |= value < INT64_MIN
            negative |= value < 0
    kind = _kind(classes, missing, huge or (neg_huge and _REAL not in classes)
                 or (uint_range and negative and _REAL not in classes))
    if kind == "numeric" and classes == {_INTEGER} and not missing:
        holds = "integer"
    elif classes and classes <= {_TRUE, _FALSE}:
        holds = "boolean"  # with a gap too: pandas then holds True/False objects beside NaN
    else:
        holds = kind
    merged: dict[Any, int] = {}
    for cell in parsed:
        key = typed(cell, holds)
        merged[key] = merged.get(key, 0) + counts[cell]
    numbers = [float(v) for v in merged] if kind == "numeric" else []
    return {"kind": kind, "missing": missing, "distinct": min(len(merged), DISTINCT_MAX),
            "distinct_capped": len(merged) > DISTINCT_MAX,
            "values": ([[v, n] for v, n in sorted(merged.items(), key=lambda kv: (-kv[1], str(kv[0])))]
                       if len(merged) <= VALUES_MAX else None),
            "min": min(numbers) if numbers else None, "max": max(numbers) if numbers else None}, holds


def _kind(classes: set[int], missing: int, too_wide: bool) -> str:
    """The dtype family pandas gives a whole column whose cells fall in `classes`."""
    if not classes:
        return "empty"
    if classes <= {_TRUE, _FALSE}:
        return "boolean" if missing == 0 else "text"  # booleans with a gap: pandas keeps objects
    if not classes <= {_INTEGER, _REAL} or too_wide:
        return "text"  # text, a mix with booleans, or integers pandas cannot hold in 64 bits (Python objects)
    return "numeric"


def typed(cell: str, kind: str) -> Any:
    """One raw cell as the column's pandas dtype holds it (None for a missing value); `integer` is a numeric
    column of whole-number literals without a gap (int64/uint64 in pandas; any other numeric column is
    float64)."""
    if cell in NA_STRINGS:
        return None
    if kind == "integer":
        return int(cell)
    if kind == "numeric":
        return float(cell.strip(" \t"))
    if kind == "boolean":
        return cell.lower() == "true"
    return cell


def _absent(reason: str, **known: Any) -> dict:
    facts = {"rows": None, "profile": None, "profile_absent": reason, "cells": None, "cells_absent": reason,
             "malformed": None}
    facts.update(known)
    return facts


def table_facts(path: Path, delimiter: str, encoding: str = "utf-8") -> dict:
    """Row count, column profile and (small tables) cells of a delimited table, its text in `encoding` (a
    registry type's; UTF-8 by default, a byte-order mark skipped); see the module docstring.
    OSError propagates (the caller refuses an unreadable file)."""
    size = path.stat().st_size
    if size > PROFILE_MAX_BYTES:
        return _absent(f"the table is {size / 2 ** 20:.1f} MiB, above the {PROFILE_MAX_BYTES // 2 ** 20} MiB the "
                       "gate reads to profile a table; its rows are checked when the run reads them")
    try:
        utf8 = codecs.lookup(encoding).name == "utf-8"
    except LookupError:  # a registry type's encoding is checked when the registry loads; fail open to the run
        return _absent(f"the encoding `{encoding}` is unknown here; its rows are checked when the run reads them")
    name = "UTF-8" if utf8 else encoding
    with open(path, encoding="utf-8-sig" if utf8 else encoding, newline="") as fh:
        reader = csv.reader(fh, delimiter=delimiter)
        try:
            return _pass(reader, size <= CELLS_MAX_BYTES)
        except UnicodeDecodeError:
            return _absent(f"the file is not {name} text", malformed=(
                f"the text after line {reader.line_num} is not {name}; pandas cannot read it: save the table as "
                f"{name}"))
        except csv.Error as exc:
            return _absent(f"the csv reader stopped at line {reader.line_num} ({exc}); its rows are checked when "
                           "the run reads them")


def _pass(reader, keep_cells: bool) -> dict:
    header = None
    records: list[list[str]] = []
    for record in reader:
        if not record or (len(record) == 1 and not record[0].strip(" \t\r")):
            continue  # a blank or whitespace-only line: pandas skips it
        if header is None:
            header = record
            continue
        if len(record) > len(header):
            return _absent("a row has more fields than the header", malformed=(
                f"line {reader.line_num} has {len(record)} fields but the header has {len(header)}; pandas stops "
                "there (or takes the first column as row names when every row has one more field): remove the "
                "extra fields or quote the values that hold the delimiter"))
        if len(record) < len(header):
            record = record + [""] * (len(header) - len(record))  # a short row: pandas fills the rest with NaN
        records.append(record)
        if len(records) > PROFILE_MAX_ROWS:
            return _absent(f"the table has more than {PROFILE_MAX_ROWS:,} rows, more than the gate reads to "
                           "profile a table; its rows are checked when the run reads them")
    if header is None:
        return _absent("the table has no header")
    # Counting raw cells per column runs in C; each distinct cell is classified once.
    by_column = list(zip(*records)) if records else [()] * len(header)
    profiled = [_column_profile(Counter(cells)) for cells in by_column]
    profile = {name: column for name, (column, _) in zip(header, profiled)}
    facts = {"rows": len(records), "profile": profile, "profile_absent": None, "cells": None, "cells_absent": None,
             "malformed": None}
    if keep_cells and len(records) <= CELLS_MAX_ROWS:
        holds = [kind for _, kind in profiled]
        facts["cells"] = [[typed(cell, kind) for cell, kind in zip(record, holds)] for record in records]
    else:
        facts["cells_absent"] = (f"the table has more than {CELLS_MAX_ROWS:,} rows or {CELLS_MAX_BYTES // 1024} "
                                 "KiB; a preflight has its profile, not its cells")
    return facts
