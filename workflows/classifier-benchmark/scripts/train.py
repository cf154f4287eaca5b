"""Rule `train`: fit the chosen classifier on the training rows; pickle it and describe it in JSON.

Two classes: one coefficient per feature (towards the second class). More: a multinomial logistic
regression with one row of coefficients per class, keyed by the class as text.
"""
import os

# Single-threaded BLAS keeps floating-point results identical from run to run.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import json
import logging
import pickle
import warnings

import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

N_ESTIMATORS = 200


def fmt(x):
    """Round to 10 significant digits so the JSON text is stable."""
    return float(f"{float(x):.10g}")


def build(model, C, max_iter, seed):
    if model == "logistic_regression":
        return LogisticRegression(C=C, max_iter=max_iter, solver="lbfgs", random_state=seed)
    if model == "random_forest":
        return RandomForestClassifier(n_estimators=N_ESTIMATORS, random_state=seed, n_jobs=1)
    raise SystemExit(f"classifier-benchmark train: unknown model {model!r}")


def main(smk):
    logging.basicConfig(filename=smk.log[0], filemode="w", level=logging.INFO,
                        format="%(levelname)s %(message)s")
    p = smk.params
    model, C, max_iter, seed = p.model, float(p.C), int(p.max_iter), int(p.seed)
    standardize = bool(p.standardize)

    train = pd.read_csv(smk.input.train)
    label = train.columns[-1]
    features = list(train.columns[:-1])
    X, y = train[features], train[label]

    # Scaling lives inside the pipeline so it is fitted on training rows only
    # and re-applied unchanged to the test rows.
    steps = [("scaler", StandardScaler())] if standardize else []
    steps.append(("model", build(model, C, max_iter, seed)))
    pipeline = Pipeline(steps)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        pipeline.fit(X, y)
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    if not converged:
        logging.warning("lbfgs did not converge within max_iter=%d; raise max_iter", max_iter)

    estimator = pipeline.named_steps["model"]
    classes = estimator.classes_.tolist()
    binary = len(classes) == 2
    summary = {
        "model": model,
        "label_column": label,
        "classes": classes,
        # precision, recall and F1 of a two-class problem refer to the second class in sorted order
        "positive_class": classes[1] if binary else None,
        "standardized": standardize,
        "n_train": int(len(train)),
        "n_features": len(features),
    }
    if model == "logistic_regression":
        summary["hyperparameters"] = {"C": C, "max_iter": max_iter, "solver": "lbfgs", "random_state": seed}
        if binary:
            # Positive coefficient = pushes towards positive_class (in standard deviations when standardized).
            summary["coefficients"] = {f: fmt(c) for f, c in zip(features, estimator.coef_[0])}
            summary["intercept"] = fmt(estimator.intercept_[0])
        else:
            # Multinomial: one row of coefficients per class (positive = pushes towards that class).
            summary["coefficients"] = {str(k): {f: fmt(c) for f, c in zip(features, row)}
                                       for k, row in zip(classes, estimator.coef_)}
            summary["intercept"] = {str(k): fmt(v) for k, v in zip(classes, estimator.intercept_)}
        summary["n_iter"] = int(estimator.n_iter_[0])
        summary["converged"] = converged
    else:
        summary["hyperparameters"] = {"n_estimators": N_ESTIMATORS, "random_state": seed, "n_jobs": 1}
        summary["feature_importances"] = {f: fmt(v) for f, v in zip(features, estimator.feature_importances_)}

    with open(smk.output.model, "wb") as fh:
        pickle.dump({"pipeline": pipeline, "features": features, "label_column": label,
                     "model": model, "n_train": int(len(train))}, fh, protocol=4)
    with open(smk.output.summary, "w") as fh:
        json.dump(summary, fh, sort_keys=True, indent=2)
        fh.write("\n")
    logging.info("trained %s on %d rows x %d features; classes %s", model, len(train), len(features), classes)


main(snakemake)  # noqa: F821 (injected by Snakemake's script directive)
