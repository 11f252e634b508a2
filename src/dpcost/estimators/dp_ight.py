"""DP-IGHT — differentially private iterative gradient hard thresholding: Wang & Gu, "Differentially private iterative
gradient hard thresholding for sparse learning", IJCAI 2019 (Algorithm 1 there), the DP-IGHT baseline of Wang & Gu
(AAAI 2020, Table 1 and Tables 2–3).

Algorithm: θ_0 = 0; for t = 1 … T, θ_t = H_s(θ_{t−1} − η g̃_t) with the released noisy gradient
g̃_t = ∇L̃_S(θ_{t−1}) + b_t, b_t ~ N(0, σ²I_d); H_s keeps the s largest |·| (ties: lowest index). Returns θ_T.

Privacy: (ε, δ)-DP under *replace-one* neighbours (n public), for every input. The releases are g̃_1 … g̃_T; the
iterates, H_s and the step η are post-processing of them (θ_{t−1} depends on the data only through g̃_1 … g̃_{t−1}), so
the mechanism is the adaptive composition of T Gaussian mechanisms on the gradient. Its ℓ2 sensitivity is that of the
gradient, not of the step: the step's noise is ησ, its sensitivity 2ηG/n, the ratio the same.

Assumption, enforced in code whatever the data: each record's gradient has ‖∇ℓ(θ; x, y)‖₂ ≤ G for every θ.
  * every row is clipped to ‖x_i‖₂ ≤ c_x (:func:`~.losses.clip_rows_l2`, sparse stays sparse);
  * logistic loss ℓ = log(1 + e^u) − yu, y ∈ {0, 1} (refused otherwise): |σ(u) − y| < 1, G = c_x;
  * squared loss ℓ = (u − y)²/2: y is clipped to [−B_y, B_y] and the linear predictor u = x'θ to [−radius, radius]
    inside the gradient, which is then that of the Huber-type loss ψ_r(u) − yu, ψ_r(u) = u²/2 for |u| ≤ r = radius
    and r|u| − r²/2 beyond (convex; equal to the squared loss up to a constant wherever |x'θ| ≤ radius — choose
    radius ≥ sup|x_i'θ*|, e.g. c_x‖θ*‖₂). Residual |clip(u) − y| ≤ radius + B_y, G = c_x(radius + B_y).
  (:func:`~.losses.gradient_bound`.) Sensitivity: ‖∇L̃_S(θ) − ∇L̃_S′(θ)‖₂ = ‖g_i − g_i′‖₂/n ≤ 2G/n for every θ — the
  supremum, approached (x′ → x with θ steep enough that x'θ and x′'θ sit at opposite clips), not attained: equal
  rows give equal predictors.

Calibrations (:func:`dp_ight_plan`): "tight" σ = (2G/n)·z, z the exact (Gaussian-DP) noise multiplier of T
Gaussian steps at the total (ε, δ); "paper": classic Gaussian mechanisms composed — the 2019 paper's printed σ (of
order G̃√(T log(1/δ))/(nε)) was not found in any stored source, so the plan reconstructs it and says so
(docs/proofs.md, "DP-IGHT's reconstructed calibration").
"""

from __future__ import annotations

import numpy as np

from ..dp.accountant import advanced_composition_epsilon0, gaussian_noise_multiplier
from ..dp.mechanisms import check_positive, check_sensitivity, classic_gaussian_sigma
from ..dp.plan import PrivacyPlan, grid_release
from ..dp.privacy import Privacy
from ..dp.samplers import draw, grid_scale
from ..errors import DataError
from .base import check_count, check_s, require_replace
from .losses import as_design, check_loss, clip_rows_l2, gradient_bound, predictor, residual
from .sparse_mean import hard_threshold

METHOD = "dp_ight"
PAPER_FORMULA_FOUND = False  # the 2019 paper's printed σ: not in any stored source (see dp_ight_plan)
NOISE_BATCH = 1 << 20  # noise values drawn per sampler call, at most (whole steps, at least one)


# ---------------------------------------------------------------------------------------------------------------
# The clipped loss: bound, sensitivity, data clipping and the gradient released each step
# ---------------------------------------------------------------------------------------------------------------


def ight_gradient_bound(loss: str, *, c_x: float, B_y: float | None = None, radius: float | None = None) -> float:
    """G ≥ ‖∇ℓ(θ; x, y)‖₂ for every θ and every record after the clipping of :func:`clip_data` and
    :func:`clipped_gradient`: c_x (logistic), c_x(radius + B_y) (squared; both bounds required)."""
    return gradient_bound(check_loss(loss), c_x=c_x, B_y=B_y, radius=radius)


def gradient_sensitivity(loss: str, *, n: int, c_x: float, B_y: float | None = None, radius=None) -> float:
    """Replace-one ℓ2 sensitivity of the released gradient ∇L̃_S(θ) = (1/n) Σ_i g_i(θ), any θ: 2G/n (module
    docstring; the supremum, approached)."""
    return 2 * ight_gradient_bound(loss, c_x=c_x, B_y=B_y, radius=radius) / check_count("n", n)


