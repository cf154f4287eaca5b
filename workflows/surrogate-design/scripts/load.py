"""Rule load: validate the composition-property table and keep only the feature and target columns.

Stops with a clear message when a target is also a feature, a column is absent,
a used column is not numeric, or a used column has missing values.
"""
import os

# Single-threaded BLAS before numpy is imported, for byte-identical results.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import logging  # noqa: E402
import sys  # noqa: E402

import pandas as pd  # noqa: E402

logging.basicConfig(filename=snakemake.log[0], filemode="w", level=logging.INFO,
                    format="%(levelname)s %(message)s")
log = logging.getLogger("load")


def fail(message):
    log.error(message)
    sys.exit(f"surrogate-design load: {message}")


features = list(snakemake.params.feature_columns)
targets = list(snakemake.params.target_properties)
path = snakemake.input.dataset

overlap = [c for c in targets if c in features]
if overlap:
    fail(f"target_properties {overlap} are also listed in feature_columns; a target may not also "
         f"be a feature (the model would be handed the answer). Remove them from feature_columns "
         f"or from target_properties.")
for name, cols in (("feature_columns", features), ("target_properties", targets)):
    dupes = sorted({c for c in cols if cols.count(c) > 1})
    if dupes:
        fail(f"{name} lists {dupes} more than once")

table = pd.read_csv(path)
# the file name only: the path names the run folder (the run reads a staged copy) and the machine
log.info("read %s: %d rows x %d columns", os.path.basename(path), *table.shape)

used = features + targets
absent = [c for c in used if c not in table.columns]
if absent:
    fail(f"columns not in {path}: {absent}; available: {list(table.columns)}")
table = table[used]

non_numeric = {}
for col in used:
    converted = pd.to_numeric(table[col], errors="coerce")
    bad = converted.isna() & table[col].notna()
    if bad.any():
        first = int(bad.to_numpy().nonzero()[0][0])
        non_numeric[col] = f"row {first + 1}: {table[col].iloc[first]!r}"
    table[col] = converted.astype(float)
if non_numeric:
    fail(f"columns must be numeric; first non-numeric value per column (1-based data row): "
         f"{non_numeric}")

missing = {col: [int(i) + 1 for i in table[col].isna().to_numpy().nonzero()[0][:5]]
           for col in used if table[col].isna().any()}
if missing:
    fail(f"missing values in used columns (first 1-based data rows shown): {missing}; fill or "
         f"drop those rows before running")

min_rows = 5
if len(table) < min_rows:
    fail(f"the table has {len(table)} rows; at least {min_rows} are needed to train and "
         f"cross-validate a surrogate")

constant = [c for c in features if table[c].nunique() < 2]
if constant:
    # Not an error: a constant feature carries no information, but the models cope.
    log.warning("features with a single value (uninformative): %s", constant)

log.info("kept %d rows; features %s; targets %s", len(table), features, targets)
table.to_csv(snakemake.output.table, index=False, lineterminator="\n")
