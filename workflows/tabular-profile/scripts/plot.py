"""Rule plot: one panel per column of the cleaned table, in a grid, as a PNG.

Numeric columns get a histogram: integer columns (a year, a count) are binned on whole numbers, one bar
per value when there are few, so no bar straddles two integers; other numbers get 20 equal bins.
Categorical columns (text, true/false) get a horizontal bar chart of their most frequent values. Axes are
labelled with the unit a column name ends in (`_mm`, `_g`, `_kg`, `_s`, ...) when it names one.
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import logging  # noqa: E402
import math  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402
from pandas.api.types import is_bool_dtype, is_numeric_dtype  # noqa: E402

logging.basicConfig(filename=snakemake.log[0], filemode="w", level=logging.INFO,
                    format="%(levelname)s %(message)s")
log = logging.getLogger("plot")

BINS = 20
ONE_BAR_PER_VALUE = 30      # an integer column spanning at most this many whole numbers: one bar each
TOP_CATEGORIES = 12         # bars of a categorical column; the rest are summed into one "other" bar
MAX_GRID_COLUMNS = 3
COLOR = "#4c72b0"
# the unit a column name ends in: body_mass_g -> g, flipper_length_mm -> mm
UNITS = {"mm": "mm", "cm": "cm", "m": "m", "km": "km", "um": "µm", "nm": "nm", "g": "g", "kg": "kg", "mg": "mg",
         "s": "s", "ms": "ms", "min": "min", "h": "h", "hz": "Hz", "khz": "kHz", "mhz": "MHz", "pa": "Pa",
         "kpa": "kPa", "mpa": "MPa", "gpa": "GPa", "hv": "HV", "ev": "eV", "kev": "keV", "w": "W", "mw": "mW",
         "uw": "µW", "v": "V", "mv": "mV", "pct": "%", "percent": "%", "degc": "°C"}


def axis_label(name: str) -> str:
    """'flipper_length_mm' -> 'flipper_length_mm (mm)'; a name without a known unit stays as it is."""
    suffix = str(name).rsplit("_", 1)[-1].lower() if "_" in str(name) else ""
    return f"{name} ({UNITS[suffix]})" if suffix in UNITS else str(name)


def is_integral(values: pd.Series) -> bool:
    return bool(len(values)) and bool(np.all(np.mod(values.to_numpy(dtype=float), 1) == 0))


def draw_integers(ax, values: pd.Series, name: str) -> None:
    lo, hi = int(values.min()), int(values.max())
    if hi - lo + 1 <= ONE_BAR_PER_VALUE:
        counts = values.astype(int).value_counts().sort_index()
        ax.bar(counts.index, counts.to_numpy(), width=0.8, color=COLOR, edgecolor="white")
        log.info("%s: integer, one bar per whole number from %d to %d", name, lo, hi)
    else:
        step = max(1, math.ceil((hi - lo + 1) / BINS))  # whole-number bins, edges between integers
        edges = np.arange(lo - 0.5, hi + step + 0.5, step)
        ax.hist(values, bins=edges, color=COLOR, edgecolor="white")
        log.info("%s: integer, %d bins of %d whole numbers, edges at %s", name, len(edges) - 1, step,
                 ", ".join(f"{e:g}" for e in edges[:3]) + ", ...")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=8))
    ax.set_xlabel(axis_label(name))


def draw_numbers(ax, values: pd.Series, name: str) -> None:
    ax.hist(values, bins=BINS, color=COLOR, edgecolor="white")
    ax.set_xlabel(axis_label(name))
    log.info("%s: numeric, %d equal bins", name, BINS)


def draw_categories(ax, values: pd.Series, name: str) -> None:
    counts = values.astype(str).value_counts()
    # most frequent first; ties by value, so the picture never depends on hash order
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = ranked[:TOP_CATEGORIES]
    rest = ranked[TOP_CATEGORIES:]
    if rest:
        shown.append((f"other ({len(rest)} values)", sum(n for _, n in rest)))
    labels = [label if len(label) <= 24 else label[:23] + "…" for label, _ in shown]
    ax.barh(range(len(shown)), [n for _, n in shown], color=COLOR, edgecolor="white")
    ax.set_yticks(range(len(shown)), labels)
    ax.invert_yaxis()  # most frequent on top
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("rows")
    ax.set_ylabel(axis_label(name))
    log.info("%s: categorical, a bar chart of %d values%s", name, len(ranked),
             f" (the {TOP_CATEGORIES} most frequent, the rest as one bar)" if rest else "")


table = pd.read_csv(snakemake.input.cleaned)
columns = list(table.columns)
n = max(len(columns), 1)
ncols = min(MAX_GRID_COLUMNS, n)
nrows = math.ceil(n / ncols)
fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.2 * nrows), squeeze=False)
flat = axes.ravel()

if not columns:
    flat[0].text(0.5, 0.5, "the cleaned table has no columns", ha="center", va="center")
    flat[0].set_axis_off()
kinds = {"integer": 0, "numeric": 0, "categorical": 0}
for ax, name in zip(flat, columns):
    values = table[name].dropna()
    if values.empty:
        ax.text(0.5, 0.5, "no values", ha="center", va="center", transform=ax.transAxes)
        kind = "categorical"
    elif is_numeric_dtype(values) and not is_bool_dtype(values) and is_integral(values):
        draw_integers(ax, values, name)
        kind = "integer"
    elif is_numeric_dtype(values) and not is_bool_dtype(values):
        draw_numbers(ax, values, name)
        kind = "numeric"
    else:
        draw_categories(ax, values, name)
        kind = "categorical"
    kinds[kind] += 1
    ax.set_title(str(name), fontsize=10)
    if kind != "categorical":
        ax.set_ylabel("rows")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
for ax in flat[len(columns):]:
    ax.set_axis_off()

fig.suptitle(f"Columns of the cleaned table ({len(table)} rows): distribution of each")
fig.tight_layout()
fig.savefig(snakemake.output.plot, dpi=100, metadata={"Software": None})
log.info("plotted %d columns: %d integer, %d numeric, %d categorical", len(columns), kinds["integer"],
         kinds["numeric"], kinds["categorical"])
