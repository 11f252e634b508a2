"""The losses of private sparse learning — Wang & Gu (AAAI 2020), §4.2: squared (4.1) and logistic (4.2) — on a
dense or a ``scipy.sparse`` design, their gradients, the public clipping that bounds one record's gradient, and
IGHT, the iterative gradient hard thresholding of their Algorithm 2 (Yuan, Li & Zhang 2014; Jain, Tewari & Kar 2014).

Nothing here is private by itself: the private estimators (:mod:`.knowledge_transfer`, :mod:`.dp_ight`,
:mod:`.two_stage`) clip with :func:`clip_rows_l2` or :func:`clip_entries` and calibrate to
:func:`gradient_bound`. A sparse design stays sparse (CSR): no n × d or d × d dense matrix is ever formed.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import sparse, special

from ..dp.mechanisms import check_positive
from ..errors import DataError, PrivacyError
from .base import ball_factor, check_count, check_s
from .sparse_mean import hard_threshold

LOSSES = ("squared", "logistic")


def check_loss(loss: str) -> str:
    if loss not in LOSSES:
        raise PrivacyError(f"loss must be one of {LOSSES}, got {loss!r}")
    return loss


def as_design(X, y=None, loss: str | None = None):
    """X as float64 — a 2-D ndarray, or CSR if sparse — with y (float64, length n) and, for the logistic loss, y in
    {0, 1}. Non-finite values are refused (DataError), in the words of :func:`~.base.check_design`."""
    if sparse.issparse(X):
        X = sparse.csr_matrix(X, dtype=float)
        values = X.data
    else:
        X = np.asarray(X, dtype=float)
        values = X
    y_arr = None if y is None else np.asarray(y, dtype=float)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1 or (y_arr is not None and y_arr.shape != (X.shape[0],)):
        got = f"{X.shape}" + ("" if y_arr is None else f" and {y_arr.shape}")
        raise DataError(f"expected X of shape (n, d) and y of shape (n,), got {got}")
    if not np.isfinite(values).all() or (y_arr is not None and not np.isfinite(y_arr).all()):
        raise DataError("X and y must be finite (found NaN or inf)")
    if y_arr is None:
        return X
    if loss == "logistic" and not np.all((y_arr == 0) | (y_arr == 1)):
        raise DataError("the logistic loss needs y in {0, 1}")
    return X, y_arr


def predictor(X, theta: np.ndarray) -> np.ndarray:
    """Xθ; for a dense X from the columns of θ's support only (θ is sparse in every algorithm here)."""
    if sparse.issparse(X):
        return X @ theta
    support = np.flatnonzero(theta)
    return X[:, support] @ theta[support] if support.size else np.zeros(X.shape[0])


def residual(loss: str, u: np.ndarray, y: np.ndarray) -> np.ndarray:
    """∂ℓ/∂u at the linear predictor u: u − y (squared, ℓ = (u − y)²/2) or σ(u) − y (logistic)."""
    return u - y if loss == "squared" else special.expit(u) - y


def gradient(loss: str, X, y: np.ndarray, theta: np.ndarray, lam: float = 0.0) -> np.ndarray:
    """∇[L_S(θ) + λ‖θ‖²/2], L_S(θ) = (1/n) Σ_i ℓ(x_i'θ, y_i)."""
    g = X.T @ residual(loss, predictor(X, theta), y) / X.shape[0]
    return g + lam * theta if lam else np.asarray(g)


def row_norms(X) -> np.ndarray:
    """‖x_i‖₂ of every row; inf where the squares overflow (|x_ij| ≳ 1e154), which :func:`clip_rows_l2` handles."""
    with np.errstate(over="ignore"):
        if sparse.issparse(X):
            return np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        return np.linalg.norm(X, axis=1)


def clip_rows_l2(X, c_x: float):
    """Every row scaled to ‖x_i‖₂ ≤ c_x (a public bound); X itself when none is longer. Sparse stays sparse.

    A row whose norm overflows is scaled by (c_x/m)/‖x_i/m‖₂, m = max_j |x_ij|, so it lands on the sphere, not at
    the origin (:func:`~.base.ball_factor`); every other row gets the same factor as before, bit for bit."""
    c_x = check_positive("c_x", c_x)
    norms = row_norms(X)
    if not (norms > c_x).any():
        return X
    if not sparse.issparse(X):
        return X * ball_factor(X, c_x)
    factor = np.minimum(1.0, c_x / np.maximum(norms, np.finfo(float).tiny))
    over = np.flatnonzero(np.isinf(norms))
    if over.size:
        m = abs(X[over]).max(axis=1).toarray().ravel()
        factor[over] = np.minimum(1.0, (c_x / m) / row_norms(sparse.diags(1 / m) @ X[over]))
    return sparse.diags(factor) @ X


def clip_entries(X, K: float):
    """Every entry clipped to [−K, K] (a public bound); X itself when none lies outside. Sparse stays sparse."""
    K = check_positive("K", K)
    if sparse.issparse(X):
        if X.nnz == 0 or (abs(X.data).max() <= K):
            return X
        X = X.copy()
        np.clip(X.data, -K, K, out=X.data)
        return X
    if X.size and (X.max() > K or X.min() < -K):
        return np.clip(X, -K, K)
    return X


def gradient_bound(loss: str, *, c_x: float, B_y: float | None = None, radius: float | None = None) -> float:
    """G ≥ ‖∇ℓ(θ; x, y)‖ for every record with ‖x‖ ≤ c_x (in any norm: the bound has the norm of x) and, for the
    squared loss, |y| ≤ B_y and |x'θ| ≤ ``radius`` (a public bound on the predictor, e.g. c_x‖θ‖ on the set θ lives in):
    squared: c_x (radius + B_y); logistic: c_x (|σ(u) − y| < 1 for y in {0, 1})."""
    c_x = check_positive("c_x", c_x)
    if check_loss(loss) == "logistic":
        return c_x
    if B_y is None or radius is None:
        raise PrivacyError("the squared loss's gradient bound needs a public bound B_y on |y| and radius on |x'theta|")
    return c_x * (check_positive("radius", radius) + check_positive("B_y", B_y))


def ight(X, y, *, loss: str, s: int, eta: float, T: int, lam: float = 0.0, theta0=None) -> np.ndarray:
    """IGHT — Wang & Gu (2020), Algorithm 2: θ_t = H_s(θ_{t−1} − η∇[L_S + λ‖·‖²/2](θ_{t−1})), t = 1 … T, from θ_0
    (default 0). H_s keeps the s largest |·| (ties: lowest index). Non-private. Returns θ_T."""
    loss = check_loss(loss)
    d = X.shape[1]
    s, T = check_s(s, d), check_count("T", T)
    eta = check_positive("eta", eta)
    if not (math.isfinite(lam) and lam >= 0):
        raise PrivacyError(f"lam must be a finite number >= 0, got {lam}")
    theta = np.zeros(d) if theta0 is None else np.array(theta0, dtype=float)
    for _ in range(T):
        theta, _ = hard_threshold(theta - eta * gradient(loss, X, y, theta, lam), s)
    return theta
