"""Private Frank-Wolfe over the ℓ1 ball — Talwar, Thakurta & Zhang (NeurIPS 2015), Algorithm 2, applied to the mean
(the comparator of Cai, Wang & Zhang 2021, §6.1): the algorithm, its score sensitivity and its privacy plan."""

from __future__ import annotations

import numpy as np

from ..dp.accountant import advanced_composition_epsilon0, pure_steps_epsilon0
from ..dp.mechanisms import check_positive, check_sensitivity
from ..dp.plan import PrivacyPlan, Release, grid_release
from ..dp.privacy import Privacy
from ..dp.samplers import draw, grid_scale
from .base import check_count, check_matrix, require_replace
from .sparse_mean import truncated_mean


def vertex_selections(p: Privacy, sens: float, T: int) -> tuple[Release, str]:
    """T report-noisy-min selections over vertex scores of ℓ∞ sensitivity ``sens`` at the resolved budget p, each
    ε₀-DP with Laplace(2·sens/ε₀): ε₀ by advanced composition (paper) or the better of basic composition and
    zCDP/RDP accounting (tight). Returns the release and the composition's description."""
    check_sensitivity(sens)
    if p.calibration == "paper":
        e0, comp = advanced_composition_epsilon0(p.epsilon, p.delta, T), f"advanced composition of {T} selections"
    else:
        e0 = pure_steps_epsilon0(T, p.epsilon, p.delta)
        comp = f"{T} selections: the better of basic composition and zCDP/RDP accounting (dp-accounting)"
    b = grid_scale(2 * sens / e0, sens, 1, "linf", "laplace", p.sampler)  # + one grid step per rounded score
    rel = grid_release(
        "selection",
        "report-noisy-min (Laplace)",
        sens,
        "linf",
        b,
        T,
        e0,
        coordinates=None,
        sampler=p.sampler,
        norm_words="linf over vertex scores",
    )
    return rel, comp


FRANK_WOLFE_WHY = "report-noisy-min selections are not additive-noise releases"


def frank_wolfe_plan(privacy: Privacy, n: int, d: int, *, R: float, radius: float, T: int) -> PrivacyPlan:
    """T report-noisy-min selections over the 2d vertices of the ℓ1 ball, score sensitivity Δ = radius·2R/n,
    Laplace(2Δ/ε₀) noise, each selection ε₀-DP.
    paper: ε₀ by advanced composition. tight: ε₀ by zCDP/RDP accounting (dp-accounting)."""
    p = privacy.at(n)
    require_replace(p, "frank_wolfe", "its scores are means over the public sample size n")
    epsilon, delta = p.epsilon, p.delta
    T = check_count("T", T)
    rel, comp = vertex_selections(p, radius * 2 * R / n, T)
    return PrivacyPlan(
        "frank_wolfe",
        epsilon,
        delta,
        p.calibration,
        comp,
        f"coordinates clipped to [-{R}, {R}], estimate in the l1 ball of radius {radius}",
        (rel,),
        p.relation,
        whole_mechanism=False,
        whole_mechanism_why=FRANK_WOLFE_WHY,
    )


def private_frank_wolfe_mean(
    X, *, privacy: Privacy, rng: np.random.Generator, R: float, radius: float, T: int
) -> np.ndarray:
    """Private Frank-Wolfe over the ℓ1 ball — Talwar, Thakurta & Zhang (2015), Algorithm 2 (A_Noise-FW, polytope
    case), applied to the mean as least squares to the sample mean.

    Loss L(θ) = (1/n) Σ_i ½‖θ − Π_R(x_i)‖², so ∇L(θ) = θ − X̄_R. Constraint set C = {‖θ‖₁ ≤ radius}, the convex hull
    of the 2d vertices ±radius·e_j. θ₁ = 0; for t = 1 … T: α_s = ⟨s, ∇L(θ_t)⟩ + Laplace(b) for every vertex s,
    θ̃_t = argmin α_s, θ_{t+1} = (1 − μ_t)θ_t + μ_t θ̃_t with μ_t = 2/(t + 2).

    Privacy, our calibration (the paper prints b = L₁‖C‖₁√(8T log(1/δ))/(nε) without fixing the neighbour
    relation): each α_s has replace-one sensitivity Δ = radius · 2R/n (X̄_R moves by ≤ 2R/n per coordinate), so each
    report-noisy-min with Laplace(2Δ/ε₀) is ε₀-DP, and T of them compose to (ε, δ)-DP: ε₀ by advanced composition
    (calibration "paper") or by zCDP/RDP accounting ("tight"), see :func:`frank_wolfe_plan`. Only the selections
    touch the data; θ_T is post-processing.
    """
    X = check_matrix(X)
    n, d = X.shape
    R, radius = check_positive("R", R), check_positive("radius", radius)
    T = check_count("T", T)
    mean = truncated_mean(X, R)
    b = frank_wolfe_plan(privacy, n, d, R=R, radius=radius, T=T).releases[0].noise_scale
    noise = draw("laplace", b, (T, 2 * d), rng, privacy.sampler)
    theta = np.zeros(d)
    for t in range(1, T + 1):
        grad = theta - mean
        # vertices +r e_j, then −r e_j; noisy scores on the grid, ties to the lowest index (still ε₀-DP)
        alpha = noise[t - 1].add(np.concatenate([radius * grad, -radius * grad]))
        k = int(np.argmin(alpha))
        vertex = np.zeros(d)
        vertex[k % d] = radius if k < d else -radius
        mu = 2 / (t + 2)
        theta = (1 - mu) * theta + mu * vertex
    return theta
