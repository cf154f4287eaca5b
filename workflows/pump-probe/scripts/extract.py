"""Rule extract: the signal and background ROIs' shots, sorted by delay, and a per-pixel delay-dependence map.

Reads `frames` (delays x shots x rows x columns) and `delays_ps` from the .npz
(never with pickle). Writes results/intermediate/roi_shots.npz with, in delay
order: delays_ps; signal and background (delays x shots x pixels, float64);
the pixels' detector rows and columns; the mean image; and p_map, the one-way
ANOVA p-value of every detector pixel across delays (its own null: shots are
exchangeable across delays when the pump does nothing there; NaN for a pixel
that never changes). The gate's preflight proves the ROIs; they are checked
again here for runs without the gate.
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
    sys.exit(f"pump-probe extract: {message}")


def roi_pixels(roi, shape, name):
    r0, r1, c0, c1 = (int(v) for v in roi)
    if not (0 <= r0 < r1 <= shape[0] and 0 <= c0 < c1 <= shape[1]):
        fail(f"{name} {list(roi)} is empty or outside the {shape[0]} x {shape[1]} detector")
    rows, cols = np.mgrid[r0:r1, c0:c1]
    return rows.ravel(), cols.ravel()


def main(smk):
    logging.basicConfig(filename=smk.log[0], filemode="w", level=logging.INFO, format="%(levelname)s %(message)s")
    with np.load(smk.input.frames, allow_pickle=False) as data:
        if "frames" not in data or "delays_ps" not in data:
            fail(f"{smk.input.frames} must hold arrays `frames` and `delays_ps` (it has {sorted(data.files)})")
        frames = data["frames"].astype(np.float64)
        delays = data["delays_ps"].astype(np.float64)
    if frames.ndim != 4 or delays.shape != (frames.shape[0],):
        fail(f"frames {frames.shape} must be delays x shots x rows x columns with one delay each ({delays.shape})")
    if frames.shape[0] < 3 or frames.shape[1] < 2:
        fail(f"at least 3 delays and 2 shots per delay are needed (got {frames.shape[0]} and {frames.shape[1]})")
    if not (np.isfinite(frames).all() and np.isfinite(delays).all()):
        fail("frames and delays_ps must be finite numbers (no NaN or infinity)")
    order = np.argsort(delays, kind="stable")
    frames, delays = frames[order], delays[order]
    shape = frames.shape[2:]
    sig_rows, sig_cols = roi_pixels(smk.params.signal_roi, shape, "signal_roi")
    bg_rows, bg_cols = roi_pixels(smk.params.background_roi, shape, "background_roi")
    if set(zip(sig_rows.tolist(), sig_cols.tolist())) & set(zip(bg_rows.tolist(), bg_cols.tolist())):
        fail("signal_roi and background_roi overlap; move background_roi off the signal")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant (dead or saturated) pixel has no p-value: NaN, counted later
        p_map = stats.f_oneway(*frames, axis=0).pvalue
    np.savez(smk.output.shots, delays_ps=delays,
             signal=frames[:, :, sig_rows, sig_cols], background=frames[:, :, bg_rows, bg_cols],
             signal_rows=sig_rows, signal_cols=sig_cols, background_rows=bg_rows, background_cols=bg_cols,
             signal_roi=np.array(smk.params.signal_roi), background_roi=np.array(smk.params.background_roi),
             mean_image=frames.mean(axis=(0, 1)), p_map=p_map)
    logging.info("%d delays (%.3g to %.3g ps), %d shots, detector %s; %d signal and %d background pixels",
                 len(delays), delays[0], delays[-1], frames.shape[1], shape, len(sig_rows), len(bg_rows))


main(snakemake)  # noqa: F821 (injected by Snakemake's script directive)
