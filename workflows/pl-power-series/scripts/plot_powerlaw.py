"""Plot peak intensity against excitation power on log-log axes with the fitted power-law segments."""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import json
import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

METRIC_COLUMN = {"peak_height": "height", "fit_area": "area"}
METRIC_LABEL = {"peak_height": "peak height (counts)", "fit_area": "fitted peak area (counts nm)"}


def main(sm):
    logging.basicConfig(filename=sm.log[0], filemode="w", level=logging.INFO, format="%(levelname)s %(message)s")
    fits = pd.read_csv(sm.input.fits)
    with open(sm.input.powerlaw) as f:
        law = json.load(f)
    metric = law["intensity_metric"]
    col = METRIC_COLUMN[metric]
    ok = fits["accepted"].astype(bool) & (fits["power_uW"] > 0) & (fits[col] > 0)
    fig, ax = plt.subplots(figsize=(6.5, 5))
    ax.loglog(fits.loc[ok, "power_uW"], fits.loc[ok, col], "o", color="tab:blue", label="accepted fits")
    rej = ~fits["accepted"].astype(bool) & (fits["power_uW"] > 0) & (fits[col] > 0)
    if rej.any():
        ax.loglog(fits.loc[rej, "power_uW"], fits.loc[rej, col], "x", color="tab:red", label="rejected (R² < r2_min)")
    colors = ["tab:orange", "tab:green", "tab:purple"]
    for k, seg in enumerate(law["segments"]):
        if seg["b"] is None:
            continue
        lo = seg["range_uW"][0] if seg["range_uW"][0] is not None else seg["power_min_uW"]
        hi = seg["range_uW"][1] if seg["range_uW"][1] is not None else seg["power_max_uW"]
        lo, hi = min(lo, seg["power_min_uW"]), max(hi, seg["power_max_uW"])
        pp = np.logspace(np.log10(lo), np.log10(hi), 50)
        se = f" ± {seg['b_se']:.3f}" if seg["b_se"] is not None else ""
        where = {"below_boundary": "P < boundary", "above_boundary": "P ≥ boundary"}.get(seg["name"], "all powers")
        ax.loglog(pp, seg["a"] * pp ** seg["b"], "-", color=colors[k % len(colors)],
                  label=f"{where}: b = {seg['b']:.3f}{se}, n = {seg['n_points']}")
    if law["saturation_boundary_uW"] is not None:
        ax.axvline(law["saturation_boundary_uW"], ls="--", color="grey", lw=1, label=f"saturation boundary ({law['saturation_boundary_uW']:g} µW)")
    ax.set_xlabel("excitation power (µW)")
    ax.set_ylabel(METRIC_LABEL[metric])
    ax.set_title("PL intensity vs excitation power, I = a·P^b")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sm.output.powerlaw_plot, dpi=100, metadata={"Software": None})
    plt.close(fig)
    logging.info("plotted %d accepted and %d rejected points, %d segments", int(ok.sum()), int(rej.sum()), len(law["segments"]))


main(snakemake)  # noqa: F821 (injected by Snakemake's script: directive)
