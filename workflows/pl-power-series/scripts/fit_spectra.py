"""Fit the emission peak of every spectrum in a photoluminescence power series.

Per excitation power: optional cosmic-ray despiking (running median of 5 points;
a point more than `despike_threshold` x robust noise above it is replaced by the
median), a fit window of +/- `window_fwhm` x the estimated FWHM around the
maximum, a straight background through the window edges, and a least-squares
peak fit (Voigt, Lorentzian or Gaussian) from deterministic initial guesses.
Writes one row per power to fits.csv and a waterfall plot of data and fits.
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import logging
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import ndimage, optimize
from scipy.special import voigt_profile

MEDIAN_KERNEL = 5        # running-median width (points) for spike detection
NOISE_WINDOW = 21        # width (points) of the running noise estimate
MAD_TO_SIGMA = 1.4826    # median absolute deviation of normal noise x this = its standard deviation
EDGE_FRACTION = 0.10     # share of the window on each side used for the background line
MIN_EDGE_POINTS = 3
MIN_WINDOW_POINTS = 12
MAX_PLOTTED_SPECTRA = 7
GAUSS_FWHM_PER_SIGMA = 2.0 * math.sqrt(2.0 * math.log(2.0))


def robust_noise(y):
    """Local noise standard deviation of every point, from the point-to-point scatter.

    The second difference y[i-1] - 2 y[i] + y[i+1] cancels offsets and slopes, so
    what remains is noise (variance 6 sigma^2) plus the peak's curvature, which
    only raises the estimate near a sharp maximum (a safe direction). Its
    magnitude is averaged over a running window after clipping at 5x the window's
    median, so spikes do not inflate it; the estimate is local because shot noise
    grows with the signal. Floor: the spectrum-wide median estimate.
    """
    d2 = np.abs(y[:-2] - 2.0 * y[1:-1] + y[2:])
    med = ndimage.median_filter(d2, size=NOISE_WINDOW, mode="reflect")
    clipped = np.minimum(d2, 5.0 * med)
    local = ndimage.uniform_filter1d(clipped, NOISE_WINDOW, mode="reflect") * math.sqrt(math.pi / 2.0) / math.sqrt(6.0)
    local = np.concatenate([local[:1], local, local[-1:]])
    overall = MAD_TO_SIGMA * float(np.median(d2)) / math.sqrt(6.0)
    return np.maximum(local, overall)


def despike(y, threshold):
    """Replace cosmic-ray spikes by the running median; return (clean y, number replaced)."""
    if len(y) < MEDIAN_KERNEL:
        return y, 0
    med = ndimage.median_filter(y, size=MEDIAN_KERNEL, mode="nearest")
    # Only points above the median: cosmic rays add counts, they never remove them.
    spikes = (y - med) > threshold * robust_noise(y)
    out = y.copy()
    out[spikes] = med[spikes]
    return out, int(spikes.sum())


def edge_line(x, y):
    """Least-squares line through the outer points of (x, y) on both sides."""
    k = max(MIN_EDGE_POINTS, int(round(EDGE_FRACTION * len(x))))
    xe = np.concatenate([x[:k], x[-k:]])
    ye = np.concatenate([y[:k], y[-k:]])
    slope, intercept = np.polyfit(xe, ye, 1)
    return slope * x + intercept


def estimate_fwhm(x, y, imax):
    """FWHM by walking down both flanks from the maximum to half height (linear interpolation)."""
    half = y[imax] / 2.0
    left = imax
    while left > 0 and y[left] > half:
        left -= 1
    right = imax
    while right < len(y) - 1 and y[right] > half:
        right += 1

    def cross(i, j):
        if y[i] == y[j]:
            return x[i]
        return x[i] + (half - y[i]) * (x[j] - x[i]) / (y[j] - y[i])

    xl = cross(left, left + 1) if y[left] <= half else x[0]
    xr = cross(right - 1, right) if y[right] <= half else x[-1]
    step = float(np.median(np.diff(x)))
    return max(xr - xl, 2.0 * step)


def voigt_fwhm(sigma, gamma):
    """Exact FWHM of a Voigt profile, found numerically."""
    if gamma <= 0:
        return GAUSS_FWHM_PER_SIGMA * sigma
    if sigma <= 0:
        return 2.0 * gamma
    peak = voigt_profile(0.0, sigma, gamma)
    # Olivero-Longbothum approximation brackets the root to well within a factor 2.
    approx = 0.5346 * 2 * gamma + math.sqrt(0.2166 * (2 * gamma) ** 2 + (GAUSS_FWHM_PER_SIGMA * sigma) ** 2)
    half = optimize.brentq(lambda u: voigt_profile(u, sigma, gamma) - peak / 2.0,
                           0.25 * approx, approx, xtol=1e-12, rtol=1e-12)
    return 2.0 * half


PROFILES = {
    # name: (model(x, area, center, *widths), width names, initial widths from a FWHM guess)
    "voigt": (lambda x, a, c, s, g: a * voigt_profile(x - c, s, g),
              ("sigma", "gamma"),
              lambda f: (f / 1.6376 / GAUSS_FWHM_PER_SIGMA, f / 1.6376 / 2.0)),
    "gaussian": (lambda x, a, c, s: a * voigt_profile(x - c, s, 0.0),
                 ("sigma",),
                 lambda f: (f / GAUSS_FWHM_PER_SIGMA,)),
    "lorentzian": (lambda x, a, c, g: a * voigt_profile(x - c, 0.0, g),
                   ("gamma",),
                   lambda f: (f / 2.0,)),
}


def fit_one(x, y, profile, window_fwhm, despike_on, threshold):
    """Despike, window, subtract background and fit one spectrum; return (row, plot data)."""
    n_spikes = 0
    if len(x) < MIN_WINDOW_POINTS:
        return {"n_spikes": 0, "note": f"only {len(x)} wavelengths in this spectrum"}, None
    if despike_on:
        y, n_spikes = despike(y, threshold)
    rough = y - edge_line(x, y)
    imax = int(np.argmax(rough))
    fwhm0 = estimate_fwhm(x, rough, imax)
    lo, hi = x[imax] - window_fwhm * fwhm0, x[imax] + window_fwhm * fwhm0
    inside = (x >= lo) & (x <= hi)
    xw, yw = x[inside], y[inside]
    row = {"n_spikes": n_spikes, "window_min_nm": float(xw[0]), "window_max_nm": float(xw[-1])}
    if len(xw) < MIN_WINDOW_POINTS:
        return row | {"note": f"only {len(xw)} points in the fit window"}, None
    bg = edge_line(xw, yw)
    ys = yw - bg
    jmax = int(np.argmax(ys))
    height = float(ys[jmax])
    row["height"] = height
    if height <= 0:
        return row | {"note": "no peak above the background"}, None

    model, widths, guess_widths = PROFILES[profile]
    scale = height  # fit in units of the peak height so the problem is well conditioned
    f0 = estimate_fwhm(xw, ys, jmax)
    w0 = guess_widths(f0)
    p0 = [1.2 * f0, float(xw[jmax])] + list(w0)
    step = float(np.median(np.diff(xw)))
    lower = [0.0, float(xw[0])] + [1e-3 * step] * len(widths)
    upper = [np.inf, float(xw[-1])] + [10.0 * (xw[-1] - xw[0])] * len(widths)
    try:
        popt, _ = optimize.curve_fit(model, xw, ys / scale, p0=p0, bounds=(lower, upper),
                                     method="trf", max_nfev=5000)
    except (RuntimeError, ValueError) as exc:
        return row | {"note": f"fit failed: {exc}"}, None
    fitted = model(xw, *popt) * scale
    ss_res = float(np.sum((ys - fitted) ** 2))
    ss_tot = float(np.sum((ys - ys.mean()) ** 2))
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else float("nan")
    w = dict(zip(widths, popt[2:]))
    sigma, gamma = float(w.get("sigma", 0.0)), float(w.get("gamma", 0.0))
    row |= {
        "center_nm": float(popt[1]),
        "fwhm_nm": voigt_fwhm(sigma, gamma),
        "gaussian_fwhm_nm": GAUSS_FWHM_PER_SIGMA * sigma,
        "lorentzian_fwhm_nm": 2.0 * gamma,
        "area": float(popt[0]) * scale,
        "r2": r2,
    }
    return row, (xw, ys, fitted)


def load(path, power_col, wl_col, counts_col, unit):
    table = pd.read_csv(path)
    for col in (power_col, wl_col, counts_col):
        if col not in table.columns:
            raise SystemExit(f"column {col!r} not in {path}; columns are {list(table.columns)}")
    df = pd.DataFrame({
        "power": pd.to_numeric(table[power_col], errors="coerce"),
        "wl": pd.to_numeric(table[wl_col], errors="coerce"),
        "counts": pd.to_numeric(table[counts_col], errors="coerce"),
    })
    dropped = int(df.isna().any(axis=1).sum())
    df = df.dropna()
    if unit == "um":
        df["wl"] = df["wl"] * 1000.0
    return df.sort_values(["power", "wl"], kind="mergesort").reset_index(drop=True), dropped


def plot(curves, path):
    fig, ax = plt.subplots(figsize=(7, 6))
    idx = np.unique(np.round(np.linspace(0, len(curves) - 1, min(MAX_PLOTTED_SPECTRA, len(curves)))).astype(int))
    cmap = plt.get_cmap("viridis")
    for k, i in enumerate(idx):
        power, data = curves[i]
        color = cmap(k / max(1, len(idx) - 1))
        if data is None:
            continue
        xw, ys, fitted = data
        norm = fitted.max() if fitted.max() > 0 else 1.0
        ax.plot(xw, ys / norm + k, "o", ms=2.5, mfc="none", mew=0.6, color="0.45")
        ax.plot(xw, fitted / norm + k, "-", lw=1.4, color=color)
        ax.text(xw[-1], k + 0.15, f" {power:.3g} µW", fontsize=8, va="bottom", ha="left", color=color)
    ax.set_xlabel("wavelength (nm)")
    ax.set_ylabel("background-subtracted counts / fitted peak height (offset per power)")
    ax.set_title("Emission spectra and peak fits, one per excitation power (µW)")
    # one legend entry per kind of line; the spectra are told apart by the power written beside each
    ax.plot([], [], "o", ms=2.5, mfc="none", mew=0.6, color="0.45", label="measured spectrum")
    ax.plot([], [], "-", lw=1.4, color=cmap(0.5), label="peak fit (colour: excitation power)")
    ax.legend(fontsize=8, loc="upper left")
    ax.margins(x=0.12)
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(fig)


def main(sm):
    p = sm.params
    logging.basicConfig(filename=sm.log[0], filemode="w", level=logging.INFO, format="%(levelname)s %(message)s")
    df, dropped = load(sm.input.spectra, p.power_column, p.wavelength_column, p.counts_column, p.wavelength_unit)
    if dropped:
        logging.warning("dropped %d rows with missing or non-numeric values", dropped)
    rows, curves = [], []
    for power, group in df.groupby("power", sort=True):
        # Repeated wavelengths at one power are averaged so the spectrum is a function of wavelength.
        spec = group.groupby("wl", sort=True)["counts"].mean()
        x, y = spec.index.to_numpy(float), spec.to_numpy(float)
        row, data = fit_one(x, y, p.profile, p.window_fwhm, p.despike, p.despike_threshold)
        row["power_uW"] = float(power)
        r2 = row.get("r2", float("nan"))
        row["accepted"] = bool(np.isfinite(r2) and r2 >= p.r2_min)
        if not row["accepted"] and "note" not in row:
            row["note"] = f"r2 {r2:.4g} below r2_min {p.r2_min}"
        logging.info("power %.6g uW: %d points, %d spikes, r2 %.5g, accepted %s",
                     power, len(x), row.get("n_spikes", 0), r2, row["accepted"])
        rows.append(row)
        curves.append((float(power), data))
    if not rows:
        raise SystemExit("no spectra: the table has no numeric rows")
    columns = ["power_uW", "center_nm", "fwhm_nm", "height", "area", "r2", "accepted",
               "gaussian_fwhm_nm", "lorentzian_fwhm_nm", "window_min_nm", "window_max_nm", "n_spikes", "note"]
    out = pd.DataFrame(rows).reindex(columns=columns)
    out["note"] = out["note"].astype(object).where(out["note"].notna(), "")
    out.to_csv(sm.output.fits, index=False, float_format="%.8g", lineterminator="\n")
    plot(curves, sm.output.spectra_plot)
    logging.info("%d spectra fitted, %d accepted", len(out), int(out["accepted"].sum()))


main(snakemake)  # noqa: F821 (injected by Snakemake's script: directive)
