"""The unit a column name ends in, for axis labels: yield_strength_mpa -> MPa, hardness_hv -> HV.

Imported by parity.py and plot_candidates.py (the script folder is on sys.path for Snakemake `script:`
rules). A name without a known unit suffix is labelled as it is.
"""

UNITS = {"hv": "HV", "mpa": "MPa", "gpa": "GPa", "kpa": "kPa", "pa": "Pa", "k": "K", "c": "°C", "ev": "eV",
         "pct": "%", "percent": "%", "gcc": "g/cm³", "mm": "mm", "um": "µm", "nm": "nm", "s": "s", "h": "h",
         "j": "J", "w": "W", "wmk": "W/(m·K)"}


def unit_of(name: str) -> str:
    """'yield_strength_mpa' -> 'MPa'; '' when the name ends in no known unit."""
    suffix = name.rsplit("_", 1)[-1].lower() if "_" in name else ""
    return UNITS.get(suffix, "")


def with_unit(name: str) -> str:
    """'yield_strength_mpa' -> 'yield_strength_mpa (MPa)'."""
    return f"{name} ({unit_of(name)})" if unit_of(name) else name
