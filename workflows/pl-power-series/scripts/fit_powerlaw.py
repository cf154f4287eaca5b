"""Fit the power law I = a * P^b to the accepted peak fits, split at the saturation boundary.

Each segment is an ordinary least-squares line of log10(I) against log10(P) (P in uW):
b is the slope, log10(a) the intercept, so a is the intensity at P = 1 uW. Reports
a, b, their standard errors, R^2 and the number of points per segment.
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import json
import logging
import math

import numpy as np
import pandas as pd

METRIC_COLUMN = {"peak_height": "height", "fit_area": "area"}
METRIC_UNIT = {"peak_height": "counts", "fit_area": "counts*nm"}


def num(x):
    """A JSON-safe float with 10 significant digits (None for missing or non-finite)."""
    if x is None or not math.isfinite(x):
        return None
    return float(f"{x:.10g}")


def loglog_fit(p, i):
    """OLS of log10 i on log10 p; returns a dict of a, b, standard errors and R^2."""
    x, y = np.log10(p), np.log10(i)
    n = len(x)
    out = {"n_points": n, "a": None, "a_se": None, "log10_a": None, "log10_a_se": None,
           "b": None, "b_se": None, "r2": None,
           "power_min_uW": num(float(p.min())) if n else None,
           "power_max_uW": num(float(p.max())) if n else None}
    if n == 0:
        out["note"] = "no accepted spectra in this power range: no fit"
        return out
    if n < 2 or np.ptp(x) == 0:
        out["note"] = "fewer than 2 distinct powers: no fit"
        return out
    xm, ym = x.mean(), y.mean()
    sxx = float(np.sum((x - xm) ** 2))
    b = float(np.sum((x - xm) * (y - ym)) / sxx)
    c = ym - b * xm
    resid = y - (c + b * x)
    ss_res, ss_tot = float(np.sum(resid ** 2)), float(np.sum((y - ym) ** 2))
    out |= {"b": num(b), "log10_a": num(c), "a": num(10.0 ** c),
            "r2": num(1.0 - ss_res / ss_tot) if ss_tot > 0 else None}
    if n > 2:
        s2 = ss_res / (n - 2)
        b_se = math.sqrt(s2 / sxx)
        c_se = math.sqrt(s2 * (1.0 / n + xm ** 2 / sxx))
        # a = 10^c, so its standard error follows from the delta method.
        out |= {"b_se": num(b_se), "log10_a_se": num(c_se), "a_se": num(10.0 ** c * math.log(10.0) * c_se)}
    else:
        out["note"] = "2 points: exact line, no standard errors"
    return out


def main(sm):
    logging.basicConfig(filename=sm.log[0], filemode="w", level=logging.INFO, format="%(levelname)s %(message)s")
    metric, boundary = sm.params.intensity_metric, sm.params.saturation_boundary
    fits = pd.read_csv(sm.input.fits)
    col = METRIC_COLUMN[metric]
    accepted = fits[fits["accepted"].astype(bool)]
    usable = accepted[(accepted["power_uW"] > 0) & (accepted[col] > 0)]
    excluded = len(accepted) - len(usable)
    if excluded:
        logging.warning("%d accepted fits have power or %s <= 0 and cannot enter a log-log fit", excluded, col)
    p, i = usable["power_uW"].to_numpy(float), usable[col].to_numpy(float)
    if boundary is None:
        segments = [dict(name="all", range_uW=[None, None], **loglog_fit(p, i))]
    else:
        low, high = p < boundary, p >= boundary
        segments = [dict(name="below_boundary", range_uW=[None, num(boundary)], **loglog_fit(p[low], i[low])),
                    dict(name="above_boundary", range_uW=[num(boundary), None], **loglog_fit(p[high], i[high]))]
    for s in segments:
        logging.info("segment %s: n=%d b=%s +/- %s R2=%s", s["name"], s["n_points"], s["b"], s["b_se"], s["r2"])
    result = {
        "model": "I = a * P^b, fitted as log10(I) = log10(a) + b*log10(P), P in uW",
        "intensity_metric": metric,
        "intensity_unit": METRIC_UNIT[metric],
        "saturation_boundary_uW": num(boundary) if boundary is not None else None,
        "n_spectra": int(len(fits)),
        "n_accepted": int(len(accepted)),
        "n_rejected": int(len(fits) - len(accepted)),
        "n_excluded_nonpositive": int(excluded),
        "segments": segments,
    }
    with open(sm.output.powerlaw, "w") as f:
        json.dump(result, f, sort_keys=True, indent=2)
        f.write("\n")


main(snakemake)  # noqa: F821 (injected by Snakemake's script: directive)
