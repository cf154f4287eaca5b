"""Rule `split`: stratified train/test split of the dataset (label is the last column)."""
import os

# Single-threaded BLAS keeps floating-point results identical from run to run.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import logging
import math
import sys

import pandas as pd
from sklearn.model_selection import train_test_split

FLOAT_FORMAT = "%.10g"


def fail(message):
    """Log a user-caused problem and stop with that message (no traceback)."""
    logging.error(message)
    sys.exit(f"classifier-benchmark split: {message}")


def main(smk):
    logging.basicConfig(filename=smk.log[0], filemode="w", level=logging.INFO,
                        format="%(levelname)s %(message)s")
    frame = pd.read_csv(smk.input.dataset)
    label = frame.columns[-1]
    fraction = float(smk.params.test_fraction)
    counts = frame[label].value_counts()
    n_test = math.ceil(fraction * len(frame))  # the rounding train_test_split uses
    # Stratification needs every class on both sides of the split (sklearn's own rules first).
    if counts.min() < 2 or n_test < len(counts) or len(frame) - n_test < len(counts):
        fail(f"too few rows to split {len(frame)} rows with test_fraction={fraction} "
             f"keeping every class on both sides (class counts: {counts.to_dict()})")

    train, test = train_test_split(frame, test_size=fraction, stratify=frame[label],
                                   random_state=int(smk.params.seed))
    # sklearn's stratified counts can still leave a small class out of one side: its share rounds to zero.
    for side, rows in (("training", train), ("test", test)):
        lost = sorted(set(counts.index) - set(rows[label]), key=str)
        if lost:
            fail(f"the stratified split of {len(frame)} rows with test_fraction={fraction} leaves class(es) "
                 f"{lost} out of the {side} rows (class counts: {counts.to_dict()}); choose another "
                 "test_fraction or drop the rare class")
    train.to_csv(smk.output.train, index=False, float_format=FLOAT_FORMAT)
    test.to_csv(smk.output.test, index=False, float_format=FLOAT_FORMAT)
    logging.info("split %d rows into %d train / %d test (seed %d)", len(frame), len(train), len(test),
                 int(smk.params.seed))


main(snakemake)  # noqa: F821 (injected by Snakemake's script directive)
