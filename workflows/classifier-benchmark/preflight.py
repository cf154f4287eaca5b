"""classifier-benchmark preflight: what the gate can prove about the table before any job runs.

Refused, each with the fix:
- the label column among the features, or no feature at all;
- a feature or the label with no value in any row (every row would be dropped);
- fewer than two classes in the rows without a missing value;
- a class too small for the stratified split: fewer than two rows, fewer test or training rows than
  classes, or a class whose share of the held-out rows rounds to none (or to all its rows). The counts
  are sklearn train_test_split's own (its `_approximate_mode`, replayed here; where it breaks a tie at
  random, a class that may lose its only row on one side is refused for every seed);
- a text feature with more than MAX_ONE_HOT_CATEGORIES categories under one_hot;
- a numeric feature holding an infinite number (no scikit-learn model takes one);
- for the built-in dataset, a feature_columns name it does not have.

What it knows: with the table's cells (a small table) it replays scripts/load.py exactly: the rows it keeps
(no missing feature or label), their classes and categories. With only the table's profile it proves
what holds whatever rows are dropped, and the rest only when no used column has a missing value. Without
a profile (a large table, or a plan step's output that does not exist yet) it checks the column names
only, and scripts/load.py and scripts/split.py say the rest when the run reads the rows.

Pure: reads only its arguments (the resolved params and the read-only artifact views the gate passes),
never a file. The scripts enforce the same rules again at run time, for runs outside the registry.
"""

import math

MAX_ONE_HOT_CATEGORIES = 50
SHOWN = 8
FRACTIONS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
BUILTIN_FEATURES = (
    "mean radius", "mean texture", "mean perimeter", "mean area", "mean smoothness", "mean compactness",
    "mean concavity", "mean concave points", "mean symmetry", "mean fractal dimension", "radius error",
    "texture error", "perimeter error", "area error", "smoothness error", "compactness error", "concavity error",
    "concave points error", "symmetry error", "fractal dimension error", "worst radius", "worst texture",
    "worst perimeter", "worst area", "worst smoothness", "worst compactness", "worst concavity",
    "worst concave points", "worst symmetry", "worst fractal dimension",
)


def listed(values):
    shown = ", ".join(f"`{v}`" for v in values[:SHOWN])
    return shown + (f", … ({len(values)} in all)" if len(values) > SHOWN else "")


def finding(path, message, hint, choices=None):
    item = {"path": path, "message": message, "hint": hint}
    if choices:
        item["choices"] = list(choices)
    return item


def preflight(params, artifacts):
    """Gate findings ({path, message, hint, choices?}) for a config that passes the contract but cannot run."""
    table = artifacts.get("dataset")
    if table is None:
        return _builtin_findings(params)
    label = params["label_column"]
    chosen = params.get("feature_columns")
    features = list(chosen) if chosen else [c for c in table["columns"] if c != label]
    if chosen and label in features:
        others = [c for c in table["columns"] if c != label]
        return [finding(f"feature_columns[{features.index(label)}]",
                        f"`feature_columns` lists the label column `{label}`: the model would be handed the answer",
                        f"remove `{label}` from feature_columns, or choose another label_column", others)]
    if not features:
        return [finding("dataset", f"`dataset` {params['dataset']} has no column besides the label column "
                                   f"`{label}`, so there is nothing to learn from",
                        "use a table with at least one feature column next to the label")]
    profile = table.get("profile")
    if profile is None:
        return []  # a large table or a plan step's output: the run's checks speak for the rows
    return _table_findings(params, table, profile, features, label)


def _builtin_findings(params):
    chosen = list(params.get("feature_columns") or ())
    wrong = [(i, c) for i, c in enumerate(chosen) if c not in BUILTIN_FEATURES]
    return [finding(f"feature_columns[{i}]",
                    f"`feature_columns[{i}]` `{c}` is not a feature of {params['dataset']}"
                    + (" (`target` is its label)" if c == "target" else ""),
                    "use its feature names (e.g. `mean radius`), or leave feature_columns out for all 30",
                    BUILTIN_FEATURES) for i, c in wrong]


