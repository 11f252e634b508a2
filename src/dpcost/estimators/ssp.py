"""Sufficient statistics perturbation — SSP (Vu & Slavkovic 2009) and AdaSSP (Wang 2018, *Revisiting differentially
private linear regression*, Alg. 2): the algorithms, their sensitivities and their privacy plans."""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

from ..dp.accountant import gaussian_noise_multiplier
from ..dp.mechanisms import (
    check_positive,
    check_probability,
    check_sensitivity,
    classic_gaussian_sigma,
    gaussian_delta,
    gaussian_sigma,
)
from ..dp.plan import PrivacyPlan, grid_release
from ..dp.privacy import Privacy
from ..dp.samplers import add_noise, draw, grid_scale
from .base import clip_design
from .sums import Sums, plan_once


def xx_xy_sensitivities(B_X: float, B_Y: float, neighbours: str) -> tuple[float, float]:
    """ℓ2 sensitivities of (X'X upper triangle, diagonal included; X'y) for rows ‖x‖₂ ≤ B_X and |y| ≤ B_Y.

    add/remove (Wang 2018): B_X² and B_X B_Y. Replace-one: X'y moves by ‖xy − vy′‖ ≤ 2B_X B_Y, but the upper
    triangle of A = xx' − vv' only by √2·B_X², not 2B_X²: ‖upper(A)‖² = (‖A‖_F² + Σ A_ii²)/2, with
    ‖A‖_F² = ‖x‖⁴ + ‖v‖⁴ − 2(x'v)² ≤ 2B_X⁴ and Σ(x_i² − v_i²)² ≤ Σ x_i⁴ + Σ v_i⁴ ≤ 2B_X⁴
    (docs/proofs.md, "Sensitivities of X'X and X'y"; the worst case x ⊥ v on two coordinates attains it).
    """
    B_X, B_Y = check_positive("B_X", B_X), check_positive("B_Y", B_Y)  # before squaring: 2^±484 at most
    if neighbours == "replace":
        return math.sqrt(2) * B_X**2, 2 * B_X * B_Y
    return B_X**2, B_X * B_Y


def gaussian_releases_plan(
    method: str, releases: list[tuple[str, float, str | None, int]], p: Privacy, assumption: str, why: str
) -> PrivacyPlan:
    """k Gaussian releases (name, sensitivity in l2 under the relation of ``p``, the norm in words or None,
    coordinates) sharing (ε, δ), which are the whole mechanism (``why``); δ a number. Each σ is then paid for the
    noise grid's rounding of its coordinates (:func:`~dpcost.dp.samplers.grid_scale`).

    paper: each at (ε/k, δ/k) with Wang's σ = Δ√(log(2/δ′))/ε′ — which is NOT (ε′, δ′)-DP for moderate ε′ (see
    docs/proofs.md, "Wang's Gaussian calibration"); its exact δ is checked here and a violation refused or warned
    about.
    tight: one noise multiplier ρ for all k, from the exact Gaussian-DP composition of k Gaussians, σ_i = ρ Δ_i.
    """
    epsilon, delta = p.epsilon, p.delta
    k = len(releases)
    for _, sens, _, _ in releases:
        check_sensitivity(sens)

    def release(name, sens, words, dims, sigma, eps_i=None, delta_i=None):
        sigma = grid_scale(sigma, sens, dims, "l2", "gaussian", p.sampler)
        return grid_release(
            "gaussian",
            f"gaussian: {name}",
            sens,
            "l2",
            sigma,
            1,
            eps_i,
            delta_i,
            coordinates=dims,
            sampler=p.sampler,
            norm_words=words,
        )

    if p.calibration == "tight":
        rho = gaussian_noise_multiplier(k, epsilon, delta)
        rels = tuple(release(name, sens, norm, dims, rho * sens) for name, sens, norm, dims in releases)
        comp = f"exact Gaussian-DP composition of {k} Gaussian releases with a common noise multiplier (closed form)"
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
    return PrivacyPlan(
        method,
        epsilon,
        delta,
        p.calibration,
        comp,
        assumption,
        rels,
        p.relation,
        whole_mechanism=True,
        whole_mechanism_why=why,
    )


