"""Rule diagnose: is the background ROI really signal-free? A verdict and a sentence the user can act on.

Each background pixel's p-value against its own null (one-way ANOVA of its shots
across delays: no pump effect means no delay dependence) is uniform on [0, 1]
when the background is clean, so their mean is about 0.5. Pump-induced signal
in the background ROI piles p-values up near 0. Reported: the mean p-value,
the Kolmogorov-Smirnov test against the uniform distribution, and the z-score
of the mean, (mean - 1/2) / sqrt(1 / (12 n)). Verdict `contaminated` when
both KS p < 0.001 and z < -3, else `clean`. The pixels that respond
(Benjamini-Hochberg, 5 % false discovery rate) locate the problem, and the
message says where to move the ROI. Constant pixels (NaN p) are left out and
counted. Also: at which delays the signal ROI shows a significant change from
the reference (before time zero), and the largest change with its 95 % interval.
"""
import json
import logging

import numpy as np
import pandas as pd
from scipy import stats

KS_ALPHA = 1e-3
Z_LIMIT = -3.0
FDR = 0.05
SIGNAL_FRACTION = 0.10  # a delay "shows signal" when at least this share of signal pixels is significant
MARGIN = 2  # least gap (pixels) between a moved background ROI and the responsive pixels


def sig(x):
    return None if x is None or not np.isfinite(x) else float(f"{x:.6g}")


def span(lo, hi, word):
    return f"{word} {lo}" if lo == hi else f"{word} {lo}-{hi}"


def suggestion(bg, sig_roi, bbox, shape):
    """A same-size background ROI moved away from the signal, past the responsive pixels, or None.

    The gap left beyond the responsive pixels is at least their own extent (and MARGIN): the
    signal's wing fades gradually, so pixels just past the significant ones still carry some.
    When that does not fit on the detector, the ROI goes as far as it can while still clearing them.
    """
    r0, r1, c0, c1 = bg
    size = (r1 - r0, c1 - c0)
    centre_bg = ((r0 + r1) / 2, (c0 + c1) / 2)
    centre_sig = ((sig_roi[0] + sig_roi[1]) / 2, (sig_roi[2] + sig_roi[3]) / 2)
    axis = 0 if abs(centre_bg[0] - centre_sig[0]) >= abs(centre_bg[1] - centre_sig[1]) else 1
    lo, hi = bbox[2 * axis], bbox[2 * axis + 1]
    gap = max(MARGIN, hi - lo + 1)
    if centre_bg[axis] > centre_sig[axis]:  # move further away, towards the high edge
        start = min(hi + 1 + gap, shape[axis] - size[axis])
        ok = start > hi
    else:
        start = max(lo - gap - size[axis], 0)
        ok = start + size[axis] <= lo
    if not ok:
        return None
    moved = [int(r0), int(r1), int(c0), int(c1)]
    moved[2 * axis], moved[2 * axis + 1] = int(start), int(start + size[axis])
    return moved