def _table_findings(params, table, profile, features, label):
    found = []
    used = features + [label]
    for name in used:
        if profile[name]["kind"] == "empty":
            role = "label column" if name == label else "feature"
            found.append(finding("label_column" if name == label else _feature_path(params, name),
                                 f"the {role} `{name}` has no value in any row of {params['dataset']}, so every "
                                 "row would be dropped",
                                 "choose a column that holds values" if name == label else
                                 f"leave `{name}` out with feature_columns"))
    if found:
        return found
    rows = _kept_rows(table, used)
    exact = rows is not None or all(profile[name]["missing"] == 0 for name in used)
    found += _class_findings(params, profile[label], rows, used.index(label), exact, table["rows"])
    found += _feature_findings(params, profile, features, rows, used, exact)
    return found


def _feature_path(params, name):
    chosen = params.get("feature_columns")
    return f"feature_columns[{list(chosen).index(name)}]" if chosen and name in chosen else "feature_columns"


def _kept_rows(table, used):
    """The rows scripts/load.py keeps (no missing value in a used column), each a tuple of the used columns'
    values in `used` order; None without the table's cells."""
    cells = table.get("cells")
    if cells is None:
        return None
    at = [list(table["columns"]).index(name) for name in used]
    kept = []
    for row in cells:
        values = tuple(row[i] for i in at)
        if all(v is not None for v in values):
            kept.append(values)
    return kept


def _class_counts(label_profile, rows, at, exact):
    """{class: rows} of the kept rows, or None when it cannot be known."""
    if rows is not None:
        counts = {}
        for row in rows:
            counts[row[at]] = counts.get(row[at], 0) + 1
        return counts
    if exact and label_profile["values"] is not None:
        return {value: n for value, n in label_profile["values"]}
    return None


def _class_findings(params, label_profile, rows, at, exact, total_rows):
    label = params["label_column"]
    counts = _class_counts(label_profile, rows, at, exact)
    if counts is None:
        # Only the profile: at most `distinct` classes survive the dropped rows; with no row dropped, a label
        # with more distinct values than half its rows has a class of a single row.
        if label_profile["distinct"] < 2 and not label_profile["distinct_capped"]:
            return [_too_few_classes(params, [v for v, _ in label_profile["values"] or ()])]
        if exact and (label_profile["distinct_capped"] or 2 * label_profile["distinct"] > total_rows):
            return [finding("label_column",
                            f"`label_column` `{label}` has {label_profile['distinct']}"
                            f"{'+' if label_profile['distinct_capped'] else ''} distinct values in {total_rows} rows, "
                            "so some class has a single row: it looks like a measurement, not a class",
                            "choose the column that holds the class to predict (a few values, each in several rows)")]
        return []
    if len(counts) < 2:
        return [_too_few_classes(params, list(counts))]
    return _split_findings(params, counts)


def _too_few_classes(params, classes):
    label = params["label_column"]
    return finding("label_column",
                   f"`label_column` `{label}` holds {len(classes)} class{'es' if len(classes) != 1 else ''} "
                   f"({listed(classes)}) in the rows without a missing value; a classifier needs at least two",
                   "choose the column that holds the outcome to predict (two or more values)")


def _train_counts(counts, n_train):
    """Per class, the fewest and the most training rows sklearn's stratified split can give it: its
    `_approximate_mode` (floor of each class's share, the rest to the largest remainders, ties broken at
    random: a class in a tie that is only partly served may get either)."""
    total = sum(counts)
    shares = [c / total * n_train for c in counts]
    low = [math.floor(x) for x in shares]
    high = list(low)
    need = n_train - sum(low)
    remainders = [x - f for x, f in zip(shares, low)]
    for value in sorted(set(remainders), reverse=True):
        if need <= 0:
            break
        tied = [i for i, r in enumerate(remainders) if r == value]
        served = min(len(tied), need)
        for i in tied:
            high[i] += 1
            if served == len(tied):
                low[i] += 1
        need -= served
    return low, high


