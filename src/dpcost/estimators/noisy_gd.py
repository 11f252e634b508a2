"""Noisy gradient descent for linear regression — Cai, Wang & Zhang, *The Cost of Privacy* (Ann. Statist. 2021),
Algorithm 4.1: the algorithm, its replace-one sensitivity and its privacy plan."""

from __future__ import annotations

import math

import numpy as np

from ..dp.accountant import gaussian_noise_multiplier
from ..dp.mechanisms import check_positive, check_sensitivity
from ..dp.plan import PrivacyPlan, grid_release
from ..dp.privacy import Privacy
from ..dp.samplers import GridNoise, draw, grid_scale
from ..errors import PrivacyError
from .base import check_count, check_design, clip_rows, project_l2_ball, require_replace
from .sums import Sums, plan_once


def noisy_gd_step_sensitivity(*, R: float, C: float, c_x: float, eta0: float, n: int) -> float:
    """ℓ2 sensitivity of one update of Alg. 4.1 under replace-one neighbours.

    With ‖x‖₂ ≤ c_x, |Π_R(y)| ≤ R and ‖β^t‖₂ ≤ C the per-record gradient (x'β − Π_R(y))x has norm ≤ (R + C c_x) c_x;
    replacing one record moves (η⁰/n)Σ_i of them by at most 2 η⁰ (R + C c_x) c_x / n.
    """
    return 2 * eta0 * (R + C * c_x) * c_x / n


def noisy_gd_plan(
    privacy: Privacy, n: int, d: int, *, T: int, R: float, C: float, c_x: float, eta0: float, B
) -> PrivacyPlan:
    """Alg. 4.1. Replace-one sensitivity of one update: 2η⁰(R + C c_x)c_x/n (rows clipped to c_x, y truncated at R,
    iterates in the C ball).

    paper: each step a Gaussian mechanism at (ε/T, δ/T) with the paper's B = 4(R + C c_x)c_x (twice the sensitivity;
           ``B=None``) and σ = η⁰B√(2 log(2T/δ))/(nε/T), proven for ε/T < 1; basic composition.
    tight: σ = sensitivity × the noise multiplier of T composed Gaussian steps at total (ε, δ), exact (Gaussian DP).
    """
    p = privacy.at(n)
    require_replace(p, "noisy_gd", "its noise scale is set for gradients averaged over the public sample size n")
    epsilon, delta = p.epsilon, p.delta
    T = check_count("T", T)
    sens = noisy_gd_step_sensitivity(R=R, C=C, c_x=c_x, eta0=eta0, n=n)
    check_sensitivity(sens)  # a zero bound must never mean zero noise (cf. diffprivlib issue #105)
    assumption = (
        f"rows clipped to ||x||_2 <= c_x = {c_x}, y truncated to [-{R}, {R}], iterates projected on ||b||_2 <= {C}"
    )
    B_min = 2 * (R + C * c_x) * c_x
    B = 4 * (R + C * c_x) * c_x if B is None else B
    if not (math.isfinite(B) and B >= B_min * (1 - 1e-12)):
        raise PrivacyError(f"noise scale B={B} is below the replace-one sensitivity bound 2(R + C c_x)c_x = {B_min}")
    typed = {"coordinates": d, "sampler": p.sampler}
    whole = {
        "whole_mechanism": True,
        "whole_mechanism_why": "T Gaussian gradient steps; the projections are post-processing",
    }
    if p.calibration == "tight":
        sigma = grid_scale(sens * gaussian_noise_multiplier(T, epsilon, delta), sens, d, "l2", "gaussian", p.sampler)
        rel = grid_release("gaussian", "gaussian", sens, "l2", sigma, T, **typed)
        comp = f"exact Gaussian-DP composition of {T} Gaussian steps (closed form)"
        return PrivacyPlan("noisy_gd", epsilon, delta, "tight", comp, assumption, (rel,), p.relation, **whole)
    if epsilon / T >= 1:
        p.outside_validity(f"Alg. 4.1's per-step calibration needs epsilon/T < 1, got epsilon={epsilon}, T={T}")
    # the paper derives σ from η⁰B/n; with its B = 4(R + C c_x)c_x that is twice the true sensitivity, which is
    # what the plan records (the larger constant is kept in the parameters, as the paper's)
    sigma = eta0 * B * math.sqrt(2 * math.log(2 * T / delta)) / (n * epsilon / T)
    sigma = grid_scale(sigma, sens, d, "l2", "gaussian", p.sampler)
    rel = grid_release("gaussian", "gaussian", sens, "l2", sigma, T, epsilon / T, delta / T, **typed)
    comp = f"basic composition of {T} steps at (eps/T, delta/T)"
    params = {
        "B": B,
        "noise derived from eta0 B / n": eta0 * B / n,
        "true sensitivity / (eta0 B / n)": sens * n / (eta0 * B),
    }
    return PrivacyPlan("noisy_gd", epsilon, delta, "paper", comp, assumption, (rel,), p.relation, params, **whole)


