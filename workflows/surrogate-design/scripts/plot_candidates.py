"""Rule plot_candidates: the proposed candidates against the training data, as a PNG.

Top: every feature on its own axis (parallel coordinates): the training rows as thin grey lines, the
proposed candidates in colour (the best-ranked one bold), and each feature's constraint bounds as a
shaded band between black bars. Below: one panel per target property, the training table's measured
values beside the candidates' predictions with their model uncertainty (± 1 std), in the property's unit
when its column name ends in one (`_hv`, `_mpa`, ...).
"""
import os

# Single-threaded BLAS before numpy is imported, for byte-identical results.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import logging  # noqa: E402
import sys  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

# No __pycache__ inside the workflow folder: its content hash must not depend on running it.
sys.dont_write_bytecode = True
from units import with_unit  # noqa: E402

logging.basicConfig(filename=snakemake.log[0], filemode="w", level=logging.INFO,
                    format="%(levelname)s %(message)s")
log = logging.getLogger("plot_candidates")

TOTAL = 100.0
SUM_TOLERANCE = 1e-6 * TOTAL  # as propose.py decides that the features are a composition
TRAIN, CANDIDATE, BEST, BOUND = "0.55", "tab:orange", "tab:red", "black"
features = list(snakemake.params.feature_columns)
targets = list(snakemake.params.target_properties)
constraints = dict(snakemake.params.constraints or {})
objective = dict(snakemake.params.objective or {})
table = pd.read_csv(snakemake.input.table)
candidates = pd.read_csv(snakemake.input.candidates)

X = table[features].to_numpy(dtype=float)
C = candidates[features].to_numpy(dtype=float)
is_composition = bool(np.all(np.abs(X.sum(axis=1) - TOTAL) <= SUM_TOLERANCE))
positions = np.arange(len(features))

fig = plt.figure(figsize=(max(8.0, 1.6 * len(features) + 4), 4.0 + 3.2 * ((len(targets) + 1) // 2)))
grid = fig.add_gridspec(1 + (len(targets) + 1) // 2, 2, height_ratios=[1.25] + [1.0] * ((len(targets) + 1) // 2))

top = fig.add_subplot(grid[0, :])
for row in X:
    top.plot(positions, row, color=TRAIN, lw=0.6, alpha=0.35, zorder=1)
for row in C[::-1]:  # the best-ranked candidates drawn last, on top
    top.plot(positions, row, color=CANDIDATE, lw=0.9, alpha=0.55, zorder=2)
if len(C):
    top.plot(positions, C[0], color=BEST, lw=2.2, marker="o", ms=4, zorder=4)
bounded = []
for j, name in enumerate(features):
    bounds = constraints.get(name) or {}
    lo, hi = bounds.get("min"), bounds.get("max")
    if lo is None and hi is None:
        continue
    bounded.append(f"{name} {lo if lo is not None else '-'}..{hi if hi is not None else '-'}")
    y0 = float(lo) if lo is not None else float(min(X[:, j].min(), C[:, j].min() if len(C) else np.inf))
    y1 = float(hi) if hi is not None else float(max(X[:, j].max(), C[:, j].max() if len(C) else -np.inf))
    top.fill_between([j - 0.18, j + 0.18], y0, y1, color="0.85", zorder=0)
    for edge in (lo, hi):
        if edge is not None:
            top.hlines(float(edge), j - 0.22, j + 0.22, color=BOUND, lw=2.0, zorder=3)
top.set_xticks(positions, features)
top.set_xlim(-0.5, len(features) - 0.5)
top.set_xlabel("feature column")
top.set_ylabel("content (% of the composition)" if is_composition else "feature value (units of the table)")
top.set_title(f"{len(C)} proposed candidates against the {len(X)} training rows")
handles = [Line2D([], [], color=TRAIN, lw=1.2, label=f"training rows (n = {len(X)})"),
           Line2D([], [], color=CANDIDATE, lw=1.2, label=f"proposed candidates (n = {len(C)})"),
           Line2D([], [], color=BEST, lw=2.2, marker="o", ms=4, label="best-ranked candidate")]
if bounded:
    handles.append(Patch(facecolor="0.85", edgecolor=BOUND, label="constraint bounds (min–max)"))
top.legend(handles=handles, fontsize=8, loc="best", framealpha=0.9)
top.grid(axis="y", color="0.92")

for k, target in enumerate(targets):
    ax = fig.add_subplot(grid[1 + k // 2, k % 2])
    observed = table[target].dropna().to_numpy(dtype=float)
    predicted = candidates[f"{target}_predicted"].to_numpy(dtype=float)
    std = candidates[f"{target}_std"].to_numpy(dtype=float)
    # the points spread around their row by a seeded generator: the same picture every run
    spread = np.random.default_rng(k)
    jitter_o = spread.uniform(-0.25, 0.25, len(observed))
    jitter_c = spread.uniform(-0.25, 0.25, len(predicted))
    ax.scatter(observed, 1 + jitter_o, s=12, color=TRAIN, alpha=0.8, label="training rows (measured)")
    ax.errorbar(predicted, jitter_c, xerr=std, fmt="o", ms=3.5, color=CANDIDATE, ecolor=CANDIDATE,
                elinewidth=0.7, alpha=0.85, label="candidates (predicted ± 1 std)")
    if len(predicted):
        ax.errorbar(predicted[:1], jitter_c[:1], xerr=std[:1], fmt="o", ms=6, color=BEST, ecolor=BEST,
                    label="best-ranked candidate")
    ax.set_yticks([0, 1], ["candidates\n(predicted)", "training\n(measured)"])
    ax.set_ylim(-0.6, 1.6)
    ax.set_xlabel(with_unit(target))
    ax.set_ylabel("rows (spread vertically)", fontsize=8)
    ax.set_title(f"{target}: {objective.get(target, 'maximize')}", fontsize=10)
    ax.legend(fontsize=7, loc="best", framealpha=0.9)
    ax.grid(axis="x", color="0.92")

fig.suptitle("Surrogate design: where the proposed candidates lie", fontsize=12)
fig.tight_layout()
fig.savefig(snakemake.output.plot, dpi=100, metadata={"Software": None})
log.info("plotted %d candidates against %d training rows, %d features, %d targets; constraint bounds: %s",
         len(C), len(X), len(features), len(targets), ", ".join(bounded) or "none")
