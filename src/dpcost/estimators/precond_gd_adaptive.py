"""Preconditioned clipped noisy GD with its clip bounds chosen privately inside the budget (issue 29):
:mod:`.precond_gd`'s algorithm (docs/proofs.md, "Preconditioned noisy gradient descent") where the row bound B0 and
every step's gradient bound C_t are private upper quantiles — read from Gaussian noisy histograms — instead of
constants.

Why. :mod:`.precond_gd_free`'s data-free bounds are too small for heavy-tailed rows, and the noise-free fixed point
of the clipped problem stays far from OLS however large nε is. Adaptive clipping (Andrew, Thakkar, McMahan &
Ramaswamy 2021, "Differentially private learning with adaptive clipping", NeurIPS) sets the bound at a private
quantile of the per-example norms, released with a noisy count of sensitivity 1. Here each bound comes from one
noisy histogram of the norms on a public geometric grid (all bins at once, sensitivity √2 under replace-one), read
off by post-processing: the grid edge that minimises the histogram's estimate of the clipping bias plus the noise
that bound costs (:func:`bound_from_histogram`). The noise term falls as 1/μ, so the chosen level rises towards the
top of the data as nμ grows: clipping fades as the noise shrinks, and at large nε the path approaches OLS.

All releases are Gaussian, so the tight plan is one Gaussian-DP composition (Dong, Roth & Su 2019): the row-norm
histogram, the Gram of rows clipped to B0 (in units of B0²), the gradient-norm histogram at the current iterate at
each of the first J steps, and every step's sum of per-example terms clipped to C_t (in units of C_t). Every noise
multiplier is data-free; only the scales B0² and C_t, earlier releases, multiply the released values (post-processing).
"""

from __future__ import annotations

import math

import numpy as np

from ..dp.mechanisms import BOUND_MIN, classic_gaussian_sigma
from ..dp.plan import PrivacyPlan, grid_release
from ..dp.privacy import Privacy
from ..dp.samplers import add_noise, draw, grid_scale
from ..errors import PrivacyError
from .base import JointClip, ball_factor, check_count, check_design, clip_rows, require_replace, row_norms
from .boosted_adassp import gdp_mu
from .precond_gd import check_steps, preconditioner, whitened_rows
from .ssp import noise_norm_bound, noisy_symmetric

# Shares of μ² (tight) or of ε (paper), chosen on the benchmark's real tables other than housing.
ROW_SHARE = 0.05  # the row-norm histogram that sets B0
PRECOND_SHARE = 0.15  # f0: the Gram of rows clipped to B0, for the preconditioner
CLIP_SHARE = 0.10  # the gradient-norm histograms together; the T gradient sums share what is left
# A noisy bin counts as empty below KAPPA standard deviations of its noise (bound_from_histogram): by a union bound
# an empty bin of any of the 1 + J histograms passes with probability < 66·P(N(0,1) > 5) ≈ 2e-5. With 3 one empty
# bin far up passed in ~5 % of runs and sent C to its edge (measured: BudgetFood, m = 2,000, errors above 2).
KAPPA = 5.0
STEPS = 6  # T at every (n, ε)
# B0 is read with the Gram's noise weighted GRAM_WEIGHT times: that noise floors the preconditioner's small
# eigenvalues and slows every step, which a bias bound alone does not see (measured: 1 too large a B0, 30 too small
# a one — the steps then overshoot the curvature of the unclipped rows)
GRAM_WEIGHT = 10.0
# and B0 is never below the noisy ROW_LEVEL-quantile: shrinking most rows makes the Gram underestimate the curvature
# of the bulk, and the Newton steps on unclipped rows then diverge (measured on NMES1988 at m = 2,000: B0 = √d/8)
ROW_LEVEL = 0.5
ETA = 0.7  # step length: damps the overshoot where the clipped Gram underestimates the curvature
CLIP_UPDATES = 2  # C_t is released at the first CLIP_UPDATES steps and kept from then on
AVERAGE = 2  # β̂ from the mean of the last AVERAGE iterates
# Public histogram grid: edges √d·2^j, j = GRID_LO, GRID_LO + GRID_STEP, … GRID_HI, plus a bin below and one above.
GRID_LO, GRID_HI, GRID_STEP = -3, 7, 0.5
HIST_SENSITIVITY = math.sqrt(2)  # replace-one: one count leaves a bin, one enters another (histogram_counts)
STEP_SENSITIVITY = 2.0  # replace-one: one term of norm ≤ 1 out, another in (JointClip.weights(r, C)/C)


