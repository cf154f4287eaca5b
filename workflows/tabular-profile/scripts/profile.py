"""Rule profile: summary statistics of every column of the cleaned table, as sorted JSON.

Numeric columns: count, missing, mean, std (sample, ddof=1), min, 25%, 50%, 75%
(linear interpolation, as pandas describe), max. Other columns: count, missing,
unique, top (most frequent value; ties go to the smallest value as text) and freq.
Floats are rounded to 10 significant digits so the file is byte-stable.
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import json  # noqa: E402
import logging  # noqa: E402
import math  # noqa: E402

import pandas as pd  # noqa: E402
from pandas.api.types import is_bool_dtype, is_numeric_dtype  # noqa: E402


logging.basicConfig(filename=snakemake.log[0], filemode="w", level=logging.INFO,
                    format="%(levelname)s %(message)s")
log = logging.getLogger("profile")


def num(x):
    """A float with 10 significant digits, or None where the statistic is undefined (NaN)."""
    x = float(x)
    return float(f"{x:.10g}") if math.isfinite(x) else None


def numeric_profile(s):
    values = s.dropna()
    return {
        "kind": "numeric",
        "count": int(values.size),
        "missing": int(s.isna().sum()),
        "mean": num(values.mean()),
        "std": num(values.std(ddof=1)),
        "min": num(values.min()),
        "25%": num(values.quantile(0.25)),
        "50%": num(values.quantile(0.5)),
        "75%": num(values.quantile(0.75)),
        "max": num(values.max()),
    }


def categorical_profile(s):
    values = s.dropna().astype(str)
    counts = values.value_counts()
    # Explicit tie-break so "top" never depends on hash or sort order.
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    top, freq = ranked[0] if ranked else (None, 0)
    return {
        "kind": "categorical",
        "count": int(values.size),
        "missing": int(s.isna().sum()),
        "unique": int(counts.size),
        "top": top,
        "freq": int(freq),
    }


loaded = pd.read_csv(snakemake.input.loaded)
cleaned = pd.read_csv(snakemake.input.cleaned)

columns = {}
for name in cleaned.columns:
    s = cleaned[name]
    numeric = is_numeric_dtype(s) and not is_bool_dtype(s)
    columns[name] = numeric_profile(s) if numeric else categorical_profile(s)

profile = {
    "rows_in": int(len(loaded)),
    "rows_out": int(len(cleaned)),
    "column_order": [str(c) for c in cleaned.columns],
    "columns": columns,
}
with open(snakemake.output.profile, "w") as f:
    json.dump(profile, f, sort_keys=True, indent=2, allow_nan=False)
    f.write("\n")
log.info("profiled %d columns over %d rows (%d rows before cleaning)",
         len(columns), len(cleaned), len(loaded))