def clip_data(X, y: np.ndarray, loss: str, c_x: float, B_y: float | None):
    """Rows clipped to ‖x_i‖₂ ≤ c_x; for the squared loss y clipped to [−B_y, B_y] (logistic y ∈ {0, 1} is kept)."""
    Xc = clip_rows_l2(X, c_x)
    if loss == "squared":
        y = np.clip(y, -check_positive("B_y", B_y), B_y)
    return Xc, y


def clip_predictor(u: np.ndarray, radius: float) -> np.ndarray:
    """u clipped to [−radius, radius]: what bounds the squared loss's residual (the Huber-type loss)."""
    return np.clip(u, -radius, radius)


def clipped_gradient(Xc, yc: np.ndarray, theta: np.ndarray, loss: str, radius: float | None) -> np.ndarray:
    """∇L̃_S(θ) = (1/n) Σ_i (ψ'(u_i) − y_i) x_i on clipped data, u_i = x_i'θ clipped to [−radius, radius] for the
    squared loss (ψ' = identity; logistic: ψ' = σ, no clip). One Xθ and one X'r product; X stays sparse."""
    u = predictor(Xc, theta)
    if loss == "squared":
        u = clip_predictor(u, radius)
    return np.asarray(Xc.T @ residual(loss, u, yc)).ravel() / Xc.shape[0]


# ---------------------------------------------------------------------------------------------------------------
# Plan
# ---------------------------------------------------------------------------------------------------------------


def _check_tuning(n: int, d: int, s: int, loss: str, T: int, eta: float, c_x: float, B_y, radius):
    n, d = check_count("n", n), check_count("d", d)
    loss = check_loss(loss)
    s, T, eta = check_s(s, d), check_count("T", T), check_positive("eta", eta)
    G = ight_gradient_bound(loss, c_x=c_x, B_y=B_y, radius=radius)  # checks c_x, and B_y, radius (squared)
    return n, d, s, loss, T, eta, G


def _paper_candidates(sens: float, epsilon: float, delta: float, T: int) -> list[tuple[float, float, float, str]]:
    """(σ, ε per step, δ per step, how) for T classic Gaussian steps (Dwork & Roth 2014, Thm A.1), by basic
    composition at (ε/T, δ/T) and by advanced composition (Dwork, Rothblum & Vadhan 2010) at (ε₀, δ/(2T)) with
    slack δ/2, ε₀ the largest with ε₀√(2T log(2/δ)) + Tε₀(e^{ε₀} − 1) ≤ ε."""
    e_basic, d_basic = epsilon / T, delta / T
    e_adv, d_adv = advanced_composition_epsilon0(epsilon, delta / 2, T), delta / (2 * T)
    return [
        (classic_gaussian_sigma(sens, e_basic, d_basic), e_basic, d_basic, f"basic composition of {T}"),
        (classic_gaussian_sigma(sens, e_adv, d_adv), e_adv, d_adv, f"advanced composition (slack delta/2) of {T}"),
    ]


