"""pl-power-series preflight: what the gate proves before any job runs.

Refused, each with the fix: one column named for two of power, wavelength and counts; a table with no row
whose power, wavelength and counts are all numbers (scripts/fit_spectra.py drops every other row, and
would have no spectrum to fit): known from the table's cells (a small table), or from its profile when
one of the three columns has no value at all.

A spectrum with too few points, a peak the fit cannot find or an R² below r2_min is not an error: the
spectrum is marked rejected in fits.csv with a note, and the power law is fitted to the others.

Pure: reads only its arguments (the resolved params and the read-only artifact views the gate passes),
never a file.
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
    table = artifacts.get("spectra_file") or {}
    if found or table.get("profile") is None:
        return found
    return _numeric_row_findings(params, table)


def _number(value):
    """Whether pandas.to_numeric(errors="coerce") makes a number of this cell."""
    if value is None:
        return False
    if isinstance(value, (bool, int, float)):
        return value == value
    try:
        return float(value) == float(value)
    except ValueError:
        return False


def _numeric_row_findings(params, table):
    names = [params[n] for n in COLUMN_PARAMS]
    empty = [n for n in names if table["profile"][n]["kind"] == "empty"]
    cells = table.get("cells")
    if not empty and cells is not None:
        at = [list(table["columns"]).index(n) for n in names]
        if any(all(_number(row[i]) for i in at) for row in cells):
            return []
    elif not empty:
        return []  # the profile alone cannot say whether some row has three numbers: the run says
    why = (f"column `{empty[0]}` has no value" if empty
           else f"none of its {table['rows']} rows has numbers in all of `{'`, `'.join(names)}`")
    return [{"path": "spectra_file",
             "message": f"`spectra_file` {params['spectra_file']} has no spectrum to fit: {why}",
             "hint": "check power_column, wavelength_column and counts_column, and that those columns hold numbers"}]
