"""Generate the tabular-profile demo and test tables (synthetic, penguin-like, fixed seed).

Writes:
  data/examples/tabular-penguins.csv                        (~150 rows, demo data)
  workflows/tabular-profile/test/data/penguins-small.csv    (~40 rows, test input)

Both tables carry a few missing values (numeric and categorical) and a few exact
duplicate rows, so every branch of the clean step is exercised. Run from anywhere:
  python workflows/tabular-profile/test/data/make_data.py
"""
import csv
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]  # registry root: workflows/tabular-profile/test/data -> root

# Per-species means and standard deviations, loosely after the Palmer penguins.
SPECIES = {
    "Adelie": {"islands": ["Torgersen", "Biscoe", "Dream"],
               "bill_length_mm": (38.8, 2.7), "bill_depth_mm": (18.3, 1.2),
               "flipper_length_mm": (190.0, 6.5), "body_mass_g": (3700.0, 460.0)},
    "Chinstrap": {"islands": ["Dream"],
                  "bill_length_mm": (48.8, 3.3), "bill_depth_mm": (18.4, 1.1),
                  "flipper_length_mm": (196.0, 7.1), "body_mass_g": (3733.0, 384.0)},
    "Gentoo": {"islands": ["Biscoe"],
               "bill_length_mm": (47.5, 3.1), "bill_depth_mm": (15.0, 1.0),
               "flipper_length_mm": (217.0, 6.5), "body_mass_g": (5076.0, 504.0)},
}
# Adelie is the most common species and Biscoe the most common island, so the
# "top" of each categorical column is unambiguous.
SPECIES_WEIGHTS = [0.46, 0.2, 0.34]
COLUMNS = ["species", "island", "bill_length_mm", "bill_depth_mm",
           "flipper_length_mm", "body_mass_g", "sex", "year"]


def make_table(rng, n_rows, n_missing, n_duplicates):
    """Return a list of row dicts with n_missing blank cells and n_duplicates repeated rows."""
    names = list(SPECIES)
    rows = []
    for _ in range(n_rows):
        species = names[rng.choice(len(names), p=SPECIES_WEIGHTS)]
        spec = SPECIES[species]
        islands = spec["islands"]
        row = {
            "species": species,
            "island": islands[rng.integers(len(islands))],
            "bill_length_mm": f"{rng.normal(*spec['bill_length_mm']):.1f}",
            "bill_depth_mm": f"{rng.normal(*spec['bill_depth_mm']):.1f}",
            "flipper_length_mm": str(int(round(rng.normal(*spec["flipper_length_mm"])))),
            "body_mass_g": str(int(round(rng.normal(*spec["body_mass_g"]) / 25.0) * 25)),
            "sex": "female" if rng.random() < 0.5 else "male",
            "year": str(2007 + int(rng.integers(3))),
        }
        rows.append(row)
    # Blank cells: numeric and categorical, never in the species column.
    blankable = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "sex"]
    cells = set()
    while len(cells) < n_missing:
        cells.add((int(rng.integers(n_rows)), blankable[int(rng.integers(len(blankable)))]))
    for i, col in sorted(cells):
        rows[i][col] = ""
    # Exact copies of complete rows, inserted right after the original.
    complete = [i for i, r in enumerate(rows) if all(r[c] != "" for c in COLUMNS)]
    picks = sorted(int(i) for i in rng.choice(complete, size=n_duplicates, replace=False))
    for offset, i in enumerate(picks):
        rows.insert(i + offset + 1, dict(rows[i + offset]))
    return rows


def write(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {path.relative_to(ROOT)} ({len(rows)} rows)")


def main():
    write(ROOT / "data/examples/tabular-penguins.csv",
          make_table(np.random.default_rng(20240601), n_rows=146, n_missing=8, n_duplicates=4))
    write(HERE / "penguins-small.csv",
          make_table(np.random.default_rng(7), n_rows=37, n_missing=5, n_duplicates=3))


if __name__ == "__main__":
    main()
