"""Rule `load`: write the chosen dataset as one all-numeric CSV whose last column is the label.

Downstream rules rely on that layout (features first, label last, label keeping
its original name), so no rule needs the label column's name as a parameter.

The features are `feature_columns` (default: every other column). A text feature
is encoded here, over the whole table's categories (a vocabulary, never a label
statistic): `one_hot` gives one 0/1 column `name=category` per category,
`ordinal` numbers the categories in sorted order (0 = first). Rows with a
missing feature or label are dropped first. The gate's preflight proves the
same rules before any job; they are checked again here for runs without the gate.
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
MAX_ONE_HOT_CATEGORIES = 50


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


def encode(complete, features, categorical, encoding):
    """The feature frame with every text column encoded; the new column names in order."""
    columns = {}
    for name in features:
        values = complete[name]
        if name not in categorical:
            columns[name] = values
            continue
        text = values.astype(str)
        categories = sorted(text.unique().tolist())
        if encoding == "ordinal":
            codes = {c: i for i, c in enumerate(categories)}
            columns[name] = text.map(codes).astype(int)
            logging.info("%s: ordinal codes %s", name, codes)
            continue
        if len(categories) > MAX_ONE_HOT_CATEGORIES:
            fail(f"text feature {name!r} has {len(categories)} categories, more than the "
                 f"{MAX_ONE_HOT_CATEGORIES} one_hot encodes; leave it out with feature_columns or choose "
                 "categorical_encoding: ordinal")
        for category in categories:
            column = f"{name}={category}"
            if column in features or column in columns:
                fail(f"one-hot column {column!r} would have the name of another column; rename the column")
            columns[column] = (text == category).astype(int)
        logging.info("%s: one-hot over %d categories", name, len(categories))
    return pd.DataFrame(columns, index=complete.index)


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

    chosen = smk.params.feature_columns
    features = list(chosen) if chosen else [c for c in frame.columns if c != label]
    if label in features:
        fail(f"the label column {label!r} is also a feature; remove it from feature_columns")
    absent = [c for c in features if c not in frame.columns]
    if absent:
        fail(f"feature columns not in {dataset}: {absent}; columns are {list(frame.columns)}")
    if not features:
        fail("the table has no feature columns besides the label")

    # Rows with a missing value cannot be fitted; they are dropped and counted in the log.
    complete = frame.dropna(subset=features + [label])
    if len(complete) < len(frame):
        logging.warning("dropped %d rows with missing values", len(frame) - len(complete))
    classes = sorted(complete[label].unique().tolist())
    if len(classes) < 2:
        fail(f"label column {label!r} must hold at least two classes in the rows without a missing value; "
             f"found {len(classes)}: {classes[:10]}")

    categorical = [c for c in features if not pd.api.types.is_numeric_dtype(frame[c])]
    encoded = encode(complete, features, categorical, smk.params.categorical_encoding)
    encoded[label] = complete[label]
    encoded.to_csv(smk.output.dataset, index=False, float_format=FLOAT_FORMAT)
    logging.info("wrote %d rows, %d features (%d text, encoded %s), classes %s", len(complete), encoded.shape[1] - 1,
                 len(categorical), smk.params.categorical_encoding, classes)


main(snakemake)  # noqa: F821 (injected by Snakemake's script directive)
