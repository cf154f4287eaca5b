"""Generate the synthetic alloy table used by the surrogate-design tests and example (fixed seed).

80 quaternary Fe-Ni-Co-Cr alloys (at.%, each row sums to exactly 100) with two
properties that are known smooth functions of composition plus small noise:

  hardness_hv        = 140 + 260 c + 90 n + 420 c n - 120 k^2 + 60 f c        + N(0, 3)
  yield_strength_mpa = 220 + 180 sin(pi n) + 350 c f + 140 k (1 - c) - 90 c^2  + N(0, 5)

with f, n, k, c the Fe, Ni, Co, Cr atom fractions. A surrogate that learns these
well (cross-validated R^2 >= 0.9) and proposes Cr/Ni-rich alloys behaves as it should.

Writes:
  workflows/surrogate-design/test/data/alloys.csv   (test input)
  data/examples/surrogate-alloys.csv                (example data, same content)
Run from anywhere:  python workflows/surrogate-design/test/data/make_data.py
"""
import csv
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]  # registry root: workflows/surrogate-design/test/data -> root
N_ROWS = 80
SEED = 20240611
ELEMENTS = ["Fe", "Ni", "Co", "Cr"]


def hardness(f, n, k, c):
    return 140 + 260 * c + 90 * n + 420 * c * n - 120 * k ** 2 + 60 * f * c


def yield_strength(f, n, k, c):
    return 220 + 180 * np.sin(np.pi * n) + 350 * c * f + 140 * k * (1 - c) - 90 * c ** 2


def make_rows():
    rng = np.random.default_rng(SEED)
    rows = []
    for i in range(N_ROWS):
        x = rng.dirichlet([2.0, 2.0, 2.0, 2.0]) * 100
        # Two decimals like a real composition sheet; Cr takes the remainder so the row sums to 100.
        fe, ni, co = (round(float(v), 2) for v in x[:3])
        cr = round(100.0 - fe - ni - co, 2)
        f, n, k, c = fe / 100, ni / 100, co / 100, cr / 100
        hv = hardness(f, n, k, c) + rng.normal(0, 3)
        ys = yield_strength(f, n, k, c) + rng.normal(0, 5)
        rows.append([f"A{i + 1:03d}", fe, ni, co, cr, round(float(hv), 1), round(float(ys), 1)])
    return rows


def main():
    rows = make_rows()
    header = ["alloy_id", *ELEMENTS, "hardness_hv", "yield_strength_mpa"]
    for out in (HERE / "alloys.csv", ROOT / "data" / "examples" / "surrogate-alloys.csv"):
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "w", newline="") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(header)
            writer.writerows(rows)
        print(f"wrote {out} ({len(rows)} rows)")


if __name__ == "__main__":
    main()