def grid_edges(d: int) -> np.ndarray:
    """The public bin edges √d·2^j, j = GRID_LO … GRID_HI in steps of GRID_STEP: standardized rows have
    E‖x‖² = d, whitened rows E‖u‖² ≈ d and residuals a scale ≈ sd(y) ≈ 1, so the grid spans 2⁻³ to 2⁷ times the
    typical norm at a relative resolution of √2 (a factor-2 grid measured worse: B0 jumped a factor 2)."""
    return math.sqrt(d) * 2.0 ** np.arange(GRID_LO, GRID_HI + GRID_STEP / 2, GRID_STEP)


def histogram_counts(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Counts of ``values`` in the bins (−∞, e_0], (e_0, e_1], …, (e_K, ∞]; a non-finite value (an overflowed norm)
    counts in the top bin. Each record adds exactly 1 to exactly one bin, so replacing one record moves the vector
    by at most √2 in ℓ2 (one bin −1, another +1): the sensitivity the plan charges. ``values`` (k, n): one histogram
    per row, (k, bins)."""
    v = np.where(np.isnan(values), np.inf, values)
    bins = edges.size + 1
    idx = np.searchsorted(edges, v, side="left")
    if v.ndim == 1:
        return np.bincount(idx, minlength=bins).astype(float)
    k = v.shape[0]  # block j's bins offset by j·bins: one bincount for all
    return np.bincount((idx + bins * np.arange(k)[:, None]).ravel(), minlength=k * bins).astype(float).reshape(k, bins)


def bound_from_histogram(
    noisy: np.ndarray, edges: np.ndarray, sigma: float, power: int, nu: float, most_above: float = math.inf
) -> float:
    """Post-processing of the noisy histogram (noise sd σ per bin): the edge e_j that minimises the estimated
    clipping bias plus the noise the bound costs,

        Σ_{i > j} h̄_i (v_i^p − e_j^p)  +  ν·e_j^p,   h̄_i = h̃_i if h̃_i > KAPPA·σ else 0,

    with v_i the bin's upper edge (2e_K for the top bin), p = ``power``. For gradient terms (p = 1) clipping
    shortens the sum by at most Σ(‖g_i‖ − C)₊ while its noise has norm ≈ ν·C, ν = σ_unit√d; for the Gram (p = 2)
    clipping moves it by at most Σ(‖x_i‖² − B0²)₊ in operator norm, its noise ≈ ν·B0². Bins whose noisy count is
    within KAPPA standard deviations of 0 count as empty, so noise alone does not raise the bound. As nμ grows, ν
    falls as 1/μ and the chosen level moves to the top of the data: clipping fades as the noise shrinks. Edges with
    a noisy count above them larger than ``most_above`` are not candidates (the top edge if none is left)."""
    v = np.append(edges, 2 * edges[-1]) ** power  # bin i ≤ v_i (the top bin: a nominal 2e_K)
    h = np.where(noisy > KAPPA * sigma, noisy, 0.0)
    e = edges**power
    # bias[j] = Σ_{i > j} h_i v_i − e_j Σ_{i > j} h_i
    hv_above = np.cumsum((h * v)[::-1])[::-1][1:]
    h_above = np.cumsum(h[::-1])[::-1][1:]
    cost = hv_above - e * h_above + nu * e
    cost[np.cumsum(noisy[::-1])[::-1][1:] > most_above] = np.inf  # too many clipped by the noisy count
    return float(edges[int(np.argmin(cost)) if np.isfinite(cost).any() else -1])


def _check_shares(f_rows: float, f0: float, f_clip: float) -> None:
    for name, f in (("f_rows", f_rows), ("f0", f0), ("f_clip", f_clip)):
        if not (isinstance(f, (int, float)) and not isinstance(f, bool) and BOUND_MIN <= f < 1):
            raise PrivacyError(
                f"{name} (a share of the budget) must lie strictly between 0 and 1 (and be at least 2^-484), got {f!r}"
            )
    if not f_rows + f0 + f_clip < 1:
        raise PrivacyError(f"f_rows + f0 + f_clip must be below 1 (the steps get the rest), got {f_rows + f0 + f_clip}")


def precond_gd_adaptive_plan(
    privacy: Privacy,
    n: int,
    d: int,
    *,
    T: int,
    clip_updates: int,
    f_rows: float,
    f0: float,
    f_clip: float,
) -> PrivacyPlan:
    """The 2 + J + T Gaussian releases of :func:`precond_gd_adaptive` (J = ``clip_updates``), replace-one
    sensitivities in the units released: the row-norm histogram (√2, :func:`histogram_counts`); upper(X₀'X₀)/B0² of
    rows clipped to B0 (√2: docs/proofs.md, "Sensitivities of X'X and X'y";
    :func:`~dpcost.estimators.ssp.xx_xy_sensitivities` with B0 = 1 after dividing); J gradient-norm histograms (√2);
    T sums of clip_1(g_i/C_t) (2: one term of norm ≤ 1 replaced). B0, M, b_t and C_t are public (earlier releases)
    when each later release is made, so the bounds hold for the adaptive sequence.

    tight: Gaussian DP, μ² = Σ (Δ_i/σ_i)² composed adaptively and converted exactly (μ = :func:`gdp_mu`); shares
    f_rows, f0, f_clip/J each histogram, (1 − f_rows − f0 − f_clip)/T each step.
    paper: basic composition (Dwork & Roth 2014, Thm 3.16) of classic Gaussians (their Thm A.1, proven while
    ε_i < 1), ε split by the same shares, δ equally over the 2 + J + T releases.
    """
    p = privacy.at(n)
    require_replace(p, "precond_gd_adaptive", "its quantile levels, Gram and steps use n")
    T, J = check_count("T", T), check_count("clip_updates", clip_updates)
    if J > T:
        raise PrivacyError(f"clip_updates={J} exceeds the number of steps T={T}")
    _check_shares(f_rows, f0, f_clip)
    f_step = 1 - f_rows - f0 - f_clip
    bins = len(grid_edges(d)) + 1
    k1 = d * (d + 1) // 2
    # (name, sensitivity, coordinates, count, share of the budget per release)
    parts = [
        ("row-norm histogram (sets B0)", HIST_SENSITIVITY, bins, 1, f_rows),
        ("upper(X0'X0)/B0^2, rows clipped to B0, for the preconditioner", math.sqrt(2), k1, 1, f0),
        ("gradient-norm histogram at the current iterate (sets C_t)", HIST_SENSITIVITY, bins, J, f_clip / J),
        ("sum of clip_1(u_i r_i / C_t)", STEP_SENSITIVITY, d, T, f_step / T),
    ]
    rels = []
    if p.calibration == "tight":
        mu = gdp_mu(p.epsilon, p.delta)
        comp = f"Gaussian DP: {2 + J + T} Gaussian releases, mu^2 = sum (sensitivity/sigma)^2 = {mu:.6g}^2 (exact)"
    else:
        comp = f"basic composition of {2 + J + T} classic Gaussians: epsilon by the shares, delta/{2 + J + T} each"
        eps_max = max(s * p.epsilon for *_, s in parts)
        if eps_max >= 1:
            p.outside_validity(f"the classic Gaussian mechanism needs epsilon < 1 per release, got {eps_max:.3g}")
    for name, sens, k, count, share in parts:
        if p.calibration == "tight":
            sigma, budget = sens / (mu * math.sqrt(share)), (None, None)
        else:
            budget = (share * p.epsilon, p.delta / (2 + J + T))
            sigma = classic_gaussian_sigma(sens, *budget)
        sigma = grid_scale(sigma, sens, k, "l2", "gaussian", p.sampler)
        what = f"gaussian: {name}"
        rels.append(grid_release("gaussian", what, sens, "l2", sigma, count, *budget, coordinates=k, sampler=p.sampler))
    assumption = (
        "B0 and C_t are released before they are used; rows clipped to ||x|| <= B0 and terms u_i r_i to norm <= C_t, "
        "released in those units; each record counts once in each histogram (public grid)"
    )
    params = {"T": T, "clip_updates": J, "f_rows": f_rows, "f0": f0, "f_clip": f_clip, "bins": bins}
    why = (
        "Gaussian releases of a row-norm histogram, of X'X/B0^2, of J gradient-norm histograms and of T sums of "
        "clipped gradient terms (in units of C_t); the bounds, the solve and the steps are post-processing"
    )
    return PrivacyPlan(
        "precond_gd_adaptive",
        p.epsilon,
        p.delta,
        p.calibration,
        comp,
        assumption,
        tuple(rels),
        p.relation,
        params,
        whole_mechanism=True,
        whole_mechanism_why=why,
    )


def precond_gd_adaptive(
    X,
    y,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    T: int = STEPS,
    clip_updates: int = CLIP_UPDATES,
    f_rows: float = ROW_SHARE,
    f0: float = PRECOND_SHARE,
    f_clip: float = CLIP_SHARE,
    average: int = AVERAGE,
    alpha: float = 1.0,
    eta: float = ETA,
    floor: float = 0.1,
    rho: float = 0.05,
) -> np.ndarray:
    """Privately preconditioned, clipped, early-stopped noisy GD (docs/proofs.md, "Preconditioned noisy gradient
    descent"; :func:`~dpcost.estimators.precond_gd.precond_gd`) with privately chosen clip bounds (adaptive clipping,
    Andrew et al. 2021, in the histogram form of the module docstring).

    1. h̃ = counts of ‖x_i‖ on the public grid + noise; B0 = the edge :func:`bound_from_histogram` chooses.
    2. G̃ = B0²·(upper(X₀'X₀)/B0² + E), X₀ the rows clipped to B0; M = Σ̂^(−α/2), H⁻¹ (:func:`~.precond_gd.
       preconditioner`).
    3. u_i = M x_i, b⁰ = 0; for t < T: if t < J = ``clip_updates``, h̃_t = counts of ‖u_i r_i‖ (r_i = y_i − u_i'b)
       + noise and C_t from h̃_t, else C_t = C_{t−1}; b ← b + η H⁻¹·C_t·(Σ_i clip_1(u_i r_i / C_t) + w_t).
    4. β̂ = M b̄, b̄ the mean of the last ``average`` iterates.

    Guarantee: (ε, δ)-DP under replace-one neighbours (add/remove refused: n sets the levels and the steps), by
    composing the 2 + J + T Gaussian releases of :func:`precond_gd_adaptive_plan`. Sensitivities √2 (histograms,
    Gram in units of B0²) and 2 (gradient sums in units of C_t) hold because every row is clipped to B0 and every
    term to C_t here, for every finite input: a row's norm or term that overflows counts in the top bin, and its
    term is the public 0 (inside the ball). No constant looks at the data: the shares, T, J, KAPPA, GRAM_WEIGHT
    and the grid are fixed (chosen on real tables other than housing); α, η, the eigenvalue floor, ρ and ``average``
    act on utility only.
    """
    X, y = check_design(X, y)
    n, d = X.shape
    T, average = check_steps(T, average, alpha, eta, floor, rho)
    plan = precond_gd_adaptive_plan(privacy, n, d, T=T, clip_updates=clip_updates, f_rows=f_rows, f0=f0, f_clip=f_clip)
    s_rows, s_gram, s_hist, s_step = (r.noise_scale for r in plan.releases)
    edges, sampler = grid_edges(d), privacy.sampler
    with np.errstate(over="ignore", under="ignore"):  # a norm may overflow (the top bin) or underflow (the bottom)
        x_norm = row_norms(X)
    nu_gram = GRAM_WEIGHT * s_gram * noise_norm_bound(1.0, d, rho)
    B0 = _bound(x_norm, edges, s_rows, rng, sampler, 2, nu_gram, (1 - ROW_LEVEL) * n)
    X0 = clip_rows(X, B0) / B0  # in units of B0: rows of norm ≤ 1
    G = B0**2 * noisy_symmetric(X0.T @ X0, s_gram, rng, sampler)
    M, H_inv = preconditioner(G, n, B0**2 * s_gram, alpha, floor, rho)
    U = whitened_rows(X, M)
    clip = JointClip(U)
    b, tail = np.zeros(d), np.zeros(d)
    for t in range(T):
        with np.errstate(over="ignore", invalid="ignore"):  # a residual may overflow: its term is clipped or 0
            r = y - U @ b
        if t < clip_updates:
            C = _bound(clip.norms(r), edges, s_hist, rng, sampler, 1, s_step * math.sqrt(d))
        b = b + eta * C * (H_inv @ draw("gaussian", s_step, d, rng, sampler).add(clip.V.T @ (clip.weights(r, C) / C)))
        if t >= T - average:
            tail += b / average
    return M @ tail


def precond_gd_adaptive_blocks(
    Xs,
    ys,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    T: int = STEPS,
    clip_updates: int = CLIP_UPDATES,
    f_rows: float = ROW_SHARE,
    f0: float = PRECOND_SHARE,
    f_clip: float = CLIP_SHARE,
    average: int = AVERAGE,
    alpha: float = 1.0,
    eta: float = ETA,
    floor: float = 0.1,
    rho: float = 0.05,
) -> np.ndarray:
    """:func:`precond_gd_adaptive` on k blocks of n rows at once, ``Xs`` (k, n, d) and ``ys`` (k, n) from a checked
    design: row j is block j's release by the same steps on that block alone — its own private B0 and C_t, read from
    its own noisy histograms — with the noise of each release drawn for all blocks in one call, in the order the
    single run draws it, so each release is (ε, δ)-DP on its block (the caller composes the blocks in parallel,
    :mod:`dpcost.inference.blocks`). With k = 1 it is :func:`precond_gd_adaptive` with the same rng (tested)."""
    T, average = check_steps(T, average, alpha, eta, floor, rho)
    k, n, d = Xs.shape
    plan = precond_gd_adaptive_plan(privacy, n, d, T=T, clip_updates=clip_updates, f_rows=f_rows, f0=f0, f_clip=f_clip)
    s_rows, s_gram, s_hist, s_step = (r.noise_scale for r in plan.releases)
    edges, sampler = grid_edges(d), privacy.sampler
    with np.errstate(over="ignore", under="ignore"):  # a norm may overflow (the top bin) or underflow (the bottom)
        x_norm = row_norms(Xs.reshape(k * n, d)).reshape(k, n)
    nu_gram = GRAM_WEIGHT * s_gram * noise_norm_bound(1.0, d, rho)
    B0 = _bounds(x_norm, edges, s_rows, rng, sampler, 2, nu_gram, (1 - ROW_LEVEL) * n)
    X0 = Xs * ball_factor(Xs, B0[:, None]) / B0[:, None, None]
    G = (B0**2)[:, None, None] * noisy_symmetric(np.swapaxes(X0, 1, 2) @ X0, s_gram, rng, sampler)
    M, H_inv = preconditioner(G, n, B0**2 * s_gram, alpha, floor, rho)
    U = whitened_rows(Xs, M)
    clip = JointClip(U.reshape(k * n, d))
    V = np.swapaxes(clip.V.reshape(k, n, d), 1, 2)
    b, tail = np.zeros((k, d)), np.zeros((k, d))
    for t in range(T):
        with np.errstate(over="ignore", invalid="ignore"):  # a residual may overflow: its term is clipped or 0
            r = (ys - (U @ b[:, :, None])[:, :, 0]).reshape(-1)
        if t < clip_updates:
            C = _bounds(clip.norms(r).reshape(k, n), edges, s_hist, rng, sampler, 1, s_step * math.sqrt(d))
            C_rows = np.repeat(C, n)
        w = (clip.weights(r, C_rows) / C_rows).reshape(k, n, 1)
        step = draw("gaussian", s_step, (k, d), rng, sampler).add((V @ w)[:, :, 0])
        b = b + eta * C[:, None] * (H_inv @ step[:, :, None])[:, :, 0]
        if t >= T - average:
            tail += b / average
    return (M @ tail[:, :, None])[:, :, 0]


def _bounds(norms, edges, sigma: float, rng, sampler: str, power: int, nu: float, most_above=math.inf) -> np.ndarray:
    """:func:`_bound` for every block of ``norms`` (k, n): the k histograms released in one draw."""
    noisy = add_noise(histogram_counts(norms, edges), "gaussian", sigma, rng, sampler)
    return np.array([bound_from_histogram(h, edges, sigma, power, nu, most_above) for h in noisy])


def _bound(norms, edges, sigma: float, rng, sampler: str, power: int, nu: float, most_above=math.inf) -> float:
    """One private bound: the noisy histogram of ``norms`` (one Gaussian release of sensitivity √2), read by
    :func:`bound_from_histogram`."""
    noisy = add_noise(histogram_counts(norms, edges), "gaussian", sigma, rng, sampler)
    return bound_from_histogram(noisy, edges, sigma, power, nu, most_above)