def noisy_gd_from_stats(G: np.ndarray, h: np.ndarray, n: int, *, eta0: float, C: float, noise: GridNoise) -> np.ndarray:
    """Run the T updates of Alg. 4.1 from sufficient statistics, batched over a leading axis.

    Σ_i (x_i'β − Π_R(y_i)) x_i = Gβ − h with G = X'X and h = X'Π_R(y), so one update costs O(d²) whatever n is.
    Each step releases the noisy gradient step −(η⁰/n)∇ + w_t on the noise grid; the iterate is post-processing.
    G: (r, d, d), h: (r, d), noise: (r, T, d) → β^T: (r, d).
    """
    beta = np.zeros_like(h)
    for t in range(noise.steps.shape[1]):
        grad = np.einsum("rij,rj->ri", G, beta) - h
        beta = project_l2_ball(beta + noise[:, t, :].add(-(eta0 / n) * grad), C)
    return beta


def noisy_gradient_descent_ols(
    X,
    y,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    T: int,
    R: float,
    C: float,
    c_x: float,
    eta0: float,
    B: float | None = None,
) -> np.ndarray:
    """DP linear regression by noisy gradient descent — Cai, Wang & Zhang (2021), Algorithm 4.1.

    β⁰ = 0; for t < T: β^{t+1} = Π_C(β^t − (η⁰/n) Σ_i (x_i'β^t − Π_R(y_i)) x_i + w_t), w_t ~ N_d(0, σ² I),
    σ from :func:`noisy_gd_plan`.

    Privacy: (ε, δ)-DP under replace-one neighbours. Sensitivity per step 2η⁰(R + C c_x)c_x/n. Calibration
    "paper": basic composition of T Gaussian mechanisms at (ε/T, δ/T) with the paper's B (Lemma 4.2), proven for
    ε/T < 1 (outside it: refused, or run with a warning if ``on_invalid="warn"``); "tight": exact Gaussian-DP
    composition.
    Assumption (D1) ‖x_i‖₂ ≤ c_x is *enforced* here by clipping each row to the c_x ball (a standardized design
    is not bounded by itself); |Π_R(y)| ≤ R by truncation and ‖β^t‖₂ ≤ C by the projection Π_C, so the guarantee
    holds for every input.

    Parameters: η⁰ step size, T iterations, R truncation of y, C feasibility radius, c_x row-norm bound,
    B noise scale (default 4(R + C c_x)c_x, the paper's choice).
    """
    X, y = check_design(X, y)
    T, R, C, c_x, eta0 = _checked(T, R, C, c_x, eta0)  # before the clip reads c_x and R
    Xc, yt = clip_rows(X, c_x), np.clip(y, -R, R)
    return noisy_gd_from_sums(
        Xc.T @ Xc, Xc.T @ yt, len(y), privacy=privacy, rng=rng, T=T, R=R, C=C, c_x=c_x, eta0=eta0, B=B
    )


