"""Rule `evaluate`: score the trained model on the held-out rows; write metrics and a confusion matrix.

Two classes: precision, recall and F1 of the second class in sorted order (`positive_class`), ROC AUC of
its probability (`average: binary`). More classes: the three macro-averaged (every class weighs the same)
and ROC AUC one-vs-rest, macro-averaged (`average: macro`, `positive_class: null`).
"""
import os

# Single-threaded BLAS keeps floating-point results identical from run to run.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import json
import logging
import pickle
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.metrics import (accuracy_score, balanced_accuracy_score, confusion_matrix, f1_score,  # noqa: E402
                             precision_score, recall_score, roc_auc_score)


def fmt(x):
    """Round to 10 significant digits so the JSON text is stable."""
    return float(f"{float(x):.10g}")


def plot_confusion(matrix, classes, title, path):
    k = len(classes)
    fig, ax = plt.subplots(figsize=(4.2, 3.8) if k == 2 else (max(4.2, 1.6 + 0.8 * k), max(3.8, 1.4 + 0.7 * k)))
    ax.imshow(matrix, cmap="Blues", vmin=0)
    threshold = matrix.max() / 2
    for i in range(matrix.shape[0]):
        for j in range(matrix.shape[1]):
            ax.text(j, i, str(matrix[i, j]), ha="center", va="center",
                    color="white" if matrix[i, j] > threshold else "black", fontsize=14 if k <= 6 else 9)
    ticks = range(len(classes))
    ax.set_xticks(ticks, [str(c) for c in classes])
    ax.set_yticks(ticks, [str(c) for c in classes])
    ax.set_xlabel("predicted class")
    ax.set_ylabel("true class")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    # No Software tag: the PNG bytes must not depend on the matplotlib version string.
    fig.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(fig)


def main(smk):
    logging.basicConfig(filename=smk.log[0], filemode="w", level=logging.INFO,
                        format="%(levelname)s %(message)s")
    with open(smk.input.model, "rb") as fh:
        bundle = pickle.load(fh)
    pipeline, features = bundle["pipeline"], bundle["features"]
    test = pd.read_csv(smk.input.test)
    label = test.columns[-1]
    if list(test.columns[:-1]) != features:
        message = "test table columns differ from the training features"
        logging.error(message)
        sys.exit(f"classifier-benchmark evaluate: {message}")
    X, y = test[features], test[label]

    classes = pipeline.classes_.tolist()
    predicted = pipeline.predict(X)
    proba = pipeline.predict_proba(X)
    if len(classes) == 2:
        positive = classes[1]
        scores = {"average": "binary", "positive_class": positive,
                  "precision": precision_score(y, predicted, pos_label=positive, zero_division=0),
                  "recall": recall_score(y, predicted, pos_label=positive, zero_division=0),
                  "f1": f1_score(y, predicted, pos_label=positive, zero_division=0),
                  "roc_auc": roc_auc_score(y == positive, proba[:, 1])}
    else:
        # every class weighs the same (macro); ROC AUC one-vs-rest, averaged over the classes
        scores = {"average": "macro", "positive_class": None,
                  "precision": precision_score(y, predicted, labels=classes, average="macro", zero_division=0),
                  "recall": recall_score(y, predicted, labels=classes, average="macro", zero_division=0),
                  "f1": f1_score(y, predicted, labels=classes, average="macro", zero_division=0),
                  "roc_auc": roc_auc_score(y, proba, multi_class="ovr", average="macro", labels=classes)}
    metrics = {
        "model": bundle["model"],
        "average": scores["average"],
        "positive_class": scores["positive_class"],
        "accuracy": fmt(accuracy_score(y, predicted)),
        # the mean of the per-class recalls: 1 / (number of classes) for a model that always says one class
        "balanced_accuracy": fmt(balanced_accuracy_score(y, predicted)),
        **{k: fmt(scores[k]) for k in ("precision", "recall", "f1", "roc_auc")},
        "n_train": int(bundle["n_train"]),
        "n_test": int(len(test)),
    }
    with open(smk.output.metrics, "w") as fh:
        json.dump(metrics, fh, sort_keys=True, indent=2)
        fh.write("\n")

    matrix = confusion_matrix(y, predicted, labels=classes)
    title = f"{bundle['model']} ({label}); accuracy {metrics['accuracy']:.3f}"
    plot_confusion(matrix, classes, title, smk.output.confusion)
    logging.info("evaluated on %d rows: %s", len(test), {k: metrics[k] for k in ("accuracy", "f1", "roc_auc")})


main(snakemake)  # noqa: F821 (injected by Snakemake's script directive)
