"""Sufficient statistics perturbation — SSP (Vu & Slavkovic 2009) and AdaSSP (Wang 2018, *Revisiting differentially
private linear regression*, Alg. 2): the algorithms, their sensitivities and their privacy plans."""

from __future__ import annotations

import math

import numpy as np

from ..dp.accountant import gaussian_noise_multiplier
from ..dp.mechanisms import check_sensitivity, gaussian_delta
from ..dp.plan import PrivacyPlan, Release
from ..dp.samplers import add_noise, describe, draw, grid_scale
from ..dp.spec import Privacy
from .base import clip_design


def xx_xy_sensitivities(B_X: float, B_Y: float, neighbours: str) -> tuple[float, float]:
    """ℓ2 sensitivities of (X'X upper triangle, X'y): B_X², B_X B_Y under add/remove (Wang 2018), twice that under
    replace-one (‖xx' − x'x''‖_F ≤ 2B_X², ‖xy − x'y'‖ ≤ 2B_X B_Y)."""
    k = 2 if neighbours == "replace" else 1
    return k * B_X**2, k * B_X * B_Y


def gaussian_releases_plan(
    method: str, releases: list[tuple[str, float, str, int]], p: Privacy, assumption: str
) -> PrivacyPlan:
    """k Gaussian releases (name, sensitivity under the relation of ``p``, norm, coordinates) sharing (ε, δ); δ a
    number. Each σ is then paid for the noise grid's rounding of its coordinates
    (:func:`~dpcost.dp.samplers.grid_scale`).

    paper: each at (ε/k, δ/k) with Wang's σ = Δ√(log(2/δ′))/ε′ — which is NOT (ε′, δ′)-DP for moderate ε′ (see
    ../shared/notes/seed-001.md §1); its exact δ is checked here and a violation refused or warned about.
    tight: one noise multiplier ρ for all k, from the PLD of k composed Gaussians (dp-accounting), σ_i = ρ Δ_i.
    """
    epsilon, delta = p.epsilon, p.delta
    k = len(releases)
    for _, sens, _, _ in releases:
        check_sensitivity(sens)

    def release(name, sens, norm, dims, sigma, eps_i=None, delta_i=None):
        sigma = grid_scale(sigma, sens, dims, "l2", "gaussian", p.sampler)
        how = describe("gaussian", dims, "l2", p.sampler)
        return Release(f"gaussian: {name}", sens, norm, sigma, 1, eps_i, delta_i, sampler=how)

    if p.calibration == "tight":
        rho = gaussian_noise_multiplier(k, epsilon, delta)
        rels = tuple(release(name, sens, norm, dims, rho * sens) for name, sens, norm, dims in releases)
        comp = f"PLD accounting of {k} Gaussian releases with a common noise multiplier (dp-accounting)"
    else:
        e_k, d_k = epsilon / k, delta / k
        multiplier = math.sqrt(math.log(2 / d_k)) / e_k
        actual = gaussian_delta(multiplier, 1.0, e_k)
        if actual > d_k:
            p.outside_validity(
                f"Wang (2018)'s calibration sqrt(log(2/delta'))/eps' is not ({e_k:.3g}, {d_k:.3g})-DP: its exact "
                f"delta is {actual:.3g}"
            )
        rels = tuple(
            release(name, sens, norm, dims, sens * multiplier, e_k, d_k) for name, sens, norm, dims in releases
        )
        comp = f"basic composition of {k} Gaussian releases at (eps/{k}, delta/{k}), Wang (2018) calibration"
    return PrivacyPlan(method, epsilon, delta, p.calibration, comp, assumption, rels, p.relation)


def _assumption(B_X, B_Y) -> str:
    return f"rows clipped to ||x||_2 <= B_X = {B_X}, y clipped to [-{B_Y}, {B_Y}]"


