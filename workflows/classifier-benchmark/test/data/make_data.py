"""Generate the synthetic two-class "wine quality" table used by the examples and the csv test case.

Run from anywhere: python workflows/classifier-benchmark/test/data/make_data.py
It writes the same fixed-seed table to test/data/classifier-wine.csv (test input)
and to data/examples/classifier-wine.csv (example input) at the registry root.
"""
from pathlib import Path

import pandas as pd
from sklearn.datasets import make_classification

SEED = 20240611
FEATURES = ["alcohol", "volatile_acidity", "citric_acid", "residual_sugar", "sulphates", "ph"]

HERE = Path(__file__).resolve().parent
REGISTRY = HERE.parents[3]


def make_table():
    X, y = make_classification(n_samples=200, n_features=len(FEATURES), n_informative=4,
                               n_redundant=1, n_repeated=0, n_classes=2, class_sep=1.0,
                               flip_y=0.03, random_state=SEED)
    table = pd.DataFrame(X, columns=FEATURES).round(4)
    # The label sits in the middle, not last, to prove the workflow finds it by name.
    table.insert(3, "quality_class", y)
    return table


def main():
    table = make_table()
    for path in (HERE / "classifier-wine.csv", REGISTRY / "data" / "examples" / "classifier-wine.csv"):
        path.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(path, index=False, float_format="%.4f", lineterminator="\n")
        print(f"wrote {path} ({len(table)} rows)")


if __name__ == "__main__":
    main()
