"""Sparse mean estimators of The Cost of Privacy (Cai, Wang & Zhang) and the comparators named there.

Neighbouring relation throughout: *replace one record* (one row of the data matrix). Every private estimator
truncates each coordinate to [−R, R] inside the function, which is what bounds its sensitivity.
"""

from __future__ import annotations

import numpy as np

from .accounting import frank_wolfe_plan, peeling_plan
from .errors import DataError, PrivacyError
from .mechanisms import check_epsilon_delta, check_positive


def _check_matrix(X) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] < 1:
        raise DataError(f"expected a data matrix of shape (n, d), got {X.shape}")
    if not np.isfinite(X).all():
        raise DataError("the data hold NaN or infinite values")
    return X


def _check_s(s: int, d: int) -> int:
    if not (isinstance(s, (int, np.integer)) and 1 <= s <= d):
        raise PrivacyError(f"sparsity s must be an integer between 1 and d={d}, got {s!r}")
    return int(s)


def truncated_mean(X: np.ndarray, R: float) -> np.ndarray:
    """X̄_R: the mean of the rows after clipping every coordinate to [−R, R]. Replace-one ℓ∞ sensitivity 2R/n."""
    return np.clip(X, -R, R).mean(axis=0)


# ---------------------------------------------------------------------------------------------------------------
# 000 Algorithm 1: PrivateMax; 004 Algorithm 3.2: Peeling
# ---------------------------------------------------------------------------------------------------------------


def private_max(f, *, B: float, epsilon: float, rng: np.random.Generator) -> tuple[int, float]:
    """PrivateMax — Cai, Wang & Zhang, *The Cost of Privacy* (earlier version), Algorithm 1.

    Adds Laplace(2B/ε) to every |f_j|, returns the index of the largest and f at that index plus a fresh
    Laplace(2B/ε). Guarantee (Lemma 3.2.3, after Dwork et al.): (ε, 0)-DP when ‖f(x) − f(x′)‖∞ ≤ B for every pair
    of neighbouring data sets; the caller must make that bound true.
    """
    f = np.asarray(f, dtype=float)
    check_epsilon_delta(epsilon)
    b = 2 * check_positive("B", B) / epsilon
    j = int(np.argmax(np.abs(f) + rng.laplace(0.0, b, size=f.shape)))
    return j, float(f[j] + rng.laplace(0.0, b))