def ssp_plan(privacy: Privacy, n: int, d: int, *, B_X: float, B_Y: float) -> PrivacyPlan:
    """SSP: releases X'X (upper triangle, symmetric noise) and X'y. Wang's relation is add/remove one row; under
    replace-one (the default here) the sensitivities double: ‖xx' − x'x''‖_F ≤ 2B_X², ‖xy − x'y'‖ ≤ 2B_X B_Y."""
    p = privacy.at(n)
    s_xx, s_xy = xx_xy_sensitivities(B_X, B_Y, p.neighbours)
    rels = [("X'X upper triangle", s_xx, "l2 (Frobenius)", d * (d + 1) // 2), ("X'y", s_xy, "l2", d)]
    return gaussian_releases_plan("ssp", rels, p, _assumption(B_X, B_Y))


def adassp_plan(privacy: Privacy, n: int, d: int, *, B_X: float, B_Y: float) -> PrivacyPlan:
    """AdaSSP (Wang 2018, Alg. 2): releases λ_min(X'X) (sensitivity B_X² under either relation, by Weyl: one
    rank-one PSD term leaves and one enters), X'X and X'y (as in :func:`ssp_plan`), a third of the budget each
    under the paper calibration."""
    p = privacy.at(n)
    s_xx, s_xy = xx_xy_sensitivities(B_X, B_Y, p.neighbours)
    rels = [
        ("lambda_min(X'X)", B_X**2, "absolute", 1),
        ("X'X upper triangle", s_xx, "l2 (Frobenius)", d * (d + 1) // 2),
        ("X'y", s_xy, "l2", d),
    ]
    return gaussian_releases_plan("adassp", rels, p, _assumption(B_X, B_Y))


def noisy_symmetric(G: np.ndarray, sigma: float, rng: np.random.Generator, sampler: str = "exact") -> np.ndarray:
    """The symmetric d × d matrix G released with i.i.d. N(0, σ²) noise on and above the diagonal, mirrored below
    (the privacy analysis's noise; the reference code's (Z + Z')/2 has off-diagonal variance σ²/2 instead, seed-001
    notes pitfall 8). The d(d+1)/2 upper entries are one release on the noise grid."""
    d = G.shape[0]
    iu = np.triu_indices(d)
    A = np.zeros((d, d))
    A[iu] = draw("gaussian", sigma, len(iu[0]), rng, sampler).add(G[iu])
    return A + np.triu(A, 1).T


def ssp(X, y, *, privacy: Privacy, rng: np.random.Generator, B_X: float, B_Y: float) -> np.ndarray:
    """Sufficient statistics perturbation (Vu & Slavkovic 2009; Wang 2018 §3.2, App. C.1).

    θ̂ = (X'X + E₁)⁻¹(X'y + E₂), E₁ symmetric Gaussian, E₂ Gaussian (minimum-norm solution if singular: SSP is
    unstable for small λ_min, which AdaSSP fixes). Privacy: (ε, δ)-DP under replace-one neighbours, sensitivities
    2B_X² and 2B_X B_Y (twice Wang's add/remove ones; ``neighbours="add_remove"`` uses his), see :func:`ssp_plan`.
    Rows are clipped to ‖x‖₂ ≤ B_X and y to [−B_Y, B_Y] here: B_X, B_Y are public bounds, never derived from the data.
    """
    Xc, yc = clip_design(X, y, B_X, B_Y)
    n, d = Xc.shape
    plan = ssp_plan(privacy, n, d, B_X=B_X, B_Y=B_Y)
    s_xx, s_xy = (r.noise_scale for r in plan.releases)
    A = noisy_symmetric(Xc.T @ Xc, s_xx, rng, privacy.sampler)
    b = add_noise(Xc.T @ yc, "gaussian", s_xy, rng, privacy.sampler)
    return np.linalg.lstsq(A, b, rcond=None)[0]


def adassp(
    X, y, *, privacy: Privacy, rng: np.random.Generator, B_X: float, B_Y: float, rho: float = 0.05
) -> np.ndarray:
    """AdaSSP — Wang (2018), Algorithm 2: SSP with a ridge λ chosen from a private lower bound on λ_min(X'X).

    1. λ̃_min = max(λ_min + σ₁Z − σ₁√log(6/δ), 0)   (a high-probability lower bound; only selects λ)
    2. λ = max(0, √(d log(2d²/ρ))·σ₂ − λ̃_min)        (σ₂√(d log(2d²/ρ)) bounds ‖E₁‖ with probability 1 − ρ)
    3. θ̃ = (X'X + E₁ + λI)⁻¹(X'y + E₂) — with the *noisy* X'X (the printed output line is garbled; the proof and the
       reference code use the noisy one).
    Privacy: (ε, δ)-DP under replace-one neighbours by composing the three Gaussian releases (:func:`adassp_plan`);
    λ̃_min and λ are post-processing. Rows clipped to ‖x‖₂ ≤ B_X, y to [−B_Y, B_Y] here. ρ is the failure
    probability of the operator-norm bound (0.05, as in the reference code); it affects utility only.
    """
    Xc, yc = clip_design(X, y, B_X, B_Y)
    n, d = Xc.shape
    plan = adassp_plan(privacy, n, d, B_X=B_X, B_Y=B_Y)
    s_min, s_xx, s_xy = (r.noise_scale for r in plan.releases)
    G = Xc.T @ Xc
    lam_min = max(np.linalg.eigvalsh(G)[0], 0.0)
    noisy_min = float(add_noise(lam_min, "gaussian", s_min, rng, privacy.sampler))
    lam_min_t = max(noisy_min - s_min * math.sqrt(math.log(6 / plan.delta)), 0.0)
    lam = max(0.0, math.sqrt(d * math.log(2 * d**2 / rho)) * s_xx - lam_min_t)
    A = noisy_symmetric(G, s_xx, rng, privacy.sampler) + lam * np.eye(d)
    b = add_noise(Xc.T @ yc, "gaussian", s_xy, rng, privacy.sampler)
    return np.linalg.lstsq(A, b, rcond=None)[0]
