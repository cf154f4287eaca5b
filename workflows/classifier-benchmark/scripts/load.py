"""Rule `load`: write the chosen two-class dataset as one CSV whose last column is the label.

Downstream rules rely on that layout (features first, label last, label keeping
its original name), so no rule needs the label column's name as a parameter.
"""
import os

# Single-threaded BLAS keeps floating-point results identical from run to run.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import logging
import sys

import pandas as pd

FLOAT_FORMAT = "%.10g"
BUILTIN_LABEL = "target"


def fail(message):
    """Log a user-caused problem and stop with that message (no traceback)."""
    logging.error(message)
    sys.exit(f"classifier-benchmark load: {message}")


def load_builtin(name):
    """Return (frame, label column) for a dataset bundled with scikit-learn."""
    from sklearn.datasets import load_breast_cancer

    loaders = {"builtin:breast_cancer": load_breast_cancer}
    if name not in loaders:
        fail(f"unknown built-in dataset {name!r}; choose one of {sorted(loaders)}")
    bunch = loaders[name](as_frame=True)
    return bunch.frame, BUILTIN_LABEL


def main(smk):
    logging.basicConfig(filename=smk.log[0], filemode="w", level=logging.INFO,
                        format="%(levelname)s %(message)s")
    dataset = smk.params.dataset
    if dataset.startswith("builtin:"):
        frame, label = load_builtin(dataset)
    else:
        frame = pd.read_csv(smk.input.table)
        label = smk.params.label_column
        if label not in frame.columns:
            fail(f"label column {label!r} is not in {dataset}; columns are {list(frame.columns)}")
    # the file name only: the path names the run folder (the run reads a staged copy) and the machine
    logging.info("read %s: %d rows, %d columns; label column %r", os.path.basename(dataset), len(frame), frame.shape[1],
                 label)

    features = [c for c in frame.columns if c != label]
    if not features:
        fail("the table has no feature columns besides the label")
    non_numeric = [c for c in features if not pd.api.types.is_numeric_dtype(frame[c])]
    if non_numeric:
        fail(f"feature columns must be numeric; these are not: {non_numeric}")

    # Rows with a missing value cannot be fitted; they are dropped and counted in the log.
    complete = frame.dropna(subset=features + [label])
    if len(complete) < len(frame):
        logging.warning("dropped %d rows with missing values", len(frame) - len(complete))
    classes = sorted(complete[label].unique().tolist())
    if len(classes) != 2:
        fail(f"label column {label!r} must hold exactly two classes; found {len(classes)}: {classes[:10]}")

    complete[features + [label]].to_csv(smk.output.dataset, index=False, float_format=FLOAT_FORMAT)
    logging.info("wrote %d rows, %d features, classes %s", len(complete), len(features), classes)


main(snakemake)  # noqa: F821 (injected by Snakemake's script directive)
