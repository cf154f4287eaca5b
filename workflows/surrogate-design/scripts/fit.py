"""Rule fit: train the final surrogate (one model per target) on every row and pickle it.

results/model.pkl holds {"model", "feature_columns", "target_properties",
"estimators": {target: fitted sklearn estimator}}; only propose reads it.
"""
import os

# Single-threaded BLAS before numpy is imported, for byte-identical results.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import logging  # noqa: E402
import pickle  # noqa: E402
import sys  # noqa: E402

import pandas as pd  # noqa: E402

# No __pycache__ inside the workflow folder: its content hash must not depend on running it.
sys.dont_write_bytecode = True
from surrogate_models import build_model  # noqa: E402

logging.basicConfig(filename=snakemake.log[0], filemode="w", level=logging.INFO,
                    format="%(levelname)s %(message)s")
logging.captureWarnings(True)  # optimizer convergence warnings go to the log, not the terminal
log = logging.getLogger("fit")

features = list(snakemake.params.feature_columns)
targets = list(snakemake.params.target_properties)
model_name = snakemake.params.model
seed = int(snakemake.params.seed)

table = pd.read_csv(snakemake.input.table)
X = table[features].to_numpy(dtype=float)

estimators = {}
for target in targets:
    model = build_model(model_name, len(features), seed)
    model.fit(X, table[target].to_numpy(dtype=float))
    if model_name == "gaussian_process":
        log.info("%s: fitted kernel %s", target, model.named_steps["gp"].kernel_)
    else:
        log.info("%s: fitted %d trees", target, len(model.estimators_))
    estimators[target] = model

with open(snakemake.output.model, "wb") as fh:
    pickle.dump({"model": model_name, "feature_columns": features, "target_properties": targets,
                 "estimators": estimators}, fh, protocol=4)
log.info("wrote %s", os.path.basename(snakemake.output.model))  # no run folder path in the log
