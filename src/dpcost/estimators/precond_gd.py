"""Privately preconditioned, clipped, noisy gradient descent for linear regression: the algorithm, its sensitivities
and its privacy plan (derivations and the measurements behind it: docs/proofs.md, "Preconditioned noisy gradient
descent").

Why it beats SSP on an ill-conditioned design: SSP adds the same noise to every direction of X'X, so the small
eigenvalues are drowned; here a first private release of X'X only *preconditions* (u = Mx with M = Σ̂^(−α/2)), and
the regression itself is a few full-batch gradient steps in the whitened coordinates, each with per-example terms of
bounded norm. Stopped early, the path passes near OLS before drifting to the biased fixed point of the clipped
problem, so T is a tuning constant (chosen per m by the tuning step, never on the real response).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..dp.mechanisms import check_positive, check_probability, classic_gaussian_sigma, gaussian_sigma
from ..dp.plan import PrivacyPlan, grid_release
from ..dp.privacy import Privacy
from ..dp.samplers import GridNoise, draw, grid_scale
from ..errors import PrivacyError
from .base import JointClip, ball_factor, check_count, check_design, require_replace
from .ssp import noise_norm_bound, noisy_symmetric, xx_xy_sensitivities
from .sums import plan_once


def step_sensitivity(C: float, R: float | None, neighbours: str) -> float:
    """ℓ2 sensitivity of one step's sum of per-example terms: each term has norm ≤ C (the gradient u_i r_i clipped to
    C) or ≤ C·R (clip_C(u_i)·clip_R(r_i)); replacing one record moves the sum by twice that, adding or removing one
    by once. The preconditioner and the iterate are public at that point (earlier releases), so the bound holds for
    adaptively chosen steps."""
    bound = C if R is None else C * R
    return 2 * bound if neighbours == "replace" else bound


def check_steps(T, average, alpha, eta, floor, rho) -> tuple[int, int]:
    """(T, average) checked, and the utility constants α, η, floor, ρ positive: the steps' constants of every
    preconditioned noisy GD (a single run or stacked blocks)."""
    T, average = check_count("T", T), check_count("average", average)
    if average > T:
        raise PrivacyError(f"average={average} exceeds the number of iterates T={T}")
    for k, v in (("alpha", alpha), ("eta", eta), ("floor", floor)):
        check_positive(k, v)
    check_probability("rho", rho)
    if alpha > 2:  # Σ̂^(−α/2) past the inverse: the weak directions' steps grow as floor^(−α), to inf
        raise PrivacyError(f"alpha (the preconditioner's power, Sigma^(-alpha/2)) must lie in (0, 2], got {alpha!r}")
    return T, average


def precond_gd_plan(
    privacy: Privacy, n: int, d: int, *, B0: float, C: float, R: float | None, T: int, f0: float
) -> PrivacyPlan:
    """Stage 1: upper(X'X) of rows clipped to B0 (sensitivity √2·B0², :func:`~dpcost.estimators.ssp.
    xx_xy_sensitivities`); stage 2: T sums of bounded per-example terms (:func:`step_sensitivity`).

    tight: Gaussian DP (Dong, Roth & Su 2019): Gaussian mechanisms with Δ_i/σ_i = μ_i compose, adaptively, to exactly
    μ-GDP with μ² = Σ μ_i², and μ-GDP is (ε, δ)-DP exactly when a Gaussian with Δ/σ = μ is (the analytic Gaussian of
    Balle & Wang 2018). Stage 1 gets the share f0 of μ², every step (1 − f0)/T.
    paper: basic composition of classic Gaussians (Dwork & Roth 2014, Thm A.1), stage 1 at (f0 ε, δ/(T + 1)) and
    each step at ((1 − f0)ε/T, δ/(T + 1)); proven while every ε_i < 1.
    """
    p = privacy.at(n)
    require_replace(p, "precond_gd", "its covariance estimate, preconditioner and steps divide the released sums by n")
    T = check_count("T", T)
    for k, v in (("B0", B0), ("C", C)) + ((("R", R),) if R is not None else ()):
        check_positive(k, v)
    if not 0 < f0 < 1:
        raise PrivacyError(f"f0 (stage 1's share of the budget) must lie strictly between 0 and 1, got {f0!r}")
    s1 = xx_xy_sensitivities(B0, 1.0, p.neighbours)[0]
    s2 = step_sensitivity(C, R, p.neighbours)
    k1 = d * (d + 1) // 2
    if p.calibration == "tight":
        mu = 1 / gaussian_sigma(1.0, p.epsilon, p.delta, "analytic")
        sig1, sig2 = s1 / (mu * math.sqrt(f0)), s2 / (mu * math.sqrt((1 - f0) / T))
        budget1 = budget2 = (None, None)
        comp = f"Gaussian DP: 1 + {T} Gaussian releases, mu^2 = sum (sensitivity/sigma)^2 = {mu:.6g}^2 (exact)"
    else:
        budget1 = (f0 * p.epsilon, p.delta / (T + 1))
        budget2 = ((1 - f0) * p.epsilon / T, p.delta / (T + 1))
        if max(budget1[0], budget2[0]) >= 1:
            p.outside_validity(
                f"the classic Gaussian mechanism needs epsilon < 1 per release, got {budget1[0]:.3g} and "
                f"{budget2[0]:.3g}"
            )
        sig1, sig2 = classic_gaussian_sigma(s1, *budget1), classic_gaussian_sigma(s2, *budget2)
        comp = f"basic composition: stage 1 at (f0 eps, delta/(T+1)), {T} steps at ((1 - f0) eps/T, delta/(T+1))"
    sig1 = grid_scale(sig1, s1, k1, "l2", "gaussian", p.sampler)
    sig2 = grid_scale(sig2, s2, d, "l2", "gaussian", p.sampler)
    rels = (
        grid_release(
            "gaussian",
            "gaussian: X'X upper triangle (rows clipped to B0), for the preconditioner",
            s1,
            "l2",
            sig1,
            1,
            *budget1,
            coordinates=k1,
            sampler=p.sampler,
            norm_words="l2 (Frobenius)",
        ),
        grid_release(
            "gaussian",
            "gaussian: sum of clipped per-example gradient terms",
            s2,
            "l2",
            sig2,
            T,
            *budget2,
            coordinates=d,
            sampler=p.sampler,
        ),
    )
    term = f"clip_C(u_i (y_i - u_i'b)), C = {C}" if R is None else f"clip_C(u_i) clip_R(y_i - u_i'b), C = {C}, R = {R}"
    assumption = f"stage 1 rows clipped to ||x||_2 <= B0 = {B0}; per-example terms {term}"
    why = "Gaussian releases of X'X and of T sums of clipped gradient terms; the rest is post-processing"
    return PrivacyPlan(
        "precond_gd",
        p.epsilon,
        p.delta,
        p.calibration,
        comp,
        assumption,
        rels,
        p.relation,
        whole_mechanism=True,
        whole_mechanism_why=why,
    )


def preconditioner(
    G: np.ndarray, n: int, sigma: float, alpha: float, floor: float, rho: float
) -> tuple[np.ndarray, np.ndarray]:
    """(M, H⁻¹) from the released Gram matrix G̃ (post-processing): Σ̂ = G̃/n with its eigenvalues floored at the
    larger of ``floor`` and the noise's operator-norm bound σ√(d log(2d²/ρ))/n (AdaSSP's, probability 1 − ρ),
    M = Σ̂^(−α/2) and H = n·MΣ̂M = n·Σ̂^(1−α), the curvature of the whitened problem. The floor acts as a ridge on
    the directions the noise or the design leaves weak (on a standardized design the eigenvalues sum to d).
    G may be a stack (…, d, d) of Gram matrices of n rows each (the blocks of :func:`precond_gd_blocks`), σ then a
    number or one per matrix (…)."""
    d = G.shape[-1]
    w, V = np.linalg.eigh(G / n)
    lift = np.maximum(floor, noise_norm_bound(sigma, d, rho) / n)  # σ may be one per Gram matrix of the stack
    w = np.maximum(w, np.asarray(lift)[..., None])[..., None, :]
    Vt = np.swapaxes(V, -1, -2)
    M = (V * w ** (-alpha / 2)) @ Vt
    H_inv = (V * (n * w ** (1 - alpha)) ** -1.0) @ Vt
    return M, H_inv


def precond_gd(
    X,
    y,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    B0: float,
    C: float,
    T: int,
    R: float | None = None,
    f0: float = 0.2,
    alpha: float = 1.0,
    eta: float = 1.0,
    average: int = 1,
    floor: float = 0.1,
    rho: float = 0.05,
) -> np.ndarray:
    """Privately preconditioned, clipped, early-stopped noisy gradient descent for OLS.

    1. Release G̃ = X₀'X₀ + E (rows clipped to B0; E symmetric Gaussian) and form M = Σ̂^(−α/2), H = n·MΣ̂M
       (:func:`preconditioner`; public from here on).
    2. u_i = M x_i; b⁰ = 0; for t < T: b ← b + η H⁻¹(Σ_i g_i(b) + w_t), w_t ~ N(0, σ₂²I), with per-example terms
       g_i = clip_C(u_i (y_i − u_i'b)) (R None) or clip_C(u_i)·clip_R(y_i − u_i'b).
    3. β̂ = M b̄, b̄ the mean of the last ``average`` iterates (post-processing).

    Privacy: (ε, δ)-DP under replace-one (or add/remove) neighbours by composing 1 + T Gaussian releases
    (:func:`precond_gd_plan`). Every term's norm bound is enforced here by clipping, so it holds for every finite
    input; y needs no bound. Norms and products go through :class:`~.base.JointClip`, so a row of tiny entries
    cannot hide a huge residual (its norm does not underflow to 0) and a huge product lands on the sphere. Where
    u_i = Mx_i overflows, or the residual does (inf − inf), the term is the public 0, inside the ball, so the
    sensitivity stands and the release is finite; on ordinary rows the arithmetic is the plain one, bit for bit.
    B0, C, R, T, f0 are public constants (the tuning step chooses them without the real y); α, η, the eigenvalue
    floor, ρ and ``average`` act on utility only. :func:`precond_gd_batch` runs many sets of constants on one subsample.
    """
    tuning = dict(B0=B0, C=C, T=T, R=R, f0=f0, alpha=alpha, eta=eta, average=average, floor=floor, rho=rho)
    return precond_gd_batch(X, y, privacy=privacy, rngs=[rng], tunings=[tuning], plans={})[0]


def precond_gd_batch(
    X, y, *, privacy: Privacy, rngs: list[np.random.Generator], tunings: list[dict], plans: dict
) -> list[np.ndarray]:
    """:func:`precond_gd` on one subsample with every set of constants in ``tunings`` (each complete, as
    ``Method.resolve_tuning`` gives it), run i with its own ``rngs[i]``: the estimates of the separate calls, bit for
    bit, each the same (ε, δ)-DP release (nothing random is shared). What the runs share is deterministic: the
    design is checked once, X₀'X₀ formed once per B0, and a plan computed once per (privacy, n, d, constants) into
    ``plans``, the caller's memo (a plan's PRIVACY WARNINGs are given when it is computed; a refusal is raised
    every time, as nothing is stored). Every plan is asked for first, in the order of ``tunings`` (so the first
    refusal is the separate calls' first); then the runs with R None and equal T, α, floor and ρ go in groups
    (:func:`_groups`), each run's noise drawn from its own generator in precond_gd's order and the rest done for the
    group at once (:func:`_start_group`, :func:`_lockstep`: the numpy calls of a step are paid once per group, not
    once per run). A run alone in its group, and every run with R set, runs as precond_gd does. The decoy search
    runs its candidates this way (:mod:`dpcost.analysis.decoys`)."""
    X, y = check_design(X, y)
    n, d = X.shape
    planned = [_planned(privacy, n, d, plans, **t) for t in tunings]
    keys = [
        (T, t["alpha"], t["floor"], t["rho"]) if t["R"] is None else i
        for i, ((_, T, _), t) in enumerate(zip(planned, tunings, strict=True))
    ]
    grams: dict[float, np.ndarray] = {}
    out: list = [None] * len(tunings)
    for group in _groups(keys, n):
        if len(group) == 1:
            i = group[0]
            fits = [_descend(y, _start(X, privacy, rngs[i], grams, planned[i], tunings[i]))]
        else:
            fits = _lockstep(y, _start_group(X, privacy, [rngs[i] for i in group], grams, group, planned, tunings))
        for i, fit in zip(group, fits, strict=True):
            out[i] = fit
    return out


_TINY = np.finfo(float).tiny

# rows stepped at once by a group (its runs × n): 2^16 keeps a step's temporaries (512 KB each) near the cache while
# the numpy calls' cost is shared by 32 runs at the smallest housing m (2,000); measured, 7–8 ns a row and step
LOCKSTEP_ROWS = 2**16


def _groups(keys: list, n: int) -> list[list[int]]:
    """The runs' indices grouped by key, in first-seen order, cut into groups of at most :data:`LOCKSTEP_ROWS` // n
    runs."""
    by: dict = {}
    for i, key in enumerate(keys):
        by.setdefault(key, []).append(i)
    size = max(1, LOCKSTEP_ROWS // n)
    return [g[j : j + size] for g in by.values() for j in range(0, len(g), size)]


def _planned(privacy, n, d, plans, *, B0, C, T, R, f0, alpha, eta, average, floor, rho) -> tuple:
    """(the plan, T, average) of one run, its constants checked and the plan memoised in ``plans`` as in
    :func:`precond_gd_batch`."""
    T, average = check_steps(T, average, alpha, eta, floor, rho)
    return plan_once(plans, precond_gd_plan, privacy, n, d, B0=B0, C=C, R=R, T=T, f0=f0), T, average


class _Run(NamedTuple):
    """One run of :func:`precond_gd` up to its steps: the preconditioner M and H⁻¹, the whitened rows U and their
    clip, the steps' noise, and the constants the steps read."""

    M: np.ndarray
    H_inv: np.ndarray
    U: np.ndarray
    clip: JointClip
    noise: GridNoise
    C: float
    R: float | None
    eta: float
    average: int


def _draws(X, privacy, rng, grams, planned: tuple, t: dict) -> tuple:
    """(G̃, σ₁, the steps' noise) of a run with constants ``t``: the noisy X₀'X₀, then the T steps' noise, drawn from
    ``rng`` in :func:`precond_gd`'s order; ``planned`` is :func:`_planned`'s, X₀'X₀ from the memo ``grams`` (per B0,
    which the plan checked)."""
    (plan, T, _), d, B0 = planned, X.shape[1], t["B0"]
    sig1, sig2 = (r.noise_scale for r in plan.releases)
    if B0 not in grams:
        grams[B0] = _gram_clipped(X, B0)
    G = noisy_symmetric(grams[B0], sig1, rng, privacy.sampler)
    return G, sig1, draw("gaussian", sig2, (T, d), rng, privacy.sampler)


def _start(X, privacy, rng, grams, planned: tuple, t: dict) -> _Run:
    """Stage 1 of one run (its releases: :func:`_draws`) and what its steps read."""
    G, sig1, noise = _draws(X, privacy, rng, grams, planned, t)
    M, H_inv = preconditioner(G, X.shape[0], sig1, t["alpha"], t["floor"], t["rho"])
    U = whitened_rows(X, M)
    return _Run(M, H_inv, U, JointClip(U), noise, t["C"], t["R"], t["eta"], planned[2])


def _descend(y, run: _Run) -> np.ndarray:
    """Stage 2 of one run: its T noisy clipped gradient steps from b⁰ = 0, and β̂ = M b̄."""
    U, clip, noise, C, R, eta, average = run.U, run.clip, run.noise, run.C, run.R, run.eta, run.average
    T, d = noise.steps.shape
    b, tail = np.zeros(d), np.zeros(d)
    for t in range(T):
        with np.errstate(over="ignore", invalid="ignore"):  # a residual may overflow: its term is clipped or 0
            r = y - U @ b
        w = clip.weights(r, C) if R is None else clip.separate(r, C, R)
        b = b + eta * (run.H_inv @ noise[t].add(clip.V.T @ w))
        if t >= T - average:
            tail += b / average
    return run.M @ tail


def _start_group(X, privacy, rngs, grams, group, planned, tunings) -> _Run:
    """Stage 1 of the k runs ``group`` (R None; equal T, α, floor and ρ) as one :class:`_Run` whose arrays are
    stacked on a leading axis (M, H⁻¹ (k, d, d), U (k, n, d), the steps' noise (k, T, d) with one grid step per run,
    C, η and average (k, 1)) and whose clip is the :class:`JointClip` of all k·n rows. Each run's releases are drawn
    from its own generator (:func:`_draws`); the rest is elementwise or a stack of the single run's LAPACK and BLAS
    calls (numpy's eigh and matmul go matrix by matrix), so each run's arrays are :func:`_start`'s bit for bit."""
    draws = [_draws(X, privacy, rng, grams, planned[i], tunings[i]) for rng, i in zip(rngs, group, strict=True)]
    t = tunings[group[0]]
    M, H_inv = preconditioner(np.stack([g for g, _, _ in draws]), X.shape[0], np.array([s for _, s, _ in draws]),
                              t["alpha"], t["floor"], t["rho"])  # fmt: skip
    U = whitened_rows(X, M)
    k, n, d = U.shape
    noise = GridNoise(np.stack([z.steps for _, _, z in draws]), np.array([[z.step] for _, _, z in draws]),
                      draws[0][2].exact)  # fmt: skip
    C, eta = (np.array([[tunings[i][a]] for i in group], dtype=float) for a in ("C", "eta"))
    average = np.array([[planned[i][2]] for i in group], dtype=float)
    return _Run(M, H_inv, U, JointClip(U.reshape(k * n, d)), noise, C, None, eta, average)


def _lockstep(y, run: _Run) -> list[np.ndarray]:
    """:func:`_descend` of the stacked runs of :func:`_start_group` at once, bit for bit: every product a stack of
    the single run's BLAS calls (numpy's matmul calls gemv matrix by matrix, here into buffers of the same layout),
    every other operation elementwise, and each run's release its own noise on its own sum (its grid step). The
    clip weights are :func:`_plain_weights` in the ordinary case, else the group's :class:`JointClip` (whose
    weights are computed row by row: the runs' own, stacked)."""
    (k, n, d), T = run.U.shape, run.noise.steps.shape[1]
    clip, U = run.clip, run.U
    Vt = np.swapaxes(clip.V.reshape(k, n, d), 1, 2)  # U itself unless some row was rescaled
    q = None if clip.any_odd or clip.any_zero else clip.q.reshape(k, n)
    C_rows = np.repeat(run.C[:, 0], n)
    last = (T - run.average[:, 0]).tolist()
    b, tail = np.zeros((k, d)), np.zeros((k, d))
    r, w = np.empty((k, n, 1)), np.empty((k, n, 1))
    for t in range(T):
        with np.errstate(over="ignore", invalid="ignore"):  # a residual may overflow: its term is clipped or 0
            np.matmul(U, b[:, :, None], out=r)
            np.subtract(y, r[:, :, 0], out=r[:, :, 0])
        if q is None or not _plain_weights(r[:, :, 0], q, run.C, w[:, :, 0]):
            w[:, :, 0] = clip.weights(r.reshape(k * n), C_rows).reshape(k, n)
        released = run.noise[:, t].add((Vt @ w)[:, :, 0])
        b = b + run.eta * (run.H_inv @ released[:, :, None])[:, :, 0]
        tails = [i for i in range(k) if t >= last[i]]
        tail[tails] += b[tails] / run.average[tails]
    return list((run.M @ tail[:, :, None])[:, :, 0])


def _plain_weights(r: np.ndarray, q: np.ndarray, C: np.ndarray, w: np.ndarray) -> bool:
    """:meth:`JointClip.weights` of stacked residuals r (k, n) for rows of trusted, non-zero norms q (k, n), C one
    per run (k, 1), into w: min(1, C/max(|r|q, tiny))·r, the same operations in the same order. False (w not set)
    when some |r_i|q_i is not finite (an overflowed residual), which the clip handles. A finite |r_i|q_i with
    q_i > 0 makes r_i finite and its weight too, so the clip's check for non-finite weights has nothing to do.
    With every C ≥ tiny the floor at tiny is skipped, the same numbers: where |r|q < tiny both C/tiny and C/(|r|q)
    (inf at 0) are ≥ 1, so the factor is 1 either way."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        g = np.abs(r)
        g *= q
        if not math.isfinite(g.sum()):
            return False
        if C.min() >= _TINY:
            np.divide(C, g, out=w)
        else:
            np.maximum(g, _TINY, out=w)
            np.divide(C, w, out=w)
        np.minimum(w, 1.0, out=w)
        w *= r
    return True


def precond_gd_blocks(
    Xs,
    ys,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    B0: float,
    C: float,
    T: int,
    R: float | None = None,
    f0: float = 0.2,
    alpha: float = 1.0,
    eta: float = 1.0,
    average: int = 1,
    floor: float = 0.1,
    rho: float = 0.05,
) -> np.ndarray:
    """:func:`precond_gd` on k blocks of n rows at once, ``Xs`` (k, n, d) and ``ys`` (k, n) from a checked design:
    row j of the result is block j's release, made by precond_gd's steps on that block alone (the same clipping,
    plan and noise scales; the same arithmetic, stacked) with fresh noise drawn for all blocks in one call per kind
    (Gram (k, d(d+1)/2), then steps (k, T, d)), so each is (ε, δ)-DP on its block; that a record lies in one block
    is the caller's parallel composition (:mod:`dpcost.inference.blocks`). With k = 1 it is :func:`precond_gd` with
    the same rng, and without noise each row is precond_gd's on its block (tests). Python's cost per step is paid
    once for the k blocks instead of k times: the blocks interval's cost."""
    T, average = check_steps(T, average, alpha, eta, floor, rho)
    k, n, d = Xs.shape
    sig1, sig2 = (r.noise_scale for r in precond_gd_plan(privacy, n, d, B0=B0, C=C, R=R, T=T, f0=f0).releases)
    X0 = Xs * ball_factor(Xs, B0)
    G = noisy_symmetric(np.swapaxes(X0, 1, 2) @ X0, sig1, rng, privacy.sampler)
    M, H_inv = preconditioner(G, n, sig1, alpha, floor, rho)
    U = whitened_rows(Xs, M)
    clip = JointClip(U.reshape(k * n, d))
    V = clip.V.reshape(k, n, d)
    noise = draw("gaussian", sig2, (k, T, d), rng, privacy.sampler)
    b, tail = np.zeros((k, d)), np.zeros((k, d))
    for t in range(T):
        with np.errstate(over="ignore", invalid="ignore"):  # a residual may overflow: its term is clipped or 0
            r = (ys - (U @ b[:, :, None])[:, :, 0]).reshape(-1)
        w = (clip.weights(r, C) if R is None else clip.separate(r, C, R)).reshape(k, n, 1)
        b = b + eta * (H_inv @ noise[:, t].add((np.swapaxes(V, 1, 2) @ w)[:, :, 0])[:, :, None])[:, :, 0]
        if t >= T - average:
            tail += b / average
    return (M @ tail[:, :, None])[:, :, 0]


def _gram_clipped(X: np.ndarray, B0: float) -> np.ndarray:
    """X₀'X₀ for X₀ = :func:`~.base.clip_rows` (X, B0). A row inside the ball is multiplied by 1.0, which leaves its
    bits, so when no row is clipped X₀ is X bit for bit, and a contiguous X (same layout, so the same BLAS call)
    gives the same X₀'X₀ without the n × d copy (as long to allocate as the Gram takes to form)."""
    f = ball_factor(X, B0)
    X0 = X if (f == 1.0).all() and (X.flags.c_contiguous or X.flags.f_contiguous) else X * f
    return X0.T @ X0


def whitened_rows(X: np.ndarray, M: np.ndarray) -> np.ndarray:
    """U = XM (or a stack of them) with every row that overflowed (an inf or NaN entry) set to the public 0: its
    terms are then 0, inside every ball, so the sensitivity stands and the release is finite."""
    with np.errstate(over="ignore", invalid="ignore"):  # extreme rows overflow here; set to 0 below
        U = X @ M
    if np.isfinite(U).all():  # the usual case, one pass (a per-row check is a slow reduction over a short axis)
        return U
    finite = np.isfinite(U).all(axis=-1)
    return np.where(finite[..., None], U, 0.0)
