"""surrogate-design preflight: cross-field rules the gate proves before any job runs.

Pure: reads only its arguments (the resolved params and the read-only artifact
views the gate passes), never a file. The same rules are enforced again at run
time by scripts/load.py and scripts/propose.py, for runs outside the registry.
"""


def preflight(params, artifacts):
    """Gate findings ({path, message, hint}) for params JSON Schema cannot refuse on its own."""
    del artifacts  # the header checks (x-column-of) already ran; these rules need only the params
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
