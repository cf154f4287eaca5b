"""Rule propose: sample candidate compositions inside the constraints and rank them by the surrogate.

If every table row's features sum to 100 (within 1e-6 * 100) the features are a
composition: candidates are drawn uniformly from the simplex of compositions
summing to 100 that respect the lower bounds (a shifted, scaled Dirichlet(1, ..., 1)),
then rejected when they exceed an upper bound. Otherwise candidates are drawn
uniformly from the box of bounds. Bounds come from the constraints; a feature
without a constraint (or without one of its two bounds) is kept inside the range
seen in the table. Sampling stops after a bounded number of draws.

Ranking score = sum over targets of sign * (prediction - table mean) / table std,
sign +1 to maximize and -1 to minimize. results/candidates.csv keeps the top
n_candidates, best first, with each target's prediction and uncertainty.
"""
import os

# Single-threaded BLAS before numpy is imported, for byte-identical results.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import logging  # noqa: E402
import pickle  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

# No __pycache__ inside the workflow folder: its content hash must not depend on running it.
sys.dont_write_bytecode = True
from surrogate_models import predict_with_std  # noqa: E402

logging.basicConfig(filename=snakemake.log[0], filemode="w", level=logging.INFO,
                    format="%(levelname)s %(message)s")
log = logging.getLogger("propose")

TOTAL = 100.0
SUM_TOLERANCE = 1e-6 * TOTAL
BATCH = 10_000
MAX_DRAWS = 1_000_000  # bounds the rejection loop when constraints leave a tiny feasible region
MIN_POOL = 5_000


def fail(message):
    log.error(message)
    sys.exit(f"surrogate-design propose: {message}")


features = list(snakemake.params.feature_columns)
targets = list(snakemake.params.target_properties)
constraints = dict(snakemake.params.constraints or {})
objective = dict(snakemake.params.objective or {})
n_candidates = int(snakemake.params.n_candidates)
seed = int(snakemake.params.seed)

not_features = sorted(set(constraints) - set(features))
if not_features:
    fail(f"constraints name columns that are not feature_columns: {not_features}; "
         f"feature_columns are {features}")
not_targets = sorted(set(objective) - set(targets))
if not_targets:
    fail(f"objective names columns that are not target_properties: {not_targets}; "
         f"target_properties are {targets}")
bad_goal = {k: v for k, v in objective.items() if v not in ("maximize", "minimize")}
if bad_goal:
    fail(f"objective values must be 'maximize' or 'minimize', got {bad_goal}")

table = pd.read_csv(snakemake.input.table)
X_table = table[features].to_numpy(dtype=float)
with open(snakemake.input.model, "rb") as fh:
    bundle = pickle.load(fh)
if bundle["feature_columns"] != features or bundle["target_properties"] != targets:
    fail("model.pkl was trained on other columns than this run's feature_columns/target_properties")

is_composition = bool(np.all(np.abs(X_table.sum(axis=1) - TOTAL) <= SUM_TOLERANCE))
d = len(features)
# Unconstrained features stay inside the range the model has seen: a surrogate is
# not trustworthy far outside its training data. An explicit bound replaces that range.
lo = X_table.min(axis=0)
hi = X_table.max(axis=0)
for j, col in enumerate(features):
    bounds = constraints.get(col) or {}
    if bounds.get("min") is not None:
        lo[j] = float(bounds["min"])
    if bounds.get("max") is not None:
        hi[j] = float(bounds["max"])
if is_composition:
    lo = np.maximum(lo, 0.0)
    hi = np.minimum(hi, TOTAL)
inverted = [col for j, col in enumerate(features) if lo[j] > hi[j]]
if inverted:
    fail(f"empty range (min > max) for {inverted}; note that a missing bound defaults to the "
         f"range seen in the table, and compositions are limited to 0-{TOTAL:g}")
if is_composition and (lo.sum() > TOTAL + SUM_TOLERANCE or hi.sum() < TOTAL - SUM_TOLERANCE):
    fail(f"no composition summing to {TOTAL:g} fits the constraints: the minimums add up to "
         f"{lo.sum():g} and the maximums to {hi.sum():g}; loosen them")
log.info("features are %s; sampling bounds %s",
         f"a composition summing to {TOTAL:g}" if is_composition else "free (box sampling)",
         {col: [float(lo[j]), float(hi[j])] for j, col in enumerate(features)})

rng = np.random.default_rng(seed)
pool_size = max(10 * n_candidates, MIN_POOL)
accepted, drawn = [], 0
n_accepted = 0
while n_accepted < pool_size and drawn < MAX_DRAWS:
    if is_composition:
        # Uniform on {x >= lo, sum x = TOTAL}: shift by the minimums, scale the free remainder.
        x = lo + (TOTAL - lo.sum()) * rng.dirichlet(np.ones(d), size=BATCH)
        x = x[np.all(x <= hi, axis=1)]
    else:
        x = lo + (hi - lo) * rng.random((BATCH, d))
    drawn += BATCH
    accepted.append(x)
    n_accepted += len(x)
log.info("drew %d samples, %d satisfy the constraints (acceptance %.3g)",
         drawn, n_accepted, n_accepted / drawn)
if n_accepted < n_candidates:
    fail(f"only {n_accepted} of {drawn} sampled compositions satisfy the constraints, fewer than "
         f"n_candidates={n_candidates}; loosen the constraints or ask for fewer candidates")
pool = np.concatenate(accepted)[:pool_size]

out = pd.DataFrame(pool, columns=features)
score = np.zeros(len(pool))
for target in targets:
    mean, std = predict_with_std(bundle["estimators"][target], pool)
    out[f"{target}_predicted"] = mean
    out[f"{target}_std"] = std
    y = table[target].to_numpy(dtype=float)
    scale = y.std() if y.std() > 0 else 1.0
    sign = -1.0 if objective.get(target, "maximize") == "minimize" else 1.0
    score += sign * (mean - y.mean()) / scale
    log.info("%s: %s", target, objective.get(target, "maximize"))
out["score"] = score

# Stable sort so ties keep sampling order and the file stays byte-identical.
out = out.iloc[np.argsort(-score, kind="stable")[:n_candidates]].reset_index(drop=True)
out.insert(0, "rank", np.arange(1, len(out) + 1))
out.to_csv(snakemake.output.candidates, index=False, float_format="%.10g", lineterminator="\n")
log.info("wrote %d candidates; best score %.4g", len(out), out["score"].iloc[0])
