"""Make the hello-world workflow's tiny world cities table (fixed seed): 120 cities in five countries.

The demo downloads MaxMind's worldcitiespop.csv (about 150 MB, under MaxMind's own licence), so none of it is
copied: a table of the same columns is generated here instead, with made-up city names and log-normal
populations. Writes data/hello-world/worldcitiespop.csv under tests/realworkflows/registry/.
Run: python tests/realworkflows/snakemake-hello-world/make_data.py
"""
import csv
import random
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "registry" / "data" / "hello-world"
OUT.mkdir(parents=True, exist_ok=True)
rng = random.Random(20261126)
with open(OUT / "worldcitiespop.csv", "w", newline="") as handle:
    table = csv.writer(handle, lineterminator="\n")
    table.writerow(["Country", "City", "AccentCity", "Region", "Population", "Latitude", "Longitude"])
    for country, (lat, lon) in {"fr": (46.6, 2.4), "at": (47.6, 14.1), "sp": (40.4, -3.7), "de": (51.2, 10.4),
                                "it": (42.8, 12.5)}.items():
        for i in range(24):
            name = "".join(rng.choice("aeioulnrstvkm") for _ in range(rng.randint(4, 9)))
            table.writerow([country, name, name.capitalize(), f"{rng.randint(1, 20):02d}",
                            round(rng.lognormvariate(9, 1.2)), round(lat + rng.uniform(-2, 2), 4),
                            round(lon + rng.uniform(-3, 3), 4)])
