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

from ..dp.mechanisms import check_positive
from ..errors import DataError, PrivacyError
from .base import FrozenMemo, all_finite, ball_factor, beyond, check_count, check_s, frozen, issparse, scipy_sparse
from .sparse_mean import hard_threshold

LOSSES = ("squared", "logistic")


def check_loss(loss: str) -> str:
    if loss not in LOSSES:
        raise PrivacyError(f"loss must be one of {LOSSES}, got {loss!r}")
    return loss


def as_design(X, y=None, loss: str | None = None):
    """X as float64 — a 2-D ndarray, or CSR if sparse — with y (float64, length n) and, for the logistic loss, y in
    {0, 1}. Non-finite values are refused (DataError), in the words of :func:`~.base.check_design`."""
    if issparse(X):
        X = scipy_sparse().csr_matrix(X, dtype=float)
        values = X.data
    else:
        X = np.asarray(X, dtype=float)
        values = X
    y_arr = None if y is None else np.asarray(y, dtype=float)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1 or (y_arr is not None and y_arr.shape != (X.shape[0],)):
        got = f"{X.shape}" + ("" if y_arr is None else f" and {y_arr.shape}")
        raise DataError(f"expected X of shape (n, d) and y of shape (n,), got {got}")
    if not all_finite(values) or (y_arr is not None and not all_finite(y_arr)):
        raise DataError("X and y must be finite (found NaN or inf)")
    if y_arr is None:
        return X
    if loss == "logistic" and not np.all((y_arr == 0) | (y_arr == 1)):
        raise DataError("the logistic loss needs y in {0, 1}")
    return X, y_arr


_COLUMNS = FrozenMemo(8)


def predictor(X, theta: np.ndarray) -> np.ndarray:
    """Xθ; for a dense X from the columns of θ's support only (θ is sparse in every algorithm here). The columns of
    a :func:`frozen` X are gathered once per support (memoised: IHT's support settles, and is gathered again
    every step otherwise); the product is the same to the bit."""
    if issparse(X):
        return X @ theta
    support = np.flatnonzero(theta)
    if not support.size:
        return np.zeros(X.shape[0])
    return _COLUMNS.get(X, support.tobytes(), lambda: X[:, support]) @ theta[support]


def residual(loss: str, u: np.ndarray, y: np.ndarray) -> np.ndarray:
    """∂ℓ/∂u at the linear predictor u: u − y (squared, ℓ = (u − y)²/2) or σ(u) − y (logistic)."""
    if loss == "squared":
        return u - y
    from scipy import special  # here: slow to import, and the squared loss never needs it

    return special.expit(u) - y


def gradient(loss: str, X, y: np.ndarray, theta: np.ndarray, lam: float = 0.0) -> np.ndarray:
    """∇[L_S(θ) + λ‖θ‖²/2], L_S(θ) = (1/n) Σ_i ℓ(x_i'θ, y_i)."""
    g = X.T @ residual(loss, predictor(X, theta), y) / X.shape[0]
    return g + lam * theta if lam else np.asarray(g)


_CLIPPED = FrozenMemo(4)


def clip_rows_l2(X, c_x: float):
    """Every row scaled to ‖x_i‖₂ ≤ c_x (a public bound); X itself when none is longer. Sparse stays sparse.

    Norms by :func:`~.base.row_norm_parts` (through :func:`~.base.ball_factor`): a row whose squares overflow lands
    on the sphere, not at the origin; every row whose norm is in the trusted range gets the plain factor, bit for bit. A
    :func:`frozen` X is clipped once per c_x (memoised; the copy is read-only, as X is)."""
    c_x = check_positive("c_x", c_x)
    return _CLIPPED.get(X, c_x, lambda: _clip_rows_l2(X, c_x))


def _clip_rows_l2(X, c_x: float):
    factor = ball_factor(X, c_x)
    if not (factor < 1.0).any():
        return X
    if not issparse(X):
        out = X * factor
        out.flags.writeable = not frozen(X)
        return out
    return scipy_sparse().diags(factor[:, 0]) @ X


def clip_entries(X, K: float):
    """Every entry clipped to [−K, K] (a public bound); X itself when none lies outside. Sparse stays sparse."""
    K = check_positive("K", K)
    if issparse(X):
        if X.nnz == 0 or (abs(X.data).max() <= K):
            return X
        X = X.copy()
        np.clip(X.data, -K, K, out=X.data)
        return X
    if beyond(X, K):
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


_GRAM = FrozenMemo(2)
GRAM_BYTES = 1 << 27  # the cached Gram columns of one X, at most (128 MB); beyond, the cache starts again


def gram_columns(X: np.ndarray, idx) -> np.ndarray:
    """The columns X'x_j, j in ``idx``, of a :func:`frozen` dense X's Gram matrix, (d, len(idx)): cached per X and
    computed when first asked for, one matrix-vector product each (a matrix product of a few columns packs all of X
    first and took twice as long; and a batch's columns would not have the bits of the same columns alone)."""
    cols = _GRAM.get(X, "gram", dict)
    idx = [int(j) for j in idx]
    new = [j for j in dict.fromkeys(idx) if j not in cols]
    if new:
        if (len(cols) + len(new)) * X.shape[1] * 8 > GRAM_BYTES:
            cols.clear()
            new = list(dict.fromkeys(idx))
        cols.update((j, X.T @ X[:, j]) for j in new)
    return np.stack([cols[j] for j in idx], axis=1) if idx else np.zeros((X.shape[1], 0))


def _gram_gradient(X, Xty: np.ndarray, theta: np.ndarray, lam: float) -> np.ndarray:
    """∇[L_S + λ‖·‖²/2](θ) of the squared loss as (X'X_S θ_S − X'y)/n by :func:`gram_columns` — equal to
    :func:`gradient` up to round-off (a relative 1e-15 on Figure 5's students)."""
    support = np.flatnonzero(theta)
    g = (gram_columns(X, support) @ theta[support] - Xty) / X.shape[0]
    return g + lam * theta if lam else g


def ight(X, y, *, loss: str, s: int, eta: float, T: int, lam: float = 0.0, theta0=None) -> np.ndarray:
    """IGHT — Wang & Gu (2020), Algorithm 2: θ_t = H_s(θ_{t−1} − η∇[L_S + λ‖·‖²/2](θ_{t−1})), t = 1 … T, from θ_0
    (default 0). H_s keeps the s largest |·| (ties: lowest index). Non-private. Returns θ_T.

    For the squared loss on a :func:`frozen` X the gradient uses X's Gram columns X'x_j of each support, computed
    once for every IGHT on that X (:func:`gram_columns`): Figure 5's ten students a repetition share one public X̃
    (4,000 × 5,000) and visit ~250 columns in all, where each step read the whole X̃ (10 s → 1 s a repetition).
    The iterates agree with the plain gradient's to round-off."""
    loss = check_loss(loss)
    d = X.shape[1]
    s, T = check_s(s, d), check_count("T", T)
    eta = check_positive("eta", eta)
    if not (math.isfinite(lam) and lam >= 0):
        raise PrivacyError(f"lam must be a finite number >= 0, got {lam}")
    theta = np.zeros(d) if theta0 is None else np.array(theta0, dtype=float)
    Xty = X.T @ np.asarray(y, dtype=float) if loss == "squared" and frozen(X) else None
    for _ in range(T):
        grad = gradient(loss, X, y, theta, lam) if Xty is None else _gram_gradient(X, Xty, theta, lam)
        theta, _ = hard_threshold(theta - eta * grad, s)
    return theta
