"""What every estimator module shares: input checks, and the clipping and projections that make sensitivities true."""

from __future__ import annotations

import numbers
import weakref

import numpy as np
from scipy import optimize

from ..dp.mechanisms import check_positive
from ..errors import DataError, PrivacyError


def frozen(X) -> bool:
    """True for a dense array whose contents cannot change behind its users: read-only and owning its data (the
    simulation marks every draw so, :func:`dpcost.simulation.run.run_job`). Only such arrays are memoised by
    identity (:class:`FrozenMemo`); any other input is recomputed at every call. A frozen array must stay frozen:
    numpy lets the owner of the data make it writeable again, and a memo would then serve its old contents."""
    return isinstance(X, np.ndarray) and X.flags.owndata and not X.flags.writeable


class FrozenMemo:
    """Values computed from a :func:`frozen` array (and hashable constants), by the array's identity: an entry lives
    while its array does (a weak reference drops it), at most ``size`` are kept (the least recently used goes). Why: the
    simulation's curves share one draw, and each clipped it again (Figure 5: ten 160 MB copies a repetition)."""

    def __init__(self, size: int):
        self.size, self._entries = size, {}

    def get(self, X, key, compute):
        if not frozen(X):
            return compute()
        k = (id(X), key)
        hit = self._entries.pop(k, None)
        if hit is not None and hit[0]() is X:
            self._entries[k] = hit  # the most recent last: the oldest is evicted first
            return hit[1]
        value = compute()
        if len(self._entries) >= self.size:
            del self._entries[next(iter(self._entries))]
        self._entries[k] = (weakref.ref(X, lambda _, k=k: self._entries.pop(k, None)), value)
        return value


_FACTS = FrozenMemo(16)


def all_finite(X) -> bool:
    """No NaN or inf in X (memoised for a :func:`frozen` X: one pass over a 256 MB draw instead of one per check)."""
    return bool(_FACTS.get(X, "finite", lambda: np.isfinite(X).all()))


def extremes(X) -> tuple[float, float]:
    """(min X, max X) of a non-empty array (memoised for a :func:`frozen` X, as :func:`all_finite`)."""
    return _FACTS.get(X, "extremes", lambda: (X.min(), X.max()))


def beyond(X, bound: float) -> bool:
    """Whether some entry of a dense X lies outside [−bound, bound] (one min and one max, by :func:`extremes`)."""
    if not X.size:
        return False
    lo, hi = extremes(X)
    return bool(hi > bound or lo < -bound)


def check_design(X, y) -> tuple[np.ndarray, np.ndarray]:
    """X of shape (n, d) and y of shape (n,), finite, n ≥ 2, as float arrays."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise DataError(f"expected X of shape (n, d) and y of shape (n,), got {X.shape} and {y.shape}")
    if X.shape[0] < 2:
        raise DataError(f"need at least 2 rows, got {X.shape[0]}")
    if not (all_finite(X) and all_finite(y)):
        raise DataError("X and y must be finite (found NaN or inf)")
    return X, y


def check_matrix(X) -> np.ndarray:
    """A finite data matrix of shape (n, d), n ≥ 1."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] < 1:
        raise DataError(f"expected a data matrix of shape (n, d), got {X.shape}")
    if not all_finite(X):
        raise DataError("the data hold NaN or infinite values")
    return X


def check_s(s: int, d: int) -> int:
    """A sparsity 1 ≤ s ≤ d."""
    if not (isinstance(s, (int, np.integer)) and 1 <= s <= d):
        raise PrivacyError(f"sparsity s must be an integer between 1 and d={d}, got {s!r}")
    return int(s)


def check_count(name: str, value: int) -> int:
    """An iteration count or batch size: an integer ≥ 1 (a bool is not one)."""
    if not (isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 1):
        raise PrivacyError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def clip_factor(norms: np.ndarray, bound: float) -> np.ndarray:
    """min(1, bound/norm): the factor that brings a vector of the given norm into the ball of radius ``bound``."""
    return np.minimum(1.0, bound / np.maximum(norms, np.finfo(float).tiny))


