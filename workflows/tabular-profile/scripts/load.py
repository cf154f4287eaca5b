"""Rule load: read the input CSV and keep the requested columns (all when none are given)."""
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

table = pd.read_csv(snakemake.input.dataset)
# the file name only: the path names the run folder (the run reads a staged copy) and the machine
log.info("read %s: %d rows x %d columns", os.path.basename(snakemake.input.dataset), *table.shape)

columns = snakemake.params.columns
if columns:
    absent = [c for c in columns if c not in table.columns]
    if absent:
        # The gate checks this too; repeat it so a standalone run fails with a clear message.
        log.error("columns not in the table: %s; available: %s", absent, list(table.columns))
        sys.exit(f"tabular-profile load: columns not in {snakemake.input.dataset}: {absent}")
    table = table[list(columns)]
    log.info("kept %d columns: %s", len(columns), list(columns))
else:
    log.info("kept all %d columns", table.shape[1])

table.to_csv(snakemake.output.loaded, index=False, float_format="%.10g", lineterminator="\n")
