"""pl-power-series preflight: cross-field rules the gate proves before any job runs.

Pure: reads only its arguments (the resolved params and the read-only artifact
views the gate passes), never a file.
"""

COLUMN_PARAMS = ("power_column", "wavelength_column", "counts_column")


def preflight(params, artifacts):
    """Gate findings ({path, message, hint}) for params JSON Schema cannot refuse on its own."""
    found = []
    # One column cannot be two axes: the spectra would be fitted against themselves.
    seen = {}
    for name in COLUMN_PARAMS:
        column = params[name]
        if column in seen:
            others = [c for c in artifacts.get("spectra_file", {}).get("columns", ())
                      if c not in {params[n] for n in COLUMN_PARAMS}]
            found.append({
                "path": name,
                "message": (f"`{name}` and `{seen[column]}` both name the column `{column}`; power, wavelength "
                            "and counts must be three different columns of spectra_file"),
                "hint": f"set `{name}` to the column that holds the "
                        f"{name.removesuffix('_column').replace('counts', 'detector counts')}",
                **({"choices": others} if others else {}),
            })
        else:
            seen[column] = name
    return found