def ball_factor(V: np.ndarray, bound: float) -> np.ndarray:
    """min(1, bound/‖v‖₂) for every row v of V (last axis), finite and in [0, 1] for every finite V.

    ‖v‖₂ overflows to inf once the squares do (|v_j| ≳ 1e154), which made the factor 0 and sent the row to the
    origin rather than to the sphere; those rows alone are recomputed as (bound/m)/‖v/m‖₂ with m = max_j |v_j|.
    Every row whose norm is finite gets exactly the factor :func:`clip_factor` gave before, bit for bit."""
    with np.errstate(over="ignore"):  # an overflow is expected here and handled below
        norms = np.linalg.norm(V, axis=-1, keepdims=True)
    factor = clip_factor(norms, bound)
    over = np.isinf(norms[..., 0])
    if over.any():
        W = V[over]
        m = np.max(np.abs(W), axis=-1, keepdims=True)  # > 0: the norm of these rows overflowed
        factor[over] = np.minimum(1.0, (bound / m) / np.linalg.norm(W / m, axis=-1, keepdims=True))
    return factor


def clip_rows(X: np.ndarray, c_x: float) -> np.ndarray:
    """Scale every row with ‖x_i‖₂ > c_x down to norm c_x (rows inside the ball are unchanged); every finite row,
    however large, lands in the ball (:func:`ball_factor`)."""
    return X * ball_factor(X, c_x)


def clip_design(X, y, B_X: float, B_Y: float) -> tuple[np.ndarray, np.ndarray]:
    """Checked design with rows clipped to ‖x‖₂ ≤ B_X and y to [−B_Y, B_Y] (public bounds, never from the data)."""
    X, y = check_design(X, y)
    B_X, B_Y = check_positive("B_X", B_X), check_positive("B_Y", B_Y)
    return clip_rows(X, B_X), np.clip(y, -B_Y, B_Y)


def project_l2_ball(beta: np.ndarray, C: float) -> np.ndarray:
    """Π_C: Euclidean projection on the ℓ2 ball of radius C (batched over leading axes), finite for finite β."""
    return beta * ball_factor(beta, C)


def ridge_in_ball(H: np.ndarray, g: np.ndarray, C: float) -> np.ndarray:
    """argmin_{‖β‖≤C} ½β'Hβ − g'β for symmetric positive definite H (Lagrange multiplier by root finding)."""
    w, V = np.linalg.eigh(H)
    gv = V.T @ g
    beta_norm = lambda mu: np.linalg.norm(gv / (w + mu))  # noqa: E731 — decreasing in mu
    if beta_norm(0.0) <= C:
        return V @ (gv / w)
    hi = 1.0
    while beta_norm(hi) > C:
        hi *= 2
    mu = optimize.brentq(lambda m: beta_norm(m) - C, 0.0, hi, xtol=1e-14)
    return V @ (gv / (w + mu))


def require_replace(privacy, method: str, why: str) -> None:
    """Refuse add/remove neighbours for an estimator whose sensitivity, noise scale or post-processing uses the
    sample size n (``why``): under add/remove n is private, and a release that depends on it tells n and n + 1 apart
    (e.g. through the grid its noise lies on)."""
    if privacy.neighbours != "replace":
        raise PrivacyError(f"{method} is analysed under replace-one neighbours only ({why})")


def proven_under(privacy, method: str, why: str) -> bool:
    """For a paper's procedure proven for add/remove neighbours but with n treated as public (``why`` says where n
    enters): True under replace-one; under add/remove refused, or with ``on_invalid="warn"`` kept for reproduction
    and False — the caller's plan is then marked unproven, so the ledger voids it."""
    if privacy.neighbours == "replace":
        return True
    privacy.outside_validity(
        f"{method} under add/remove neighbours: {why}, but n is private under add/remove",
        remedy="use neighbours 'replace'",
    )
    return False
