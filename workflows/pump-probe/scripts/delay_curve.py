"""Rule delay_curve: signal minus background per delay, with bootstrap uncertainty and the signal's p-values.

Per delay: the mean count per pixel and shot in each ROI, their difference,
and the pump-induced change: that difference minus its mean over the reference
delays (before time zero).
Uncertainty: the shots of each delay are resampled with replacement
`n_bootstrap` times (the same shots for both ROIs, so shot-to-shot fluctuations
common to the detector cancel as they do in the estimate); the standard
deviation of the resampled differences is the standard error, their 2.5 and
97.5 percentiles the 95 % interval; the change's uncertainty comes from the same
resamples (the reference level resampled with them). From pvalues: the median signal-pixel
p-value and the share of signal pixels significant at a 5 % false discovery
rate (Benjamini-Hochberg across the ROI's pixels) at that delay.
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import logging  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import stats  # noqa: E402

FDR = 0.05
CHUNK = 1000  # resamples drawn at once: bounded memory for any n_bootstrap


def bootstrap(diff_per_shot, n_bootstrap, seed):
    """(n_bootstrap x delays) means of shot-resampled per-shot differences."""
    rng = np.random.default_rng(seed)
    n_delays, n_shots = diff_per_shot.shape
    rows = np.arange(n_delays)[None, :, None]
    out = np.empty((n_bootstrap, n_delays))
    for start in range(0, n_bootstrap, CHUNK):
        size = min(CHUNK, n_bootstrap - start)
        picks = rng.integers(0, n_shots, size=(size, n_delays, n_shots))
        out[start:start + size] = diff_per_shot[rows, picks].mean(axis=2)
    return out


def significant_fraction(p):
    ok = p[np.isfinite(p)]
    return float(np.mean(stats.false_discovery_control(ok) < FDR)) if len(ok) else float("nan")


def main(smk):
    logging.basicConfig(filename=smk.log[0], filemode="w", level=logging.INFO, format="%(levelname)s %(message)s")
    with np.load(smk.input.shots) as data:
        delays, signal, background = data["delays_ps"], data["signal"], data["background"]
    with np.load(smk.input.pvalues) as data:
        p_signal, reference = data["p_signal"], data["reference"]
    signal_shot, background_shot = signal.mean(axis=2), background.mean(axis=2)  # delays x shots
    diff_shot = signal_shot - background_shot
    boot = bootstrap(diff_shot, int(smk.params.n_bootstrap), int(smk.params.seed))
    diff = diff_shot.mean(axis=1)
    change, boot_change = diff - diff[reference].mean(), boot - boot[:, reference].mean(axis=1, keepdims=True)
    table = pd.DataFrame({
        "delay_ps": delays,
        "signal_mean": signal_shot.mean(axis=1),
        "background_mean": background_shot.mean(axis=1),
        "signal_minus_background": diff,
        "bootstrap_se": boot.std(axis=0, ddof=1),
        "ci95_low": np.percentile(boot, 2.5, axis=0),
        "ci95_high": np.percentile(boot, 97.5, axis=0),
        "reference_delay": reference,
        "change_from_reference": change,
        "change_se": boot_change.std(axis=0, ddof=1),
        "change_ci95_low": np.percentile(boot_change, 2.5, axis=0),
        "change_ci95_high": np.percentile(boot_change, 97.5, axis=0),
        "signal_median_p": np.nanmedian(p_signal, axis=1),
        "signal_fraction_significant": [significant_fraction(p) for p in p_signal],
    })
    table.to_csv(smk.output.delay_curve, index=False, float_format="%.6g", lineterminator="\n")
    logging.info("%d delays, %d bootstrap resamples (seed %d)", len(delays), len(boot), int(smk.params.seed))


main(snakemake)  # noqa: F821 (injected by Snakemake's script directive)
