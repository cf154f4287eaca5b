"""Generate the synthetic photoluminescence power-series campaign used by the tests and examples.

21 excitation powers, log-spaced from 0.1 to 100 uW; at each power one emission
spectrum of 200 points between 800 and 900 nm: a Voigt peak near 850 nm on a
linear background, Poisson (shot) noise, integer counts, and a few cosmic-ray
spikes. The peak height follows a broken power law with known exponents,
b = 1.00 below 10 uW and b = 0.60 above, continuous at 10 uW; the line shape does
not change with power, so peak height and peak area share these exponents.

Writes (fixed seed, byte-identical on every run):
  test/data/pl_campaign.csv          long format: power_uW, wavelength_nm, counts
  <repo>/data/examples/pl-campaign.csv     the same table, for the examples
  <repo>/data/examples/pl-campaign-um.csv  the same numbers with the wavelength
      in micrometres, other column names (P_uW, lambda_um, intensity) and the
      rows in another order, to exercise the column and unit params.
Run: python workflows/pl-power-series/test/data/make_data.py
"""
from pathlib import Path

import numpy as np
from scipy.special import voigt_profile

SEED = 20240611
N_POWERS = 21
N_POINTS = 200
WL_MIN_NM, WL_MAX_NM = 800.0, 900.0
CENTER_NM = 850.0
REDSHIFT_NM = 0.6          # centre drifts red by this much over the 3 decades (heating)
SIGMA_NM, GAMMA_NM = 3.5, 2.5  # Voigt Gaussian sigma and Lorentzian HWHM (FWHM ~ 12.6 nm)
HEIGHT_AT_MIN_POWER = 3000.0   # peak counts at 0.1 uW
BOUNDARY_UW = 10.0
B_LOW, B_HIGH = 1.00, 0.60
BACKGROUND_AT_800 = 300.0      # counts
BACKGROUND_SLOPE = -1.0        # counts per nm
# (power index, wavelength index, extra counts): cosmic rays, one of them on the
# peak top of the weakest spectrum and one two pixels wide.
SPIKES = [(0, 99, 4000), (2, 15, 2500), (6, 170, 6000), (6, 171, 3500),
          (11, 60, 9000), (15, 130, 15000), (19, 185, 20000)]

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]


def true_height(power_uw):
    """Peak height (counts) of the broken power law, continuous at the boundary."""
    p0 = 0.1
    h_boundary = HEIGHT_AT_MIN_POWER * (BOUNDARY_UW / p0) ** B_LOW
    if power_uw < BOUNDARY_UW:
        return HEIGHT_AT_MIN_POWER * (power_uw / p0) ** B_LOW
    return h_boundary * (power_uw / BOUNDARY_UW) ** B_HIGH


def make_table():
    rng = np.random.default_rng(SEED)
    powers = np.round(10.0 ** np.linspace(-1.0, 2.0, N_POWERS), 6)
    wl = np.round(np.linspace(WL_MIN_NM, WL_MAX_NM, N_POINTS), 3)
    rows = []
    for i, p in enumerate(powers):
        center = CENTER_NM + REDSHIFT_NM * (np.log10(p) + 1.0) / 3.0
        shape = voigt_profile(wl - center, SIGMA_NM, GAMMA_NM) / voigt_profile(0.0, SIGMA_NM, GAMMA_NM)
        background = BACKGROUND_AT_800 + BACKGROUND_SLOPE * (wl - WL_MIN_NM)
        counts = rng.poisson(true_height(p) * shape + background).astype(np.int64)
        for pi, wi, extra in SPIKES:
            if pi == i:
                counts[wi] += extra
        rows.extend((p, w, c) for w, c in zip(wl, counts))
    return rows


def write_nm(path, rows):
    with open(path, "w", newline="\n") as f:
        f.write("power_uW,wavelength_nm,counts\n")
        for p, w, c in rows:
            f.write(f"{p:.6g},{w:.3f},{c:d}\n")


def write_um(path, rows):
    # Highest power first and wavelength descending: the workflow must not rely on row order.
    with open(path, "w", newline="\n") as f:
        f.write("P_uW,lambda_um,intensity\n")
        for p, w, c in sorted(rows, key=lambda r: (-r[0], -r[1])):
            f.write(f"{p:.6g},{w / 1000.0:.6f},{c:d}\n")


def main():
    rows = make_table()
    write_nm(HERE / "pl_campaign.csv", rows)
    examples = REPO / "data" / "examples"
    examples.mkdir(parents=True, exist_ok=True)
    write_nm(examples / "pl-campaign.csv", rows)
    write_um(examples / "pl-campaign-um.csv", rows)


if __name__ == "__main__":
    main()
