"""Shared model code for the surrogate-design rules: build a surrogate and predict with uncertainty.

Imported by cross_validate.py, fit.py and propose.py (the script folder is on
sys.path for Snakemake `script:` rules), so cross-validation scores exactly the
model that fit trains and propose queries.
"""
import numpy as np
from sklearn.ensemble import RandomForestRegressor
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

MODELS = ("gaussian_process", "random_forest")


def build_model(name, n_features, seed):
    """An unfitted regressor for one target; identical settings everywhere it is used."""
    if name == "gaussian_process":
        # ARD kernel: one length scale per (standardized) feature, plus a noise term so
        # measurement scatter is not forced through the training points.
        kernel = (ConstantKernel(1.0, (1e-3, 1e3))
                  * RBF(length_scale=np.ones(n_features), length_scale_bounds=(1e-2, 1e3))
                  + WhiteKernel(noise_level=1e-2, noise_level_bounds=(1e-8, 1e1)))
        gp = GaussianProcessRegressor(kernel=kernel, normalize_y=True, n_restarts_optimizer=0,
                                      random_state=seed)
        return Pipeline([("scale", StandardScaler()), ("gp", gp)])
    if name == "random_forest":
        return RandomForestRegressor(n_estimators=200, random_state=seed, n_jobs=1)
    raise ValueError(f"unknown model {name!r}; choose one of {MODELS}")


def predict_with_std(model, X):
    """Mean prediction and its uncertainty: GP posterior std, or the std across forest trees."""
    if isinstance(model, Pipeline):
        mean, std = model.predict(X, return_std=True)
        return np.asarray(mean, dtype=float), np.asarray(std, dtype=float)
    per_tree = np.stack([tree.predict(X) for tree in model.estimators_])
    return model.predict(X), per_tree.std(axis=0)