def main(smk):
    logging.basicConfig(filename=smk.log[0], filemode="w", level=logging.INFO, format="%(levelname)s %(message)s")
    with np.load(smk.input.shots) as data:
        rows, cols = data["background_rows"], data["background_cols"]
        bg_roi, sig_roi = data["background_roi"].tolist(), data["signal_roi"].tolist()
        shape = data["mean_image"].shape
    with np.load(smk.input.pvalues) as data:
        p_all, time_zero = data["p_background"], float(data["time_zero_ps"])
    curve = pd.read_csv(smk.input.delay_curve)

    live = np.isfinite(p_all)
    p, rows, cols = p_all[live], rows[live], cols[live]
    n = int(len(p))
    mean_p = float(np.mean(p))
    ks = stats.kstest(p, "uniform")
    z = (mean_p - 0.5) / np.sqrt(1.0 / (12.0 * n))
    contaminated = bool(ks.pvalue < KS_ALPHA and z < Z_LIMIT)
    responsive = stats.false_discovery_control(p) < FDR
    bbox = ([int(rows[responsive].min()), int(rows[responsive].max()), int(cols[responsive].min()),
             int(cols[responsive].max())] if responsive.any() else None)

    stats_text = f"mean p = {mean_p:.2f} (0.50 expected), KS p = {ks.pvalue:.2g}, z = {z:.1f}"
    moved = None
    if contaminated and bbox is not None:
        where = f"{span(bbox[0], bbox[1], 'rows')}, {span(bbox[2], bbox[3], 'columns')}"
        moved = suggestion(bg_roi, sig_roi, bbox, shape)
        message = (f"contaminated: the background ROI {bg_roi} picks up pump-induced signal ({stats_text}); "
                   f"{int(responsive.sum())} of {n} background pixels respond to the pump, in {where}, so signal "
                   f"minus background underestimates the signal. Move the background ROI away from the signal "
                   f"ROI {sig_roi} so it excludes {where}"
                   + (f", for example background_roi: {moved}" if moved else ", or shrink it to exclude them")
                   + ", and run again.")
    elif contaminated:
        message = (f"contaminated: the background ROI {bg_roi} does not behave like pure background ({stats_text}), "
                   "but no single pixel stands out: the pump-dependence is spread over the whole ROI (scattered "
                   "pump light, a drifting detector or intensity normalisation). Try a background ROI elsewhere on "
                   "the detector and check that the frames are normalised to the incoming intensity.")
    else:
        message = (f"clean: the background ROI {bg_roi} behaves like pure background ({stats_text}); its pixels do "
                   "not respond to the pump, so signal minus background is a fair delay curve.")
        if ks.pvalue < KS_ALPHA:
            message += (" Its p-values are not uniform, though: they pile up near 1, so the shots vary less between "
                        "delays than within one; check whether shots were averaged or the delays were interleaved.")

    with_signal = curve["signal_fraction_significant"] >= SIGNAL_FRACTION
    delays_with_signal = [sig(d) for d in curve.loc[with_signal, "delay_ps"]]
    peak = int(np.argmax(np.abs(curve["change_from_reference"].to_numpy())))
    diagnostics = {
        "verdict": "contaminated" if contaminated else "clean",
        "message": message,
        "background": {
            "roi": bg_roi,
            "n_pixels": int(len(p_all)),
            "n_constant_pixels": int(len(p_all) - n),
            "mean_p": sig(mean_p),
            "expected_mean_p": 0.5,
            "ks_statistic": sig(ks.statistic),
            "ks_pvalue": sig(ks.pvalue),
            "z_score": sig(z),
            "n_responsive_pixels": int(responsive.sum()),
            "responsive_bbox_rows_cols": bbox,
            "suggested_background_roi": moved,
        },
        "signal": {
            "roi": sig_roi,
            "delays_with_signal_ps": delays_with_signal,
            "n_delays_with_signal": len(delays_with_signal),
            "n_delays": int(len(curve)),
            "time_zero_ps": sig(time_zero),
            "n_reference_delays": int(curve["reference_delay"].sum()),
            "peak_delay_ps": sig(curve["delay_ps"].iloc[peak]),
            "peak_change_from_reference": sig(curve["change_from_reference"].iloc[peak]),
            "peak_change_ci95": [sig(curve["change_ci95_low"].iloc[peak]), sig(curve["change_ci95_high"].iloc[peak])],
        },
        "thresholds": {"ks_alpha": KS_ALPHA, "z_limit": Z_LIMIT, "fdr": FDR,
                       "signal_fraction_per_delay": SIGNAL_FRACTION},
    }
    with open(smk.output.diagnostics, "w") as fh:
        json.dump(diagnostics, fh, sort_keys=True, indent=2, ensure_ascii=False)
        fh.write("\n")
    logging.info("%s", message)


main(snakemake)  # noqa: F821 (injected by Snakemake's script directive)
