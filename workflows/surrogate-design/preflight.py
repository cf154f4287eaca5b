"""surrogate-design preflight: what the gate proves before any job runs.

Refused, each with the fix:
- a target that is also a feature; a `constraints` key that is not a feature, or one with min > max; an
  `objective` key that is not a target (the params alone);
- a used column (feature or target) that is not numeric, has a missing value or an infinite number; a table
  of fewer than MIN_ROWS rows; 10-fold (5-fold) cross-validation on fewer than 10 (5) rows (the table's
  profile: every row is used, so these are exact);
- sampling bounds that are empty: a constraint's min above the table's largest value of that feature (or
  its max below the smallest), as scripts/propose.py takes a missing bound from the table's range;
- when the features are a composition (every row sums to 100; the table's cells are needed to know):
  minimums adding up to more than 100 or maximums to less than 100, and bounds so tight that the
  rejection sampler (a million draws at most) would almost surely keep fewer than n_candidates: the
  share of the simplex inside the bounds is computed exactly (inclusion-exclusion), and a config is
  refused only when the expected number kept, plus six standard deviations, stays below n_candidates.
  Between that and a sure pass the outcome depends on the random draws: the run says.

Without the table's profile (a large table, a plan step's output) only the params are checked; the scripts
enforce the same rules again at run time (scripts/load.py, scripts/cross_validate.py, scripts/propose.py).

Pure: reads only its arguments (the resolved params and the read-only artifact views the gate passes),
never a file.
"""

import math

MIN_ROWS = 5
FOLDS = {"5-fold": 5, "10-fold": 10}
TOTAL = 100.0
SUM_TOLERANCE = 1e-6 * TOTAL
MAX_DRAWS = 1_000_000
MAX_EXACT_FEATURES = 12  # 2**12 terms of inclusion-exclusion; above it the run says
SHOWN = 5


def preflight(params, artifacts):
    """Gate findings ({path, message, hint, choices?}) for params JSON Schema cannot refuse on its own."""
    found = _param_findings(params)
    table = artifacts.get("dataset_file") or {}
    if found or table.get("profile") is None:
        return found
    found = _table_findings(params, table)
    return found or _bound_findings(params, table)


def _param_findings(params):
    features = list(params["feature_columns"])
    targets = list(params["target_properties"])
    found = []

    both = [c for c in targets if c in features]
    if both:
        found.append({
            "path": "target_properties",
            "message": (f"`target_properties` {both} {'is' if len(both) == 1 else 'are'} also listed in "
                        "`feature_columns`; a target may not also be a feature (the model would be handed "
                        "the answer)"),
            "hint": f"remove {', '.join(both)} from `feature_columns` or from `target_properties`",
            "choices": [c for c in features if c not in both],
        })

    for name in params["constraints"]:
        if name not in features:
            found.append({
                "path": f"constraints.{name}",
                "message": (f"`constraints` has a range for `{name}`, which is not one of `feature_columns` "
                            f"({', '.join(features)}); only features are sampled"),
                "hint": f"add `{name}` to `feature_columns` or remove `constraints.{name}`",
                "choices": features,
            })
    for name, bounds in params["constraints"].items():
        low, high = bounds.get("min"), bounds.get("max")
        if low is not None and high is not None and low > high:
            found.append({
                "path": f"constraints.{name}",
                "message": (f"`constraints.{name}` is an empty range: min {low:g} is greater than max {high:g}"),
                "hint": f"swap them (min: {high:g}, max: {low:g}) or correct the bound you mistyped",
            })

    for name in params["objective"]:
        if name not in targets:
            found.append({
                "path": f"objective.{name}",
                "message": (f"`objective` sets a direction for `{name}`, which is not one of `target_properties` "
                            f"({', '.join(targets)}); only targets are predicted and ranked"),
                "hint": f"add `{name}` to `target_properties` or remove `objective.{name}`",
                "choices": targets,
            })
    return found


def _column_path(params, name):
    for key in ("feature_columns", "target_properties"):
        if name in params[key]:
            return f"{key}[{list(params[key]).index(name)}]"
    return "dataset_file"


def _rows_where(table, name, test):
    """1-based data rows whose cell of `name` passes `test` (the first SHOWN), from the table's cells."""
    cells = table.get("cells")
    if cells is None:
        return []
    at = list(table["columns"]).index(name)
    return [i + 1 for i, row in enumerate(cells) if test(row[at])][:SHOWN]


def _not_a_number(value):
    if not isinstance(value, str):
        return False
    try:
        float(value)
    except ValueError:
        return True
    return False