def _assumption(B_X, B_Y) -> str:
    return f"rows clipped to ||x||_2 <= B_X = {B_X}, y clipped to [-{B_Y}, {B_Y}]"


def ssp_plan(privacy: Privacy, n: int, d: int, *, B_X: float, B_Y: float) -> PrivacyPlan:
    """SSP: releases X'X (upper triangle, symmetric noise) and X'y. Wang's relation is add/remove one row; under
    replace-one (the default here) the sensitivities are √2·B_X² and 2B_X B_Y (:func:`xx_xy_sensitivities`)."""
    p = privacy.at(n)
    s_xx, s_xy = xx_xy_sensitivities(B_X, B_Y, p.neighbours)
    rels = [("X'X upper triangle", s_xx, "l2 (Frobenius)", d * (d + 1) // 2), ("X'y", s_xy, None, d)]
    why = "Gaussian releases of X'X and X'y; the solve is post-processing"
    return gaussian_releases_plan("ssp", rels, p, _assumption(B_X, B_Y), why)


def adassp_plan(privacy: Privacy, n: int, d: int, *, B_X: float, B_Y: float) -> PrivacyPlan:
    """AdaSSP (Wang 2018, Alg. 2): releases λ_min(X'X) (sensitivity B_X² under either relation, by Weyl: one
    rank-one PSD term leaves and one enters), X'X and X'y (as in :func:`ssp_plan`), a third of the budget each
    under the paper calibration."""
    p = privacy.at(n)
    s_xx, s_xy = xx_xy_sensitivities(B_X, B_Y, p.neighbours)
    rels = [
        ("lambda_min(X'X)", B_X**2, "absolute", 1),
        ("X'X upper triangle", s_xx, "l2 (Frobenius)", d * (d + 1) // 2),
        ("X'y", s_xy, None, d),
    ]
    why = "Gaussian releases of lambda_min(X'X), X'X and X'y; the ridge and the solve are post-processing"
    return gaussian_releases_plan("adassp", rels, p, _assumption(B_X, B_Y), why)


def noise_norm_bound(sigma: float, d: int, rho: float) -> float:
    """σ√(d log(2d²/ρ)): a bound on the operator norm of a d × d symmetric matrix with N(0, σ²) entries on and above
    the diagonal, holding with probability 1 − ρ (Wang 2018, Alg. 2)."""
    return sigma * math.sqrt(d * math.log(2 * d**2 / check_probability("rho", rho)))


@functools.lru_cache(maxsize=16)
def upper_indices(d: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.triu_indices(d)``, read-only and made once per d (a tune job asks for it twice in each of 25,600 fits)."""
    iu = np.triu_indices(d)
    for a in iu:
        a.flags.writeable = False
    return iu


def symmetric_from_upper(upper: np.ndarray, d: int) -> np.ndarray:
    """The symmetric d × d matrix whose upper triangle (diagonal included, row-major) is ``upper`` (the last axis;
    leading axes: a stack of them)."""
    iu = upper_indices(d)
    A = np.zeros(upper.shape[:-1] + (d, d))
    A[..., iu[0], iu[1]] = upper
    return A + np.swapaxes(np.triu(A, 1), -1, -2)


def noisy_symmetric(G: np.ndarray, sigma: float, rng: np.random.Generator, sampler: str = "exact") -> np.ndarray:
    """The symmetric d × d matrix G released with i.i.d. N(0, σ²) noise on and above the diagonal, mirrored below
    (the privacy analysis's noise; the reference code's (Z + Z')/2 has off-diagonal variance σ²/2 instead:
    docs/proofs.md, "Symmetric noise on X'X"). The d(d+1)/2 upper entries are one release on the noise grid. G may
    be a stack (…, d, d): one release per matrix, drawn in one call."""
    d = G.shape[-1]
    iu = upper_indices(d)
    upper = G[..., iu[0], iu[1]]
    return symmetric_from_upper(draw("gaussian", sigma, upper.shape, rng, sampler).add(upper), d)


class NoisyStatistics(NamedTuple):
    """What an SSP-type release puts out, before the solve: the noisy Gram matrix G̃ (symmetric, N(0, σ_G²) on and
    above the diagonal), the noisy X'y b̃ (N(0, σ_b²) per coordinate), the ridge λ added to G̃ (post-processing of
    the releases), the plan, and ``extra``: what a method-specific ridge rule used (AdaSSP's λ_min release). The
    estimate is ``solve(G̃ + λI, b̃)`` (:func:`solve_statistics`); :mod:`dpcost.inference` reads the rest."""

    G: np.ndarray
    b: np.ndarray
    lam: float
    sigma_G: float
    sigma_b: float
    plan: PrivacyPlan
    extra: dict


def solve_statistics(s: NoisyStatistics) -> np.ndarray:
    """θ̂ = (G̃ + λI)⁻¹b̃ (minimum-norm least squares if singular): post-processing of the released statistics."""
    A = s.G + s.lam * np.eye(len(s.b)) if s.lam else s.G
    return np.linalg.lstsq(A, s.b, rcond=None)[0]


def clipped_sums(X, y, B_X: float, B_Y: float) -> tuple[np.ndarray, np.ndarray]:
    """(X'X, X'y) of the rows clipped to ‖x‖₂ ≤ B_X and y to [−B_Y, B_Y]: all the SSP family's releases read. Sums
    over rows, so a caller holding many subsamples of one table may form them otherwise (the targeted attacks' shadow
    releases, :mod:`dpcost.analysis.targeted`) and pass them to the ``*_from_sums`` functions."""
    Xc, yc = clip_design(X, y, B_X, B_Y)
    return Xc.T @ Xc, Xc.T @ yc


def ssp_statistics(X, y, *, privacy: Privacy, rng: np.random.Generator, B_X: float, B_Y: float) -> NoisyStatistics:
    """The releases of :func:`ssp` (its draws, in its order): G̃ = X'X + E₁ and b̃ = X'y + E₂, λ = 0."""
    G, b = clipped_sums(X, y, B_X, B_Y)
    return ssp_from_sums(G, b, len(y), privacy=privacy, rng=rng, B_X=B_X, B_Y=B_Y)


def ssp_from_sums(
    G, b, n: int, *, privacy: Privacy, rng: np.random.Generator, B_X: float, B_Y: float, plans: dict | None = None
) -> NoisyStatistics:
    """:func:`ssp_statistics` from the clipped sums (:func:`clipped_sums`) of n rows (``plans``: a plan memo,
    :func:`~.sums.plan_once`)."""
    d = len(b)
    plan = plan_once(plans, ssp_plan, privacy, n, d, B_X=B_X, B_Y=B_Y)
    s_xx, s_xy = (r.noise_scale for r in plan.releases)
    A = noisy_symmetric(G, s_xx, rng, privacy.sampler)
    b = add_noise(b, "gaussian", s_xy, rng, privacy.sampler)
    return NoisyStatistics(A, b, 0.0, s_xx, s_xy, plan, {})


def ssp(X, y, *, privacy: Privacy, rng: np.random.Generator, B_X: float, B_Y: float) -> np.ndarray:
    """Sufficient statistics perturbation (Vu & Slavkovic 2009; Wang 2018 §3.2, App. C.1).

    θ̂ = (X'X + E₁)⁻¹(X'y + E₂), E₁ symmetric Gaussian, E₂ Gaussian (minimum-norm solution if singular: SSP is
    unstable for small λ_min, which AdaSSP fixes). Privacy: (ε, δ)-DP under replace-one neighbours, sensitivities
    √2·B_X² and 2B_X B_Y (``neighbours="add_remove"`` uses Wang's B_X² and B_X B_Y), see :func:`ssp_plan`.
    Rows are clipped to ‖x‖₂ ≤ B_X and y to [−B_Y, B_Y] here: B_X, B_Y are public bounds, never derived from the data.
    The releases are :func:`ssp_statistics`'s; after the sums, :func:`ssp_release`.
    """
    return ssp_release(*clipped_sums(X, y, B_X, B_Y), len(y), privacy=privacy, rng=rng, B_X=B_X, B_Y=B_Y)


def ssp_release(G, b, n: int, *, privacy: Privacy, rng, B_X: float, B_Y: float, plans: dict | None = None):
    """:func:`ssp` from the clipped sums of its n rows (:data:`SSP_SUMS`)."""
    return solve_statistics(ssp_from_sums(G, b, n, privacy=privacy, rng=rng, B_X=B_X, B_Y=B_Y, plans=plans))


def adassp_statistics(
    X, y, *, privacy: Privacy, rng: np.random.Generator, B_X: float, B_Y: float, rho: float = 0.05
) -> NoisyStatistics:
    """The releases of :func:`adassp` (its draws, in its order) and the ridge λ they give; ``extra`` holds the noisy
    λ_min, its noise scale σ₁ and the operator-norm bound, from which λ was computed."""
    G, Xy = clipped_sums(X, y, B_X, B_Y)
    return adassp_from_sums(G, Xy, len(y), privacy=privacy, rng=rng, B_X=B_X, B_Y=B_Y, rho=rho)


def adassp_from_sums(
    G,
    Xy,
    n: int,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    B_X: float,
    B_Y: float,
    rho: float = 0.05,
    plans: dict | None = None,
) -> NoisyStatistics:
    """:func:`adassp_statistics` from the clipped sums (:func:`clipped_sums`) of n rows (``plans``: a plan memo)."""
    d = len(Xy)
    plan = plan_once(plans, adassp_plan, privacy, n, d, B_X=B_X, B_Y=B_Y)
    s_min, s_xx, s_xy = (r.noise_scale for r in plan.releases)
    lam_min = max(np.linalg.eigvalsh(G)[0], 0.0)
    noisy_min = float(add_noise(lam_min, "gaussian", s_min, rng, privacy.sampler))
    lam_min_t = max(noisy_min - s_min * math.sqrt(math.log(6 / plan.delta)), 0.0)
    bound = noise_norm_bound(s_xx, d, rho)
    lam = max(0.0, bound - lam_min_t)
    A = noisy_symmetric(G, s_xx, rng, privacy.sampler)
    b = add_noise(Xy, "gaussian", s_xy, rng, privacy.sampler)
    extra = {
        "noisy_min": noisy_min,
        "sigma_min": s_min,
        "bound": bound,
        "shift": s_min * math.sqrt(math.log(6 / plan.delta)),
    }
    return NoisyStatistics(A, b, lam, s_xx, s_xy, plan, extra)


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
    probability of the operator-norm bound (0.05, as in the reference code); it affects utility only. The releases
    are :func:`adassp_statistics`'s; after the sums, :func:`adassp_release`.
    """
    return adassp_release(*clipped_sums(X, y, B_X, B_Y), len(y), privacy=privacy, rng=rng, B_X=B_X, B_Y=B_Y, rho=rho)


def adassp_release(
    G, Xy, n: int, *, privacy: Privacy, rng, B_X: float, B_Y: float, rho: float = 0.05, plans: dict | None = None
):
    """:func:`adassp` from the clipped sums of its n rows (:data:`ADASSP_SUMS`)."""
    s = adassp_from_sums(G, Xy, n, privacy=privacy, rng=rng, B_X=B_X, B_Y=B_Y, rho=rho, plans=plans)
    return np.linalg.lstsq(s.G + s.lam * np.eye(len(s.b)), s.b, rcond=None)[0]


# ---- the joint release --------------------------------------------------------------------------------------------


def joint_sensitivity(d: int, ratio: float, neighbours: str) -> float:
    """ℓ2 sensitivity of z = (upper(X'X)/B_X², X'y/(ratio·B_X B_Y)) for rows ‖x‖₂ ≤ B_X and |y| ≤ B_Y.

    Replace-one, x → v with c = |x'v|/B_X² ∈ [0, 1]: ‖upper(xx' − vv')‖² ≤ B_X⁴(2 − (1 + 1/d)c²) (the Frobenius part
    is 2 − 2c², the diagonal Σ(x_i² − v_i²)² ≤ 2 − 2c²/d by Cauchy–Schwarz, Σ x_i²v_i² ≥ (x'v)²/d) and
    ‖xy − vy′‖² ≤ B_X²B_Y²(2 + 2c): the two parts cannot both be at their worst, so
    Δ² = max_c (2 − (1 + 1/d)c²) + (2 + 2c)/ratio², a concave quadratic maximised at c = min(1, 1/((1 + 1/d)ratio²))
    (docs/proofs.md, "Joint SSP"). Add/remove (one row x): Δ² = 1 + 1/ratio².
    """
    if neighbours != "replace":
        return math.sqrt(1 + 1 / ratio**2)
    k = 1 + 1 / d
    c = min(1.0, 1 / (k * ratio**2))
    return math.sqrt(2 - k * c * c + (2 + 2 * c) / ratio**2)


def joint_ssp_plan(privacy: Privacy, n: int, d: int, *, B_X: float, B_Y: float, ratio: float) -> PrivacyPlan:
    """One Gaussian release of z = (upper(X'X)/B_X², X'y/(ratio·B_X B_Y)), sensitivity :func:`joint_sensitivity`.

    tight: the analytic Gaussian mechanism (Balle & Wang 2018) — exact for one release.
    paper: the classic Gaussian σ = Δ√(2 log(1.25/δ))/ε (Dwork & Roth 2014, Thm A.1), proven for ε < 1 only.
    """
    p = privacy.at(n)
    for k, v in (("B_X", B_X), ("B_Y", B_Y), ("ratio", ratio)):
        check_positive(k, v)
    sens = joint_sensitivity(d, ratio, p.neighbours)
    dims = d * (d + 1) // 2 + d
    name = f"gaussian: (upper(X'X)/B_X^2, X'y/({ratio} B_X B_Y)) jointly"
    if p.calibration == "tight":
        sigma = gaussian_sigma(sens, p.epsilon, p.delta, "analytic")
        comp, eps_i, delta_i = "one analytic Gaussian release (exact)", None, None
    else:
        if p.epsilon >= 1:
            p.outside_validity(f"the classic Gaussian mechanism needs epsilon < 1, got epsilon={p.epsilon}")
        sigma = classic_gaussian_sigma(sens, p.epsilon, p.delta)
        comp, eps_i, delta_i = "one classic Gaussian release", p.epsilon, p.delta
    sigma = grid_scale(sigma, sens, dims, "l2", "gaussian", p.sampler)
    rel = grid_release("gaussian", name, sens, "l2", sigma, 1, eps_i, delta_i, coordinates=dims, sampler=p.sampler)
    assumption = _assumption(B_X, B_Y) + f"; noise on X'y is {ratio} x (noise on X'X) x B_Y/B_X"
    why = "one Gaussian release of (X'X upper triangle, X'y); the ridge and the solve are post-processing"
    return PrivacyPlan(
        "joint_ssp",
        p.epsilon,
        p.delta,
        p.calibration,
        comp,
        assumption,
        (rel,),
        p.relation,
        whole_mechanism=True,
        whole_mechanism_why=why,
    )


def ridge_from_noisy_gram(G: np.ndarray, sigma_G: float, kappa: float, rho: float) -> float:
    """The ridge λ = max(0, κ·σ_G√(d log(2d²/ρ)) − λ_min(G̃)) read off the released Gram matrix G̃ alone (post-
    processing): σ_G√(d log(2d²/ρ)) bounds the noise's operator norm with probability 1 − ρ (Wang 2018, as in
    AdaSSP), so G̃ + λI keeps its smallest eigenvalue ≥ κ times that bound — no separate λ_min release."""
    return max(0.0, kappa * noise_norm_bound(sigma_G, G.shape[0], rho) - float(np.linalg.eigvalsh(G)[0]))


def joint_ssp(
    X,
    y,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    B_X: float,
    B_Y: float,
    ratio: float = 1.0,
    kappa: float = 1.0,
    rho: float = 0.05,
) -> np.ndarray:
    """Joint sufficient-statistics release with the ridge chosen by post-processing (docs/proofs.md, "Joint SSP";
    SSP of Vu & Slavkovic 2009 / Wang 2018 with one release).

    z = (upper(X'X)/B_X², X'y/(ratio·B_X B_Y)) + N(0, σ²I) is released once; G̃ and b̃ are read back from it, the
    ridge λ from G̃ (:func:`ridge_from_noisy_gram`), and θ̂ = (G̃ + λI)⁻¹b̃.

    Privacy: (ε, δ)-DP under replace-one neighbours (or add/remove) — one Gaussian mechanism of sensitivity
    :func:`joint_sensitivity`, smaller than composing SSP's two releases because a neighbour cannot move X'X and X'y
    to their worst at once. Rows are clipped to ‖x‖₂ ≤ B_X and y to [−B_Y, B_Y] here (public bounds). ``ratio``
    sets how the noise splits between X'y and X'X; ``kappa`` and ``rho`` set the ridge (utility only).
    """
    G, b = clipped_sums(X, y, B_X, B_Y)
    kw = dict(B_X=B_X, B_Y=B_Y, ratio=ratio, kappa=kappa, rho=rho)
    return joint_ssp_release(G, b, len(y), privacy=privacy, rng=rng, **kw)


def joint_ssp_release(
    G,
    b,
    n: int,
    *,
    privacy: Privacy,
    rng,
    B_X: float,
    B_Y: float,
    ratio: float = 1.0,
    kappa: float = 1.0,
    rho: float = 0.05,
    plans: dict | None = None,
):
    """:func:`joint_ssp` from the clipped sums of its n rows (:data:`JOINT_SSP_SUMS`)."""
    kw = dict(B_X=B_X, B_Y=B_Y, ratio=ratio, kappa=kappa, rho=rho, plans=plans)
    s = joint_ssp_from_sums(G, b, n, privacy=privacy, rng=rng, **kw)
    return np.linalg.lstsq(s.G + s.lam * np.eye(len(s.b)), s.b, rcond=None)[0]


def joint_ssp_statistics(
    X,
    y,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    B_X: float,
    B_Y: float,
    ratio: float = 1.0,
    kappa: float = 1.0,
    rho: float = 0.05,
) -> NoisyStatistics:
    """The release of :func:`joint_ssp` (its one draw) read back as G̃ (noise σB_X² per upper entry) and b̃ (noise
    σ·ratio·B_X B_Y), and the ridge λ read off G̃ (``extra``: κ and ρ of that rule)."""
    G, b = clipped_sums(X, y, B_X, B_Y)
    return joint_ssp_from_sums(
        G, b, len(y), privacy=privacy, rng=rng, B_X=B_X, B_Y=B_Y, ratio=ratio, kappa=kappa, rho=rho
    )


def joint_ssp_from_sums(
    G,
    b,
    n: int,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    B_X: float,
    B_Y: float,
    ratio: float = 1.0,
    kappa: float = 1.0,
    rho: float = 0.05,
    plans: dict | None = None,
) -> NoisyStatistics:
    """:func:`joint_ssp_statistics` from the clipped sums (:func:`clipped_sums`) of n rows (``plans``: a plan
    memo)."""
    kappa, rho = check_positive("kappa", kappa), check_positive("rho", rho)
    d = len(b)
    plan = plan_once(plans, joint_ssp_plan, privacy, n, d, B_X=B_X, B_Y=B_Y, ratio=ratio)
    sigma = plan.releases[0].noise_scale
    iu = np.triu_indices(d)
    y_unit = ratio * B_X * B_Y
    z = add_noise(np.concatenate([G[iu] / B_X**2, b / y_unit]), "gaussian", sigma, rng, privacy.sampler)
    A = symmetric_from_upper(z[: len(iu[0])] * B_X**2, d)
    lam = ridge_from_noisy_gram(A, sigma * B_X**2, kappa, rho)
    return NoisyStatistics(
        A, z[len(iu[0]) :] * y_unit, lam, sigma * B_X**2, sigma * y_unit, plan, {"kappa": kappa, "rho": rho}
    )


# Each estimator after its clipped sums (:func:`clipped_sums`), the registry's ``sums=`` (:mod:`.sums`): what the
# engine runs on a stack of repetitions and a targeted attack on its shadows' sums
SSP_SUMS, ADASSP_SUMS, JOINT_SSP_SUMS = Sums(ssp_release), Sums(adassp_release), Sums(joint_ssp_release)
