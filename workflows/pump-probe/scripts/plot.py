"""Rule plot: the delay curve and the background diagnostics, as lab-notebook figures.

curve.png: signal minus background against the pump-probe delay with the 95 %
bootstrap interval (band) and standard errors (bars); filled markers where the
signal ROI is significant; time zero and the zero line marked; the verdict in
the title and, when contaminated, the advice under the axes.
pvalue_hist.png: left, the histogram of the background pixels' p-values against
their own null, with the flat density a clean background gives; right, the
detector map of -log10 p per pixel (how strongly it depends on the delay) with
both ROIs drawn and the responsive background pixels marked.
PNG metadata carries no software version or time, so the files are byte-stable.
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import json  # noqa: E402
import logging  # noqa: E402
import textwrap  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402
from scipy import stats  # noqa: E402

VERDICT_COLOR = {"clean": "#1b7837", "contaminated": "#b2182b"}
FDR = 0.05


def plot_curve(curve, diag, path):
    fig, ax = plt.subplots(figsize=(7.5, 5.2))
    x, y = curve["delay_ps"], curve["signal_minus_background"]
    ax.fill_between(x, curve["ci95_low"], curve["ci95_high"], color="#9ecae1", alpha=0.6,
                    label="95 % bootstrap interval")
    ax.errorbar(x, y, yerr=curve["bootstrap_se"], fmt="-", color="#08519c", lw=1.2, capsize=3,
                label="signal ROI − background ROI (± standard error)")
    significant = curve["signal_fraction_significant"] >= diag["thresholds"]["signal_fraction_per_delay"]
    ax.plot(x[significant], y[significant], "o", color="#08519c", ms=6,
            label="changed from the reference (FDR 5 %)")
    ax.plot(x[~significant], y[~significant], "o", mfc="white", color="#08519c", ms=6, label="no significant change")
    reference = curve["reference_delay"].astype(bool)
    level = float(y[reference].mean())
    ax.axhline(level, color="0.3", lw=0.9, ls=":", label=f"reference level before time zero ({level:.3g})")
    ax.axhline(0, color="0.6", lw=0.6)
    t0 = diag["signal"]["time_zero_ps"]
    ax.axvline(t0, color="0.4", lw=0.8, ls="--")
    ax.text(t0, 1.0, " time zero", transform=ax.get_xaxis_transform(), va="top", ha="left", fontsize=8, color="0.3")
    ax.set_xlabel("pump-probe delay (ps)")
    ax.set_ylabel("signal − background (counts per pixel per shot)")
    verdict = diag["verdict"]
    ax.set_title(f"Pump-probe delay curve — background {verdict}", color=VERDICT_COLOR[verdict])
    ax.legend(fontsize=8, loc="best")
    ax.grid(color="0.92")
    if verdict != "clean":
        note = textwrap.fill(diag["message"], 110)
        fig.text(0.01, 0.005, note, fontsize=7, color=VERDICT_COLOR[verdict], va="bottom", ha="left")
        fig.tight_layout(rect=(0, 0.02 + 0.028 * note.count("\n"), 1, 1))
    else:
        fig.tight_layout()
    fig.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(fig)


def roi_rectangle(roi, **style):
    r0, r1, c0, c1 = roi
    return Rectangle((c0 - 0.5, r0 - 0.5), c1 - c0, r1 - r0, fill=False, **style)


def plot_pvalues(p_background, p_map, shots, diag, path):
    fig, (hist, image) = plt.subplots(1, 2, figsize=(11, 4.6), gridspec_kw={"width_ratios": [1.1, 1]})
    p = p_background[np.isfinite(p_background)]
    bg = diag["background"]
    color = VERDICT_COLOR[diag["verdict"]]
    hist.hist(p, bins=20, range=(0, 1), density=True, color=color, alpha=0.55, edgecolor="white",
              label=f"background pixels (n = {len(p)})")
    hist.axhline(1.0, color="0.2", lw=1.2, ls="--", label="uniform: what a clean background gives")
    hist.axvline(bg["mean_p"], color=color, lw=1.5, label=f"mean p = {bg['mean_p']:.2f} (0.50 expected)")
    hist.set_xlim(0, 1)
    hist.set_xlabel("p-value of a background pixel against its own null (ANOVA across delays)")
    hist.set_ylabel("density (1 = uniform)")
    hist.set_title(f"Background p-values — {diag['verdict']}\nKS p = {bg['ks_pvalue']:.2g}, z = {bg['z_score']:.1f}",
                   color=color)
    hist.legend(fontsize=8, loc="upper right")

    with np.errstate(divide="ignore"):
        strength = -np.log10(np.where(np.isfinite(p_map), p_map, 1.0))
    shown = image.imshow(strength, cmap="magma", origin="upper", interpolation="nearest",
                         vmin=0, vmax=max(4.0, float(np.percentile(strength, 99.5))))
    image.add_patch(roi_rectangle(diag["signal"]["roi"], edgecolor="#4dac26", lw=2, label="signal ROI"))
    image.add_patch(roi_rectangle(bg["roi"], edgecolor="#41b6c4", lw=2, ls="--", label="background ROI"))
    rows, cols = shots["background_rows"], shots["background_cols"]
    live = np.isfinite(p_background)
    responsive = np.zeros(len(p_background), bool)
    responsive[live] = stats.false_discovery_control(p_background[live]) < FDR
    if responsive.any():
        image.plot(cols[responsive], rows[responsive], "x", color="#41b6c4", ms=4, mew=1,
                   label="responsive background pixel")
    image.set_xlabel("detector column (pixel)")
    image.set_ylabel("detector row (pixel)")
    image.set_title("Delay dependence per pixel")
    image.legend(fontsize=7, loc="lower right", framealpha=0.85)
    fig.colorbar(shown, ax=image, label="−log10 p (ANOVA across delays)")
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(fig)


def main(smk):
    logging.basicConfig(filename=smk.log[0], filemode="w", level=logging.INFO, format="%(levelname)s %(message)s")
    curve = pd.read_csv(smk.input.delay_curve)
    with open(smk.input.diagnostics) as fh:
        diag = json.load(fh)
    with np.load(smk.input.shots) as data:
        shots = {k: data[k] for k in ("background_rows", "background_cols", "p_map")}
    with np.load(smk.input.pvalues) as data:
        p_background = data["p_background"]
    plot_curve(curve, diag, smk.output.curve_plot)
    plot_pvalues(p_background, shots["p_map"], shots, diag, smk.output.pvalue_plot)
    logging.info("plots written (%s)", diag["verdict"])


main(snakemake)  # noqa: F821 (injected by Snakemake's script directive)
