"""Rule plot: one histogram per numeric column of the cleaned table, in a grid, as a PNG."""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import logging  # noqa: E402
import math  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from pandas.api.types import is_bool_dtype, is_numeric_dtype  # noqa: E402


logging.basicConfig(filename=snakemake.log[0], filemode="w", level=logging.INFO,
                    format="%(levelname)s %(message)s")
log = logging.getLogger("plot")

BINS = 20
MAX_GRID_COLUMNS = 3

table = pd.read_csv(snakemake.input.cleaned)
numeric = [c for c in table.columns if is_numeric_dtype(table[c]) and not is_bool_dtype(table[c])]

n = max(len(numeric), 1)
ncols = min(MAX_GRID_COLUMNS, n)
nrows = math.ceil(n / ncols)
fig, axes = plt.subplots(nrows, ncols, figsize=(4 * ncols, 3 * nrows), squeeze=False)
flat = axes.ravel()

if not numeric:
    flat[0].text(0.5, 0.5, "no numeric columns", ha="center", va="center")
    flat[0].set_axis_off()
for ax, name in zip(flat, numeric):
    values = table[name].dropna()
    ax.hist(values, bins=BINS, color="#4c72b0", edgecolor="white")
    ax.set_title(str(name), fontsize=10)
    ax.set_ylabel("rows")
for ax in flat[len(numeric):] if numeric else []:
    ax.set_axis_off()

fig.suptitle(f"Numeric columns of the cleaned table ({len(table)} rows)")
fig.tight_layout()
fig.savefig(snakemake.output.plot, dpi=100, metadata={"Software": None})
log.info("plotted %d numeric columns", len(numeric))