def noisy_gd_from_sums(
    G,
    h,
    n: int,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    T: int,
    R: float,
    C: float,
    c_x: float,
    eta0: float,
    B: float | None = None,
    plans: dict | None = None,
) -> np.ndarray:
    """:func:`noisy_gradient_descent_ols` from the clipped sums G = X'X and h = X'Π_R(y) of its n rows (rows clipped
    to ‖x‖₂ ≤ c_x): every update reads the data only through them, so a caller holding many subsamples may form them
    otherwise (:data:`NOISY_GD_SUMS`: the engine's stacked repetitions, the targeted attacks' shadow releases).
    ``plans``: a plan memo (:func:`~.sums.plan_once`)."""
    T, R, C, c_x, eta0 = _checked(T, R, C, c_x, eta0)
    d = len(h)
    plan = plan_once(plans, noisy_gd_plan, privacy, n, d, T=T, R=R, C=C, c_x=c_x, eta0=eta0, B=B)
    noise = draw("gaussian", plan.releases[0].noise_scale, (1, T, d), rng, privacy.sampler)
    return noisy_gd_from_stats(np.asarray(G)[None], np.asarray(h)[None], n, eta0=eta0, C=C, noise=noise)[0]


# the release after the sums, with its bounds: rows clipped to c_x, y to [-R, R] (the registry's sums=)
NOISY_GD_SUMS = Sums(noisy_gd_from_sums, row="c_x", out="R")


def _checked(T, R, C, c_x, eta0) -> tuple:
    return (check_count("T", T), *(check_positive(k, v) for k, v in (("R", R), ("C", C), ("c_x", c_x), ("eta0", eta0))))


def noisy_gd_batch(
    X, y, *, privacy: Privacy, rngs: list[np.random.Generator], tunings: list[dict], plans: dict
) -> list[np.ndarray]:
    """:func:`noisy_gradient_descent_ols` on one subsample with every set of constants in ``tunings`` (each
    complete), run i with its own ``rngs[i]``: the separate calls' estimates bit for bit, each the same (ε, δ)-DP
    release (nothing random is shared). Shared, because deterministic: the design is checked once, the clipped sums
    formed once per (c_x, R), a plan computed once per (privacy, n, d, constants) into ``plans``, the caller's memo
    (its PRIVACY WARNINGs given when it is computed; a refusal raised every time, the first being the separate
    calls' first), and the runs of equal (T, η⁰, C) stepped together by :func:`noisy_gd_from_stats` (batched over
    its leading axis; each run's noise its own draw, on its own grid step)."""
    X, y = check_design(X, y)
    n, d = X.shape
    sums: dict = {}
    runs = []
    for t in tunings:  # in order: the first refusal is the separate calls' first
        T, R, C, c_x, eta0 = _checked(t["T"], t["R"], t["C"], t["c_x"], t["eta0"])
        if (c_x, R) not in sums:
            Xc = clip_rows(X, c_x)
            sums[c_x, R] = Xc.T @ Xc, Xc.T @ np.clip(y, -R, R)
        plan = plan_once(plans, noisy_gd_plan, privacy, n, d, T=T, R=R, C=C, c_x=c_x, eta0=eta0, B=t["B"])
        runs.append(((T, eta0, C), sums[c_x, R], plan.releases[0].noise_scale))
    noises = [
        draw("gaussian", sigma, (T, d), rng, privacy.sampler)
        for ((T, _, _), _, sigma), rng in zip(runs, rngs, strict=True)
    ]
    groups: dict = {}
    for i, (key, _, _) in enumerate(runs):
        groups.setdefault(key, []).append(i)
    out: list = [None] * len(tunings)
    for (_, eta0, C), group in groups.items():
        G, h = (np.stack([runs[i][1][j] for i in group]) for j in (0, 1))
        z = [noises[i] for i in group]
        noise = GridNoise(np.stack([g.steps for g in z]), np.array([[g.step] for g in z]), z[0].exact)
        for i, beta in zip(group, noisy_gd_from_stats(G, h, n, eta0=eta0, C=C, noise=noise), strict=True):
            out[i] = beta
    return out
