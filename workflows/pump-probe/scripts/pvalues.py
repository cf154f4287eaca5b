"""Rule pvalues: the background null distribution and the signal ROI's p-values at every delay.

Statistic, per pixel and delay: Welch's t of that delay's shots against the same
pixel's reference shots, those taken before time zero (no pump yet); a reference
delay is compared with the other reference delays. A pump-induced change at that
delay makes |t| large, whether the pump raises or lowers the counts. The null
distribution is |t| over every background pixel and delay: what the statistic
looks like where the pump does nothing. A signal pixel's p-value at a delay is
the share of the null at least as large as its |t| (+1 corrected, never 0).
Also the background pixels' p-values against their own null (the one-way ANOVA
across delays from extract), which the diagnostics test for uniformity.
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import logging  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402


def fail(message):
    logging.error(message)
    sys.exit(f"pump-probe pvalues: {message}")


def welch_t(shots, reference):
    """(delays x pixels) Welch t of each delay's shots against the reference delays' shots (NaN if none)."""
    n_delays, _, n_pixels = shots.shape
    out = np.full((n_delays, n_pixels), np.nan)
    for d in range(n_delays):
        others = reference.copy()
        others[d] = False  # a reference delay is tested against the other reference delays
        if not others.any():
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # constant pixels: NaN, left out of the null below
            out[d] = stats.ttest_ind(shots[d], shots[others].reshape(-1, n_pixels), axis=0,
                                     equal_var=False).statistic
    return out


def empirical_p(values, null_sorted):
    """P(null >= |value|) with the +1 correction; NaN stays NaN."""
    a = np.abs(values)
    at_least = len(null_sorted) - np.searchsorted(null_sorted, np.nan_to_num(a, nan=np.inf), side="left")
    p = (1.0 + at_least) / (1.0 + len(null_sorted))
    return np.where(np.isfinite(a), p, np.nan)


def main(smk):
    logging.basicConfig(filename=smk.log[0], filemode="w", level=logging.INFO, format="%(levelname)s %(message)s")
    with np.load(smk.input.shots) as data:
        delays, signal, background = data["delays_ps"], data["signal"], data["background"]
        p_map, rows, cols = data["p_map"], data["background_rows"], data["background_cols"]
    t0 = float(smk.params.time_zero_ps)
    reference = delays < t0
    if not reference.any():
        fail(f"no delay before time_zero_ps = {t0:g} ps (delays run from {delays[0]:g} to {delays[-1]:g} ps); every "
             "delay is tested against shots taken before the pump arrives, so record some negative delays or set "
             "time_zero_ps to where the pump really arrives")
    t_signal, t_background = welch_t(signal, reference), welch_t(background, reference)
    null = np.sort(np.abs(t_background[np.isfinite(t_background)]))
    if len(null) == 0:
        fail("every background pixel is constant; choose a background_roi on live pixels")
    p_signal = empirical_p(t_signal, null)
    np.savez(smk.output.pvalues, t_signal=t_signal, t_background=t_background, p_signal=p_signal,
             p_background=p_map[rows, cols], null_abs_t=null, reference=reference, time_zero_ps=t0)
    logging.info("%d reference delays before %g ps; null: %d background values, median |t| %.3f", reference.sum(),
                 t0, len(null), np.median(null))


main(snakemake)  # noqa: F821 (injected by Snakemake's script directive)
