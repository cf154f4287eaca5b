"""Rule clean: drop duplicate rows (optional), then remove or fill missing values.

Duplicates are dropped first so that repeated rows do not weigh on the mean or
median used to fill gaps. With fill_mean / fill_median only numeric columns are
filled; rows still missing a value afterwards (a non-numeric cell) are removed.
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import logging  # noqa: E402

import pandas as pd  # noqa: E402
from pandas.api.types import is_bool_dtype, is_numeric_dtype  # noqa: E402


logging.basicConfig(filename=snakemake.log[0], filemode="w", level=logging.INFO,
                    format="%(levelname)s %(message)s")
log = logging.getLogger("clean")

strategy = snakemake.params.missing_strategy
if strategy not in ("remove", "fill_mean", "fill_median"):
    raise SystemExit(f"tabular-profile clean: unknown missing_strategy {strategy!r}")

table = pd.read_csv(snakemake.input.loaded)
log.info("rows in: %d", len(table))

if snakemake.params.drop_duplicates:
    before = len(table)
    table = table.drop_duplicates()
    log.info("dropped %d duplicate rows", before - len(table))

if strategy != "remove":
    numeric = [c for c in table.columns
               if is_numeric_dtype(table[c]) and not is_bool_dtype(table[c])]
    fill = table[numeric].mean() if strategy == "fill_mean" else table[numeric].median()
    log.info("filling %d numeric cells with the column %s",
             int(table[numeric].isna().sum().sum()), strategy.removeprefix("fill_"))
    table[numeric] = table[numeric].fillna(fill)

before = len(table)
table = table.dropna()
log.info("removed %d rows with missing values; rows out: %d", before - len(table), len(table))

table.to_csv(snakemake.output.cleaned, index=False, float_format="%.10g", lineterminator="\n")