def _table_findings(params, table):
    found = []
    profile = table["profile"]
    for name in list(params["feature_columns"]) + list(params["target_properties"]):
        column, path = profile[name], _column_path(params, name)
        if column["kind"] == "text":
            rows = _rows_where(table, name, _not_a_number)
            where = f" (data row {rows[0]}: `{table['cells'][rows[0] - 1][list(table['columns']).index(name)]}`)" \
                if rows else ""
            found.append({"path": path, "message": f"column `{name}` of {params['dataset_file']} is not numeric"
                                                   f"{where}; features and targets must be numbers",
                          "hint": f"fix the values of `{name}` in the table, or use another column"})
        elif column["missing"]:
            rows = _rows_where(table, name, lambda v: v is None)
            found.append({"path": path,
                          "message": f"column `{name}` of {params['dataset_file']} has {column['missing']} missing "
                                     f"value(s){f' (data rows {rows})' if rows else ''}; every used column must be "
                                     "complete",
                          "hint": f"fill or drop those rows in the table, or leave `{name}` out"})
        elif column["kind"] == "numeric" and (math.isinf(column["min"]) or math.isinf(column["max"])):
            found.append({"path": path, "message": f"column `{name}` of {params['dataset_file']} holds an infinite "
                                                   "number (inf); no surrogate model takes one",
                          "hint": f"replace the infinite values of `{name}` in the table"})
    rows = table["rows"]
    if rows < MIN_ROWS:
        found.append({"path": "dataset_file",
                      "message": f"`dataset_file` {params['dataset_file']} has {rows} data row(s); at least "
                                 f"{MIN_ROWS} are needed to train and cross-validate a surrogate",
                      "hint": "measure more samples, or give a larger table"})
    elif FOLDS.get(params["validation_strategy"], 0) > rows:
        found.append({"path": "validation_strategy",
                      "message": f"`validation_strategy` {params['validation_strategy']} needs at least "
                                 f"{FOLDS[params['validation_strategy']]} rows; {params['dataset_file']} has {rows}",
                      "hint": "choose leave-one-out (best for small tables)" + (
                          " or 5-fold" if rows >= FOLDS["5-fold"] else ""),
                      "choices": ["leave-one-out"] + (["5-fold"] if rows >= FOLDS["5-fold"] else [])})
    return found


def _bounds(params, profile):
    """Per feature, the sampling range scripts/propose.py uses: a constraint's bound, else the table's."""
    lo, hi = [], []
    for name in params["feature_columns"]:
        given = params["constraints"].get(name) or {}
        lo.append(float(given["min"]) if given.get("min") is not None else float(profile[name]["min"]))
        hi.append(float(given["max"]) if given.get("max") is not None else float(profile[name]["max"]))
    return lo, hi


def _is_composition(params, table):
    """Whether every row's features sum to 100 (None without the table's cells: it cannot be known)."""
    cells = table.get("cells")
    if cells is None:
        return None
    at = [list(table["columns"]).index(name) for name in params["feature_columns"]]
    return all(abs(sum(float(row[i]) for i in at) - TOTAL) <= SUM_TOLERANCE for row in cells)


def _bound_findings(params, table):
    features = list(params["feature_columns"])
    lo, hi = _bounds(params, table["profile"])
    composition = _is_composition(params, table)
    if composition:
        lo = [max(v, 0.0) for v in lo]
        hi = [min(v, TOTAL) for v in hi]
    found = []
    for name, low, high in zip(features, lo, hi):
        if low > high:
            profile = table["profile"][name]
            found.append({"path": f"constraints.{name}",
                          "message": f"the sampling range of `{name}` is empty: from {low:g} to {high:g} (a bound "
                                     f"left out is the table's: {profile['min']:g} to {profile['max']:g}"
                                     f"{'; a composition stays within 0-100' if composition else ''})",
                          "hint": f"set both bounds of `{name}` (min <= max), or one that meets the table's range"})
    if found or not composition:
        return found
    if sum(lo) > TOTAL + SUM_TOLERANCE or sum(hi) < TOTAL - SUM_TOLERANCE:
        return [{"path": "constraints",
                 "message": f"no composition summing to {TOTAL:g} fits the bounds: the minimums add up to "
                            f"{sum(lo):g} and the maximums to {sum(hi):g} (a bound left out is the table's range)",
                 "hint": "loosen the constraints: the minimums must add up to at most 100 and the maximums to at "
                         "least 100"}]
    share = _simplex_share(lo, hi)
    if share is None:
        return []
    expected = MAX_DRAWS * share
    if expected + 6 * math.sqrt(expected * (1 - share)) < params["n_candidates"]:
        return [{"path": "constraints",
                 "message": f"the bounds keep about {share:.2g} of the compositions summing to {TOTAL:g}: of the "
                            f"{MAX_DRAWS:,} the sampler draws at most, about {expected:.0f} would fit, fewer than "
                            f"n_candidates {params['n_candidates']}",
                 "hint": "loosen the constraints, or ask for fewer candidates (n_candidates)"}]
    return []


def _simplex_share(lo, hi):
    """The share of the compositions x >= lo (summing to 100) that also have x <= hi: by inclusion-exclusion
    over the upper bounds of a uniform point on the simplex of side R = 100 - sum(lo). None when too many
    features to sum exactly."""
    d = len(lo)
    room = TOTAL - sum(lo)
    if room <= 0:
        return 1.0
    slack = [h - l for l, h in zip(lo, hi)]
    if d == 1:
        return 1.0 if slack[0] >= room else 0.0
    if d > MAX_EXACT_FEATURES:
        return None
    share = 0.0
    for mask in range(1 << d):
        used = [slack[i] for i in range(d) if mask >> i & 1]
        sign = -1.0 if len(used) % 2 else 1.0
        share += sign * max(0.0, 1.0 - sum(used) / room) ** (d - 1)
    return min(1.0, max(0.0, share))
