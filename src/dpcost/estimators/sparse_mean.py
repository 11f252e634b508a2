"""Sparse mean estimation — Cai, Wang & Zhang, *The Cost of Privacy*: PrivateMax (2019 preprint, Alg. 1), Peeling
(Ann. Statist. 2021, Alg. 3.2) and the DP sparse mean (Alg. 3.3) with their sensitivities and privacy plans, and
the non-private baselines (sample mean, top-s sample mean).

Neighbouring relation throughout: *replace one record* (one row of the data matrix). Every private estimator
truncates each coordinate to [−R, R] inside the function, which is what bounds its sensitivity.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..dp.accountant import dpa, largest_below, rdp_epsilon
from ..dp.mechanisms import check_epsilon_delta, check_positive, check_sensitivity
from ..dp.plan import PrivacyPlan, Release, grid_release
from ..dp.privacy import Privacy
from ..dp.samplers import GridNoise, add_noise, draw, grid_scale
from ..errors import DataError, PrivacyError
from .base import check_matrix, check_s, require_replace


def truncated_mean(X: np.ndarray, R: float) -> np.ndarray:
    """X̄_R: the mean of the rows after clipping every coordinate to [−R, R]. Replace-one ℓ∞ sensitivity 2R/n.

    Wide X (d ≥ 256) is clipped a block of rows at a time into one small buffer, not copied whole (Figure 3c: a
    256 MB copy, 0.5 s, twice a repetition): the rows are summed one after the other, which is how numpy's
    mean(axis=0) sums a C-ordered array, so the result is the same to the bit."""
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    if d < 256 or n < 2 or not X.flags.c_contiguous:
        return np.clip(X, -R, R).mean(axis=0)
    total, buf = np.clip(X[0], -R, R), np.empty((min(64, n - 1), d))
    for a in range(1, n, len(buf)):
        for row in np.clip(X[a : a + len(buf)], -R, R, out=buf[: min(len(buf), n - a)]):
            total += row
    return total / n


# ---------------------------------------------------------------------------------------------------------------
# PrivateMax (2019 preprint, Alg. 1)
# ---------------------------------------------------------------------------------------------------------------


def private_max(f, *, B: float, epsilon: float, rng: np.random.Generator, sampler: str = "exact"):
    """PrivateMax — Cai, Wang & Zhang (2019 preprint), Algorithm 1, with the scale corrected to 3B/ε.

    Adds Laplace noise to every |f_j|, returns the index of the largest and f at that index plus fresh Laplace noise.
    The preprint prints scale 2B/ε for both and claims ε-DP (Lemma 3.2.3); but the selection alone spends ε at that
    scale (report-noisy-max on scores of ℓ∞ sensitivity B) and the released value ε/2 more: the printed algorithm is
    1.5ε-DP (on f = (B, 0, …, 0) against (0, B, …, B) the event {index 0, value > B} has privacy loss → 0.75 at a
    claimed 0.5). Here both use scale 3B/ε: 2B/b + B/b = ε. Guarantee: (ε, 0)-DP when ‖f(x) − f(x′)‖∞ ≤ B for every
    pair of neighbouring data sets; the caller must make that bound true. Noise is exact discrete Laplace on a grid
    (:mod:`dpcost.dp.samplers`, ties broken by lowest index; the +1 grid step of rounding is paid in the scale).
    ``f`` of shape (d,) gives (index, value); (r, d) gives r independent releases as two arrays.
    """
    f = np.asarray(f, dtype=float)
    check_epsilon_delta(epsilon)
    B = check_positive("B", B)
    b = grid_scale(3 * B / epsilon, B, 1, "linf", "laplace", sampler)
    rows = np.atleast_2d(f)
    j = np.argmax(draw("laplace", b, rows.shape, rng, sampler).add(np.abs(rows)), axis=1)
    value = add_noise(rows[np.arange(len(rows)), j], "laplace", b, rng, sampler)
    return (int(j[0]), float(value[0])) if f.ndim == 1 else (j, value)


# ---------------------------------------------------------------------------------------------------------------
# Peeling (Alg. 3.2) and its calibration
# ---------------------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def peeling_scale_tight(s: int, epsilon: float, delta: float) -> float:
    """Smallest Laplace scale b/λ for Peeling at (ε, δ): s report-noisy-max selections, each (2λ/b)-DP, and s
    one-dimensional Laplace releases of sensitivity λ, composed by the better of two valid bounds — basic composition
    of the 3s·λ/b pure budget, and RDP accounting (dp-accounting; better for larger s)."""
    check_epsilon_delta(epsilon, delta)
    lib = dpa()[0]

    def eps_of(scale):
        e_sel = 2 / scale
        return rdp_epsilon(
            [
                lib.SelfComposedDpEvent(lib.ZCDpEvent(e_sel**2 / 2), s),
                lib.SelfComposedDpEvent(lib.LaplaceDpEvent(scale), s),
            ],
            delta,
        )

    # ε decreases in the scale: the smallest RDP-valid scale is 1 / (largest valid 1/scale)
    rdp_scale = 1 / largest_below(lambda inv: eps_of(1 / inv) if inv > 0 else 0.0, epsilon, 0.0, 1e6)
    return min(3 * s / epsilon, rdp_scale)


def peeling_plan(
    privacy: Privacy, *, s: int, lam: float, method: str = "peeling", s_max: int | None = None
) -> PrivacyPlan:
    """Alg. 3.2 with ℓ∞ sensitivity λ (δ must be a number). paper: b = λ·2√(3s log(1/δ))/ε (Lemma 3.3). tight: the
    smallest b that exact RDP accounting of the s selections and the s released coordinates allows.

    ``s_max`` (≥ s; None: s) calibrates b for s_max selections while s are made: the release is then (ε, δ)-DP with
    room to spare, and every s ≤ s_max shares one per-release budget (a private selection of s needs that)."""
    if isinstance(privacy.delta, str):
        raise PrivacyError("Peeling needs delta as a number: resolve the formula at n first (Privacy.at)")
    epsilon, delta = privacy.epsilon, privacy.delta
    check_sensitivity(lam)
    if not (isinstance(s, (int, np.integer)) and s >= 1):
        raise PrivacyError(f"sparsity s must be an integer >= 1, got {s!r}")
    k = s if s_max is None else s_max
    if not (isinstance(k, (int, np.integer)) and k >= s):
        raise PrivacyError(f"s_max must be an integer >= s = {s}, got {s_max!r}")
    if privacy.calibration == "paper":
        b = lam * 2 * math.sqrt(3 * k * math.log(1 / delta)) / epsilon
        comp = "Lemma 3.3 of Cai, Wang & Zhang (after Dwork, Su & Zhang 2018)"
    else:
        b = lam * peeling_scale_tight(int(k), epsilon, delta)
        comp = (
            f"{s} report-noisy-max selections and {s} Laplace releases: the better of basic composition and RDP "
            "accounting (dp-accounting)"
        )
    if k != s:
        comp += f"; noise calibrated for s_max = {k} selections"
    # the grid adds one step to each score and each released coordinate (samplers.grid_scale); the budget per
    # release is then that of the continuous scale b0 (to within the 1e-6 margin)
    b0, b = b, grid_scale(b, lam, 1, "linf", "laplace", privacy.sampler)
    rels = peeling_releases(lam, b, s, b0, privacy.sampler)
    assumption = f"||v(Z) - v(Z')||_inf <= {lam}"
    return PrivacyPlan(
        method,
        epsilon,
        delta,
        privacy.calibration,
        comp,
        assumption,
        rels,
        privacy.relation,
        whole_mechanism=False,
        whole_mechanism_why=PEELING_WHY,
    )


PEELING_WHY = "report-noisy-max selections are not additive-noise releases"


def peeling_releases(sens: float, b: float, count: int, b0: float, sampler: str) -> tuple[Release, Release]:
    """The releases of ``count`` Peeling selections of scores of ℓ∞ sensitivity ``sens`` and of the selected
    coordinates, each its own release (grid scale b, continuous scale b0: their budgets 2·sens/b0 and sens/b0)."""
    return (
        grid_release(
            "selection",
            "report-noisy-max (Laplace)",
            sens,
            "linf",
            b,
            count,
            2 * sens / b0,
            coordinates=None,
            sampler=sampler,
        ),
        grid_release(
            "laplace",
            "laplace",
            sens,
            "each",
            b,
            count,
            sens / b0,
            coordinates=1,
            sampler=sampler,
            norm_words="l1 per coordinate",
        ),
    )


def peel_from_noise(v: np.ndarray, W: GridNoise, W_tilde: GridNoise) -> tuple[np.ndarray, np.ndarray]:
    """Peeling from pre-drawn noise, batched over a leading axis.

    v: (r, d) values, W: (r, s, d) selection noise, W_tilde: (r, s) release noise (one per selected coordinate,
    in selection order). On the exact grid the noisy scores are integers: ties go to the lowest index, which keeps
    report-noisy-max (2λ/b)-DP. Returns the estimates (r, d) and the selected indices (r, s).
    """
    r, d = v.shape
    s = W.steps.shape[1]
    score = np.abs(v)
    taken = np.zeros((r, d), dtype=bool)
    chosen = np.empty((r, s), dtype=np.int64)
    rows = np.arange(r)
    for i in range(s):
        j = np.argmax(np.where(taken, -np.inf, W[:, i, :].add(score)), axis=1)
        chosen[:, i] = j
        taken[rows, j] = True
    out = np.zeros_like(v)
    out[rows[:, None], chosen] = W_tilde.add(v[rows[:, None], chosen])
    return out, chosen


def peeling(v, *, s: int, lam: float, privacy: Privacy, rng: np.random.Generator, s_max: int | None = None):
    """Peeling — Cai, Wang & Zhang (2021), Algorithm 3.2 (after Dwork, Su & Zhang 2018).

    s times: add i.i.d. Laplace(λ·2√(3s log(1/δ))/ε) to |v_j| and take the largest not yet chosen; release v on the
    chosen set S plus fresh Laplace noise of the same scale, zeros elsewhere.
    Guarantee (Lemma 3.3): (ε, δ)-DP when ‖v(Z) − v(Z′)‖∞ ≤ λ for every pair of neighbouring data sets.
    Calibration "tight" uses the smaller scale that exact RDP accounting allows (:func:`peeling_plan`); ``s_max``
    calibrates the noise for s_max ≥ s selections (:func:`peeling_plan`).
    Returns (estimate, selected indices in selection order).
    """
    v = np.asarray(v, dtype=float)
    if v.ndim != 1:
        raise DataError(f"peeling expects a vector, got shape {v.shape}")
    s = check_s(s, v.size)
    b = peeling_plan(privacy, s=s, lam=check_positive("lam", lam), s_max=s_max).releases[0].noise_scale
    W = draw("laplace", b, (1, s, v.size), rng, privacy.sampler)
    W_tilde = draw("laplace", b, (1, s), rng, privacy.sampler)
    est, chosen = peel_from_noise(v[None], W, W_tilde)
    return est[0], chosen[0]


# ---------------------------------------------------------------------------------------------------------------
# DP sparse mean (Alg. 3.3)
# ---------------------------------------------------------------------------------------------------------------


WHY_N = "its sensitivity 2R/n uses the public sample size n"


def dp_sparse_mean_plan(privacy: Privacy, n: int, d: int, *, s: int, R: float, s_max: int | None = None) -> PrivacyPlan:
    """Alg. 3.3: Peeling of the coordinate-truncated mean, ℓ∞ sensitivity λ = 2R/n (:func:`peeling_plan`)."""
    require_replace(privacy, "peeling", WHY_N)
    return peeling_plan(privacy.at(n), s=s, lam=2 * R / n, s_max=s_max)


def dp_sparse_mean(X, *, privacy: Privacy, rng: np.random.Generator, s: int, R: float, s_max: int | None = None):
    """DP sparse mean — Cai, Wang & Zhang (2021), Algorithm 3.3.

    Peeling(X̄_R, s, ε, δ, λ = 2R/n) on the coordinate-truncated sample mean X̄_R.
    Guarantee: (ε, δ)-DP under replace-one neighbours. Sensitivity: replacing one row moves X̄_R by at most 2R/n in
    every coordinate, because each coordinate is clipped to [−R, R] here. For bounded data (SNP differences lie in
    {−2, …, 2}) R = 2 clips nothing. ``s_max``: noise calibrated for s_max ≥ s selections (set by a private
    selection of s, never by the config). Returns (estimate, selected indices).
    """
    X = check_matrix(X)
    require_replace(privacy, "peeling", WHY_N)
    n, d = X.shape
    R = check_positive("R", R)
    v = truncated_mean(X, R)
    return peeling(v, s=s, lam=2 * R / n, privacy=privacy.at(n), rng=rng, s_max=s_max)


# ---------------------------------------------------------------------------------------------------------------
# Non-private baselines
# ---------------------------------------------------------------------------------------------------------------


def sample_mean(X) -> np.ndarray:
    """The non-private sample mean."""
    return check_matrix(X).mean(axis=0)


def hard_threshold(v, s: int) -> tuple[np.ndarray, np.ndarray]:
    """Keep the s coordinates of largest |v_j| (ties: lowest index), zero the rest. Returns (vector, indices)."""
    v = np.asarray(v, dtype=float)
    s = check_s(s, v.size)
    key = -np.abs(v)
    if s < v.size and not np.isnan(key).any():
        # the same s indices in the same order as the full stable sort, at a partition's cost (IHT thresholds
        # 5,000 coordinates thousands of times a Figure 5 repetition): every key at or below the s-th smallest
        # (ties included), in index order, then sorted stably
        cand = np.flatnonzero(key <= np.partition(key, s - 1)[s - 1])
        idx = cand[np.argsort(key[cand], kind="stable")[:s]]
    else:
        idx = np.argsort(key, kind="stable")[:s]
    out = np.zeros_like(v)
    out[idx] = v[idx]
    return out, idx


def top_s_sample_mean(X, *, s: int) -> tuple[np.ndarray, np.ndarray]:
    """The non-private sample mean hard-thresholded to its s largest coordinates (the non-private Alg. 3.3)."""
    return hard_threshold(sample_mean(X), s)