def dp_ight_plan(
    privacy: Privacy,
    n: int,
    d: int,
    *,
    s: int,
    loss: str = "squared",
    T: int,
    eta: float,
    c_x: float,
    B_y: float | None,
    radius: float | None,
) -> PrivacyPlan:
    """T Gaussian releases of the gradient, ℓ2 sensitivity Δ = 2G/n (:func:`gradient_sensitivity`), d coordinates.

    tight: σ = Δ·z, z = gaussian_noise_multiplier(T, ε, δ) (exact Gaussian-DP composition of T Gaussian steps).
    paper: the 2019 paper's own formula was not available (``PAPER_FORMULA_FOUND``); reconstructed as T classic
           Gaussian mechanisms σ = Δ√(2 log(1.25/δ_step))/ε_step composed by basic composition (ε/T, δ/T) or advanced
           composition (ε₀, δ/(2T)) + slack δ/2 (:func:`_paper_candidates`), whichever needs less noise among those
           whose ε_step < 1 (the classic formula's proven range); none: refused or warned (``on_invalid``).
    Both σ are raised by the exact sampler's rounding cost (:func:`~dpcost.dp.samplers.grid_scale`). ``s`` and η do
    not enter the noise (η scales the noise on the step and the step's sensitivity alike). Tuning keys have no
    defaults here (the registry's rule: they live in :func:`dp_ight`); ``loss``, an analysis parameter, has the
    estimator's.
    """
    p = privacy.at(n)
    require_replace(p, METHOD, "the sensitivity 2G/n is derived with n public")
    n, d, s, loss, T, eta, G = _check_tuning(n, d, s, loss, T, eta, c_x, B_y, radius)
    sens = 2 * G / n
    check_sensitivity(sens)
    eps, delta = p.epsilon, p.delta
    typed = {"coordinates": d, "sampler": p.sampler}
    whole = {
        "whole_mechanism": True,
        "whole_mechanism_why": "T Gaussian releases of the clipped gradient; the hard thresholding is post-processing",
    }
    if loss == "squared":
        assumption = (
            f"rows clipped to ||x||_2 <= {c_x}, y to [-{B_y}, {B_y}], the predictor x'theta to "
            f"[-{radius}, {radius}] (Huber-type loss): per-record gradient bound G = {G:.6g}"
        )
    else:
        assumption = f"rows clipped to ||x||_2 <= {c_x}, y in {{0, 1}} (logistic): per-record gradient bound G = {G}"
    params = {
        "loss": loss,
        "T": T,
        "eta": eta,
        "c_x": c_x,
        "B_y": B_y,
        "radius": radius,
        "G": G,
        "gradient sensitivity 2G/n": sens,
    }
    if p.calibration == "tight":
        z = gaussian_noise_multiplier(T, eps, delta)
        sigma = grid_scale(sens * z, sens, d, "l2", "gaussian", p.sampler)
        rel = grid_release("gaussian", "gaussian", sens, "l2", sigma, T, **typed)
        comp = f"exact Gaussian-DP composition of {T} Gaussian releases of the gradient (closed form)"
        params |= {"noise multiplier z": z, "noise on the step eta*sigma": eta * sigma}
        return PrivacyPlan(METHOD, eps, delta, "tight", comp, assumption, (rel,), p.relation, params, **whole)
    cands = _paper_candidates(sens, eps, delta, T)
    valid = [c for c in cands if c[1] < 1]
    if not valid:
        p.outside_validity(
            f"the classic Gaussian mechanism needs epsilon per step < 1, got {min(c[1] for c in cands)}"
            f" at best (epsilon={eps}, T={T})"
        )
    sigma0, e_step, d_step, which = min(valid or cands)
    sigma = grid_scale(sigma0, sens, d, "l2", "gaussian", p.sampler)
    rel = grid_release("gaussian", "gaussian", sens, "l2", sigma, T, e_step, d_step, **typed)
    comp = (
        f"{which} classic Gaussian mechanisms sqrt(2 log(1.25/delta_step)) Delta/eps_step — a reconstruction: "
        "the printed sigma of Wang & Gu (IJCAI 2019) was not available"
    )
    params |= {
        "paper formula found": PAPER_FORMULA_FOUND,
        "sigma / Delta": sigma / sens,
        "noise on the step eta*sigma": eta * sigma,
    }
    return PrivacyPlan(METHOD, eps, delta, "paper", comp, assumption, (rel,), p.relation, params, **whole)


# ---------------------------------------------------------------------------------------------------------------
# The estimator
# ---------------------------------------------------------------------------------------------------------------


def dp_ight(
    X,
    y,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    s: int,
    loss: str = "squared",
    T: int,
    eta: float,
    c_x: float,
    B_y: float | None = None,
    radius: float | None = None,
) -> np.ndarray:
    """DP-IGHT — Wang & Gu (IJCAI 2019), Algorithm 1: θ_t = H_s(θ_{t−1} − η(∇L̃_S(θ_{t−1}) + b_t)), θ_0 = 0,
    b_t ~ N(0, σ²I_d) drawn exactly on a grid (:func:`~dpcost.dp.samplers.draw`), σ from :func:`dp_ight_plan`.

    X: dense (n, d) or ``scipy.sparse`` (kept CSR, never densified); y of length n. ``loss``: "squared" (needs the
    public bounds B_y on |y| and ``radius`` on |x'θ|) or "logistic" (y in {0, 1}, else DataError; B_y and radius
    unused). Privacy: (ε, δ)-DP under replace-one neighbours for every input — rows clipped to ‖x‖₂ ≤ c_x, y to
    [−B_y, B_y], the predictor to [−radius, radius] (module docstring); released-gradient sensitivity 2G/n.
    Cost per step: one Xθ and one X'r product and d noise draws. Returns θ_T (s-sparse).
    """
    X, y = as_design(X, y, check_loss(loss))
    n, d = X.shape
    if n < 2:
        raise DataError(f"need at least 2 rows, got {n}")
    plan = dp_ight_plan(privacy, n, d, s=s, loss=loss, T=T, eta=eta, c_x=c_x, B_y=B_y, radius=radius)
    sigma, T, eta = plan.releases[0].noise_scale, int(T), float(eta)
    Xc, yc = clip_data(X, y, loss, c_x, B_y)
    theta, chunk = np.zeros(d), max(1, NOISE_BATCH // d)
    for t in range(T):
        if t % chunk == 0:  # b_t for up to ``chunk`` steps in one call (fewer sampler calls, bounded memory)
            noise = draw("gaussian", sigma, (min(chunk, T - t), d), rng, privacy.sampler)
        noisy = noise[t % chunk].add(clipped_gradient(Xc, yc, theta, loss, radius))  # the release g̃_t
        theta, _ = hard_threshold(theta - eta * noisy, s)  # post-processing
    return theta
