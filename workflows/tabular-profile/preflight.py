"""tabular-profile preflight: what the gate proves about the table before any job runs.

Refused, with the fix: a numeric column of the cleaned table that holds an infinite number (`inf`) or
spans a range too wide for a float (from about -1.8e308 to 1.8e308): scripts/plot.py cannot bin it for
its histogram. The cleaned table is what scripts/clean.py leaves (the selected columns; exact duplicate
rows dropped when drop_duplicates; rows with a gap removed, or numeric gaps filled with the mean or
median and the rows still missing a value removed), written with 10 significant digits and read back.

With the table's cells (a small table) the cleaning is replayed exactly. With only the table's profile,
a column is judged on all its values when the cleaning cannot change which values it holds (no gap in the
selected columns, or, when filling, no gap in a text column: dropping exact duplicates keeps one copy of
every value). Otherwise, and without a profile (a large table, a plan step's output), the plot job says.

Pure: reads only its arguments (the resolved params and the read-only artifact views the gate passes),
never a file.
"""

import math
import statistics


def preflight(params, artifacts):
    """Gate findings ({path, message, hint}) for a table whose cleaned numeric columns cannot be plotted."""
    table = artifacts.get("dataset_file") or {}
    profile = table.get("profile")
    if profile is None:
        return []
    columns = list(params.get("columns") or table["columns"])
    values = _cleaned_values(params, table, columns)
    found = []
    for name, numbers in values.items():
        if not numbers:
            continue
        low, high = min(numbers), max(numbers)
        if math.isinf(low) or math.isinf(high) or math.isinf(high - low):
            what = "an infinite number (inf)" if math.isinf(low) or math.isinf(high) else \
                f"values from {low:g} to {high:g}, a range wider than a float holds"
            found.append({"path": f"columns[{columns.index(name)}]" if params.get("columns") else "dataset_file",
                          "message": f"column `{name}` of the cleaned table holds {what}: its histogram cannot be "
                                     "drawn",
                          "hint": f"replace those values of `{name}` in {params['dataset_file']}, or leave the "
                                  "column out with `columns`"})
    return found


def _rounded(value):
    """A number as the cleaned CSV holds it (10 significant digits) and pandas reads it back."""
    return float(f"{value:.10g}")


def _cleaned_values(params, table, columns):
    """{numeric column of the cleaned table: its values}, as far as they can be known."""
    profile = table["profile"]
    if table.get("cells") is not None:
        return _replayed(params, table, columns)
    numeric = [c for c in columns if profile[c]["kind"] == "numeric"]
    text_gaps = any(profile[c]["missing"] for c in columns if c not in numeric)
    numeric_gaps = any(profile[c]["missing"] for c in numeric)
    unchanged = not (text_gaps or numeric_gaps) or (params["missing_strategy"] != "remove" and not text_gaps)
    if not unchanged:
        return {}
    return {c: [_rounded(profile[c]["min"]), _rounded(profile[c]["max"])] for c in numeric}


def _replayed(params, table, columns):
    """scripts/clean.py on the table's cells, then the numeric columns of what it writes."""
    at = [list(table["columns"]).index(c) for c in columns]
    rows = [tuple(row[i] for i in at) for row in table["cells"]]
    if params["drop_duplicates"]:
        seen, kept = set(), []
        for row in rows:
            if row not in seen:
                seen.add(row)
                kept.append(row)
        rows = kept
    kinds = [table["profile"][c]["kind"] for c in columns]
    numeric = [i for i, kind in enumerate(kinds) if kind in ("numeric", "empty")]
    if params["missing_strategy"] != "remove":
        fills = {}
        for i in numeric:
            present = [row[i] for row in rows if row[i] is not None]
            fills[i] = _fill(present, params["missing_strategy"])
        rows = [tuple(fills[i] if i in fills and v is None else v for i, v in enumerate(row)) for row in rows]
    survivors = [row for row in rows if all(v is not None and v == v for v in row)]
    out = {}
    for i, name in enumerate(columns):
        values = [row[i] for row in survivors]
        numbers = [_as_number(v) for v in values]
        if values and all(n is not None for n in numbers):  # numeric when read back, text columns included
            out[name] = [_rounded(n) for n in numbers]
    return out


def _fill(present, strategy):
    """The mean or median of a numeric column's values (None when it has none: pandas' NaN)."""
    if not present:
        return None
    numbers = [float(v) for v in present]
    if strategy == "fill_median":
        return statistics.median(numbers)
    total = sum(numbers)
    return total / len(numbers) if not math.isnan(total) else None


def _as_number(value):
    """A cell as a number when pandas would read it back as one (booleans stay categorical), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(value)
    except ValueError:
        return None