def _peel_from_noise(v: np.ndarray, W: np.ndarray, W_tilde: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Peeling from pre-drawn noise, batched over a leading axis.

    v: (r, d) values, W: (r, s, d) selection noise, W_tilde: (r, s) release noise (one per selected coordinate,
    in selection order). Returns the estimates (r, d) and the selected indices (r, s).
    """
    r, d = v.shape
    s = W.shape[1]
    score = np.abs(v)
    taken = np.zeros((r, d), dtype=bool)
    chosen = np.empty((r, s), dtype=np.int64)
    rows = np.arange(r)
    for i in range(s):
        j = np.argmax(np.where(taken, -np.inf, score + W[:, i, :]), axis=1)
        chosen[:, i] = j
        taken[rows, j] = True
    out = np.zeros_like(v)
    out[rows[:, None], chosen] = v[rows[:, None], chosen] + W_tilde
    return out, chosen


def peeling(
    v, *, s: int, epsilon: float, delta: float, lam: float, rng: np.random.Generator, calibration: str = "paper"
):
    """Peeling — Cai, Wang & Zhang, *The Cost of Privacy*, Algorithm 3.2 (after Dwork, Su & Zhang 2018).

    s times: add i.i.d. Laplace(λ·2√(3s log(1/δ))/ε) to |v_j| and take the largest not yet chosen; release v on the
    chosen set S plus fresh Laplace noise of the same scale, zeros elsewhere.
    Guarantee (Lemma 3.3): (ε, δ)-DP when ‖v(Z) − v(Z′)‖∞ ≤ λ for every pair of neighbouring data sets.
    ``calibration="tight"`` uses the smaller scale that exact RDP accounting allows (:mod:`dpcost.accounting`).
    Returns (estimate, selected indices in selection order).
    """
    v = np.asarray(v, dtype=float)
    if v.ndim != 1:
        raise DataError(f"peeling expects a vector, got shape {v.shape}")
    s = _check_s(s, v.size)
    check_epsilon_delta(epsilon, delta)
    plan = peeling_plan(s=s, epsilon=epsilon, delta=delta, lam=check_positive("lam", lam), calibration=calibration)
    b = plan.releases[0].noise_scale
    W = rng.laplace(0.0, b, size=(1, s, v.size))
    W_tilde = rng.laplace(0.0, b, size=(1, s))
    est, chosen = _peel_from_noise(v[None], W, W_tilde)
    return est[0], chosen[0]


def dp_sparse_mean(
    X, *, s: int, epsilon: float, delta: float, R: float, rng: np.random.Generator, calibration: str = "paper"
):
    """DP sparse mean — Cai, Wang & Zhang, *The Cost of Privacy*, Algorithm 3.3.

    Peeling(X̄_R, s, ε, δ, λ = 2R/n) on the coordinate-truncated sample mean X̄_R.
    Guarantee: (ε, δ)-DP under replace-one neighbours. Sensitivity: replacing one row moves X̄_R by at most 2R/n in
    every coordinate, because each coordinate is clipped to [−R, R] here. For bounded data (SNP differences lie in
    {−2, …, 2}) R = 2 clips nothing. Returns (estimate, selected indices).
    """
    X = _check_matrix(X)
    n, d = X.shape
    R = check_positive("R", R)
    v = truncated_mean(X, R)
    return peeling(v, s=s, epsilon=epsilon, delta=delta, lam=2 * R / n, rng=rng, calibration=calibration)


# ---------------------------------------------------------------------------------------------------------------
# Non-private baselines
# ---------------------------------------------------------------------------------------------------------------


def sample_mean(X) -> np.ndarray:
    """The non-private sample mean."""
    return _check_matrix(X).mean(axis=0)


def hard_threshold(v, s: int) -> tuple[np.ndarray, np.ndarray]:
    """Keep the s coordinates of largest |v_j| (ties: lowest index), zero the rest. Returns (vector, indices)."""
    v = np.asarray(v, dtype=float)
    s = _check_s(s, v.size)
    idx = np.argsort(-np.abs(v), kind="stable")[:s]
    out = np.zeros_like(v)
    out[idx] = v[idx]
    return out, idx


def top_s_sample_mean(X, *, s: int) -> tuple[np.ndarray, np.ndarray]:
    """The non-private sample mean hard-thresholded to its s largest coordinates (the non-private Alg. 3.3)."""
    return hard_threshold(sample_mean(X), s)


# ---------------------------------------------------------------------------------------------------------------
# Talwar, Thakurta & Zhang (2015): private Frank-Wolfe over the ℓ1 ball, applied to the mean
# ---------------------------------------------------------------------------------------------------------------


def private_frank_wolfe_mean(
    X,
    *,
    epsilon: float,
    delta: float,
    R: float,
    radius: float,
    T: int,
    rng: np.random.Generator,
    calibration: str = "paper",
) -> np.ndarray:
    """Private Frank-Wolfe over the ℓ1 ball — Talwar, Thakurta & Zhang (NeurIPS 2015), Algorithm 2
    (A_Noise-FW, polytope case), applied to the mean as least squares to the sample mean, as the comparator of
    The Cost of Privacy (004 §6.1, ref. [45]).

    Loss L(θ) = (1/n) Σ_i ½‖θ − Π_R(x_i)‖², so ∇L(θ) = θ − X̄_R. Constraint set C = {‖θ‖₁ ≤ radius}, the convex hull
    of the 2d vertices ±radius·e_j. θ₁ = 0; for t = 1 … T: α_s = ⟨s, ∇L(θ_t)⟩ + Laplace(b) for every vertex s,
    θ̃_t = argmin α_s, θ_{t+1} = (1 − μ_t)θ_t + μ_t θ̃_t with μ_t = 2/(t + 2).

    Privacy, our calibration (the paper prints b = L₁‖C‖₁√(8T log(1/δ))/(nε) without fixing the neighbour
    relation): each α_s has replace-one sensitivity Δ = radius · 2R/n (X̄_R moves by ≤ 2R/n per coordinate), so each
    report-noisy-min with Laplace(2Δ/ε₀) is ε₀-DP, and T of them compose to (ε, δ)-DP: ε₀ by advanced composition
    (``calibration="paper"``) or by zCDP/RDP accounting (``"tight"``), see
    :func:`dpcost.accounting.frank_wolfe_plan`. Only the selections touch the data; θ_T is post-processing.
    """
    X = _check_matrix(X)
    n, d = X.shape
    check_epsilon_delta(epsilon, delta)
    R, radius = check_positive("R", R), check_positive("radius", radius)
    if not (isinstance(T, (int, np.integer)) and T >= 1):
        raise PrivacyError(f"T must be an integer >= 1, got {T!r}")
    mean = truncated_mean(X, R)
    plan = frank_wolfe_plan(n=n, epsilon=epsilon, delta=delta, R=R, radius=radius, T=T, calibration=calibration)
    b = plan.releases[0].noise_scale
    noise = rng.laplace(0.0, b, size=(T, 2 * d))
    theta = np.zeros(d)
    for t in range(1, T + 1):
        grad = theta - mean
        alpha = np.concatenate([radius * grad, -radius * grad]) + noise[t - 1]  # vertices +r e_j, then −r e_j
        k = int(np.argmin(alpha))
        vertex = np.zeros(d)
        vertex[k % d] = radius if k < d else -radius
        mu = 2 / (t + 2)
        theta = (1 - mu) * theta + mu * vertex
    return theta
