"""classifier-benchmark preflight: cross-field rules the gate proves before any job runs.

Pure: reads only its arguments (the resolved params and the read-only artifact
views the gate passes), never a file. scripts/load.py enforces the same rule
again at run time, for runs outside the registry.
"""


def preflight(params, artifacts):
    """Gate findings ({path, message, hint}) for params JSON Schema cannot refuse on its own."""
    table = artifacts.get("dataset")
    if table is None:  # a built-in dataset: its label and features are fixed
        return []
    label = params["label_column"]
    features = [c for c in table["columns"] if c != label]
    if not features:
        return [{
            "path": "dataset",
            "message": (f"`dataset` {params['dataset']} has no column besides the label column `{label}`, "
                        "so there is nothing to learn from"),
            "hint": "use a table with at least one numeric feature column next to the label",
        }]
    return []
