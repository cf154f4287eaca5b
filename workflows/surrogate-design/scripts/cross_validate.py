"""Rule cross_validate: out-of-fold predictions and R2/RMSE/MAE per target for the chosen model.

Writes results/cv_metrics.json and results/cv_predictions.csv (one row per table
row and target: observed, out-of-fold prediction and its uncertainty), which the
parity plot draws.
"""
import os

# Single-threaded BLAS before numpy is imported, for byte-identical results.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import json  # noqa: E402
import logging  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.model_selection import KFold, LeaveOneOut  # noqa: E402

# No __pycache__ inside the workflow folder: its content hash must not depend on running it.
sys.dont_write_bytecode = True
from surrogate_models import build_model, predict_with_std  # noqa: E402

logging.basicConfig(filename=snakemake.log[0], filemode="w", level=logging.INFO,
                    format="%(levelname)s %(message)s")
logging.captureWarnings(True)  # optimizer convergence warnings go to the log, not the terminal
log = logging.getLogger("cross_validate")


def sig(x):
    """A float with 10 significant digits, so the JSON is byte-stable."""
    return float(f"{x:.10g}")


features = list(snakemake.params.feature_columns)
targets = list(snakemake.params.target_properties)
strategy = snakemake.params.validation_strategy
model_name = snakemake.params.model
seed = int(snakemake.params.seed)

table = pd.read_csv(snakemake.input.table)
X = table[features].to_numpy(dtype=float)
n = len(table)

if strategy == "leave-one-out":
    splitter = LeaveOneOut()
else:
    k = {"5-fold": 5, "10-fold": 10}[strategy]
    if n < k:
        log.error("%d rows < %d folds", n, k)
        sys.exit(f"surrogate-design cross_validate: {strategy} needs at least {k} rows, the table "
                 f"has {n}; choose validation_strategy 'leave-one-out'")
    splitter = KFold(n_splits=k, shuffle=True, random_state=seed)
folds = list(splitter.split(X))
log.info("%s cross-validation of %s on %d rows: %d folds", strategy, model_name, n, len(folds))

fold_of = np.empty(n, dtype=int)
for i, (_, test_idx) in enumerate(folds):
    fold_of[test_idx] = i

metrics = {}
frames = []
for target in targets:
    y = table[target].to_numpy(dtype=float)
    pred = np.empty(n)
    std = np.empty(n)
    for train_idx, test_idx in folds:
        model = build_model(model_name, len(features), seed)
        model.fit(X[train_idx], y[train_idx])
        pred[test_idx], std[test_idx] = predict_with_std(model, X[test_idx])
    resid = y - pred
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - float(np.sum(resid ** 2)) / ss_tot if ss_tot > 0 else float("nan")
    metrics[target] = {
        "r2": sig(r2),
        "rmse": sig(float(np.sqrt(np.mean(resid ** 2)))),
        "mae": sig(float(np.mean(np.abs(resid)))),
    }
    log.info("%s: R2=%.4f RMSE=%.4g MAE=%.4g", target, metrics[target]["r2"],
             metrics[target]["rmse"], metrics[target]["mae"])
    frames.append(pd.DataFrame({"row": np.arange(n), "fold": fold_of, "target": target,
                                "observed": y, "predicted": pred, "std": std}))

summary = {
    "model": model_name,
    "validation_strategy": strategy,
    "n_folds": len(folds),
    "n_rows": n,
    "seed": seed,
    "feature_columns": features,
    "targets": metrics,
}
with open(snakemake.output.cv_metrics, "w") as fh:
    json.dump(summary, fh, sort_keys=True, indent=2)
    fh.write("\n")
pd.concat(frames, ignore_index=True).to_csv(snakemake.output.cv_predictions, index=False,
                                            float_format="%.10g", lineterminator="\n")
