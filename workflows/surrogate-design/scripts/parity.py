"""Rule parity: plot out-of-fold predicted vs observed values, one panel per target, with CV R2/RMSE, in the
target's unit when its column name ends in one."""
import os

# Single-threaded BLAS before numpy is imported, for byte-identical results.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import json  # noqa: E402
import logging  # noqa: E402
import sys  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

# No __pycache__ inside the workflow folder: its content hash must not depend on running it.
sys.dont_write_bytecode = True
from units import unit_of, with_unit  # noqa: E402

logging.basicConfig(filename=snakemake.log[0], filemode="w", level=logging.INFO,
                    format="%(levelname)s %(message)s")
log = logging.getLogger("parity")

preds = pd.read_csv(snakemake.input.cv_predictions)
with open(snakemake.input.cv_metrics) as fh:
    summary = json.load(fh)
targets = list(dict.fromkeys(preds["target"]))  # file order = target_properties order

fig, axes = plt.subplots(1, len(targets), figsize=(4.2 * len(targets), 4.2), squeeze=False)
for ax, target in zip(axes[0], targets):
    part = preds[preds["target"] == target]
    lo = min(part["observed"].min(), part["predicted"].min())
    hi = max(part["observed"].max(), part["predicted"].max())
    pad = 0.05 * (hi - lo if hi > lo else 1.0)
    ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="0.5", lw=1, ls="--", zorder=1,
            label="predicted = observed")
    ax.errorbar(part["observed"], part["predicted"], yerr=part["std"], fmt="o", ms=4,
                color="tab:blue", ecolor="tab:blue", elinewidth=0.6, alpha=0.8, zorder=2,
                label="out-of-fold prediction (± 1 std)")
    m = summary["targets"][target]
    unit = f" {unit_of(target)}" if unit_of(target) else ""
    ax.set_title(f"{target}\nR\u00b2 = {m['r2']:.3f}, RMSE = {m['rmse']:.3g}{unit}", fontsize=10)
    ax.set_xlabel(f"observed {with_unit(target)}")
    ax.set_ylabel(f"predicted {with_unit(target)}")
    ax.legend(fontsize=7, loc="upper left")
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_ylim(lo - pad, hi + pad)
    ax.set_aspect("equal")
fig.suptitle(f"{summary['model']}, {summary['validation_strategy']} cross-validation", fontsize=11)
fig.tight_layout()
fig.savefig(snakemake.output.parity, dpi=100, metadata={"Software": None})
log.info("wrote parity plot for %s", targets)