def _split_problem(counts, fraction):
    """None when the stratified split keeps every class on both sides for every seed, else a sentence."""
    classes = sorted(counts, key=str)
    sizes = [counts[c] for c in classes]
    n = sum(sizes)
    n_test = math.ceil(fraction * n)
    n_train = n - n_test
    single = [c for c in classes if counts[c] < 2]
    if single:
        return f"class(es) {listed(single)} have a single row; every class needs at least two"
    if n_test < len(classes) or n_train < len(classes):
        return (f"{n} rows with test_fraction {fraction:g} give {n_train} training and {n_test} held-out rows, "
                f"fewer than the {len(classes)} classes")
    low, high = _train_counts(sizes, n_train)
    lost_train = [c for c, lo in zip(classes, low) if lo == 0]
    lost_test = [c for c, hi, size in zip(classes, high, sizes) if size - hi == 0]
    if lost_train or lost_test:
        side, lost = ("training", lost_train) if lost_train else ("held-out", lost_test)
        return (f"the stratified split of {n} rows with test_fraction {fraction:g} can leave class(es) "
                f"{listed(lost)} without a {side} row (class counts: "
                f"{', '.join(f'{c}: {counts[c]}' for c in classes[:SHOWN])})")
    return None


def _split_findings(params, counts):
    fraction = params["test_fraction"]
    problem = _split_problem(counts, fraction)
    if problem is None:
        return []
    label = params["label_column"]
    single = [c for c in counts if counts[c] < 2]
    if len(counts) > 20 and 2 * len(single) > len(counts):
        return [finding("label_column",
                        f"`label_column` `{label}` has {len(counts)} distinct values and {len(single)} of them occur "
                        "in a single row: it looks like a measurement or an identifier, not a class",
                        "choose the column that holds the class to predict (a few values, each in several rows)")]
    working = [f for f in FRACTIONS if _split_problem(counts, f) is None]
    if working:
        return [finding("test_fraction", f"{problem}: the held-out rows could not score every class of `{label}`",
                        f"set test_fraction to {', '.join(f'{f:g}' for f in working[:4])} (each keeps every class on "
                        "both sides), or drop the rare classes from the table")]
    return [finding("label_column", f"{problem}: no test_fraction from 0.1 to 0.5 keeps every class of `{label}` "
                                    "on both sides of the split",
                    "drop or merge the rare classes in the table, add rows, or choose another label_column")]


def _feature_findings(params, profile, features, rows, used, exact):
    found = []
    for name in features:
        column = profile[name]
        path = _feature_path(params, name)
        if column["kind"] == "text" and params["categorical_encoding"] == "one_hot":
            categories = _categories(column, rows, used.index(name), exact)
            if categories is not None and categories > MAX_ONE_HOT_CATEGORIES:
                found.append(finding(
                    path, f"the text feature `{name}` has {categories}{'+' if column['distinct_capped'] else ''} "
                          f"categories, more than the {MAX_ONE_HOT_CATEGORIES} one_hot encodes (an identifier or free "
                          "text teaches a classifier nothing)",
                    f"leave `{name}` out with feature_columns, or set categorical_encoding: ordinal"))
        if column["kind"] == "numeric" and _infinite(column, rows, used.index(name), exact):
            found.append(finding(path, f"the feature `{name}` holds an infinite number (inf); no scikit-learn model "
                                       "takes one",
                                 f"replace the infinite values of `{name}` in the table, or leave it out with "
                                 "feature_columns"))
    return found


def _categories(column, rows, at, exact):
    if rows is not None:
        return len({str(row[at]) for row in rows})
    return column["distinct"] if exact else None


def _infinite(column, rows, at, exact):
    if rows is not None:
        return any(isinstance(row[at], float) and math.isinf(row[at]) for row in rows)
    return exact and (math.isinf(column["min"]) or math.isinf(column["max"]))
