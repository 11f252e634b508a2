"""Linear regression estimators of The Cost of Privacy (Cai, Wang & Zhang) and their non-private baseline.

Neighbouring relation throughout: *replace one record* (y_i, x_i), as in both versions of the paper.
Every private estimator enforces the boundedness its guarantee rests on (row clipping, response truncation,
projection on a ball) inside the function, so the guarantee holds for any input, not only for well-behaved data.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import linalg, optimize

from .accounting import (
    adaops_plan,
    adassp_plan,
    noisy_gd_plan,
    noisy_sgd_plan,
    noisy_truncated_ols_plan,
    objpert_plan,
    ops_balanced_plan,
    ops_gamma,
    sheffet_jl_plan,
    ssp_plan,
)
from .errors import DataError, PrivacyError
from .mechanisms import check_epsilon_delta, check_positive


def _check_design(X, y) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise DataError(f"expected X of shape (n, d) and y of shape (n,), got {X.shape} and {y.shape}")
    if X.shape[0] < 2:
        raise DataError(f"need at least 2 rows, got {X.shape[0]}")
    if not (np.isfinite(X).all() and np.isfinite(y).all()):
        raise DataError("X and y must be finite (found NaN or inf)")
    return X, y


def clip_rows(X: np.ndarray, c_x: float) -> np.ndarray:
    """Scale every row with ‖x_i‖₂ > c_x down to norm c_x (rows inside the ball are unchanged)."""
    norms = np.linalg.norm(X, axis=-1, keepdims=True)
    return X * np.minimum(1.0, c_x / np.maximum(norms, np.finfo(float).tiny))


def project_l2_ball(beta: np.ndarray, C: float) -> np.ndarray:
    """Π_C: Euclidean projection on the ℓ2 ball of radius C (batched over leading axes)."""
    norms = np.linalg.norm(beta, axis=-1, keepdims=True)
    return beta * np.minimum(1.0, C / np.maximum(norms, np.finfo(float).tiny))


def ols(X, y) -> np.ndarray:
    """Non-private ordinary least squares (X'X)⁻¹X'y (minimum-norm solution if X is rank deficient)."""
    X, y = _check_design(X, y)
    return np.linalg.lstsq(X, y, rcond=None)[0]


# ---------------------------------------------------------------------------------------------------------------
# 004 Algorithm 4.1: noisy gradient descent
# ---------------------------------------------------------------------------------------------------------------


def _noisy_gd_from_stats(
    G: np.ndarray, h: np.ndarray, n: int, *, eta0: float, C: float, noise: np.ndarray
) -> np.ndarray:
    """Run the T updates of Alg. 4.1 from sufficient statistics, batched over a leading axis.

    Σ_i (x_i'β − Π_R(y_i)) x_i = Gβ − h with G = X'X and h = X'Π_R(y), so one update costs O(d²) whatever n is.
    G: (r, d, d), h: (r, d), noise: (r, T, d) → β^T: (r, d).
    """
    beta = np.zeros_like(h)
    for t in range(noise.shape[1]):
        grad = np.einsum("rij,rj->ri", G, beta) - h
        beta = project_l2_ball(beta - (eta0 / n) * grad + noise[:, t, :], C)
    return beta


def noisy_gradient_descent_ols(
    X,
    y,
    *,
    epsilon: float,
    delta: float,
    T: int,
    R: float,
    C: float,
    c_x: float,
    eta0: float,
    rng: np.random.Generator,
    B: float | None = None,
    calibration: str = "paper",
    on_invalid: str = "refuse",
) -> np.ndarray:
    """DP linear regression by noisy gradient descent — Cai, Wang & Zhang, *The Cost of Privacy*, Algorithm 4.1.

    β⁰ = 0; for t < T: β^{t+1} = Π_C(β^t − (η⁰/n) Σ_i (x_i'β^t − Π_R(y_i)) x_i + w_t), w_t ~ N_d(0, σ² I),
    σ from :func:`dpcost.accounting.noisy_gd_plan`.

    Privacy: (ε, δ)-DP under replace-one neighbours. Sensitivity per step 2η⁰(R + C c_x)c_x/n. ``calibration``
    "paper": basic composition of T Gaussian mechanisms at (ε/T, δ/T) with the paper's B (Lemma 4.2), proven for
    ε/T < 1 (outside it: refused, or run with a warning if ``on_invalid="warn"``); "tight": PLD accounting.
    Assumption (D1) ‖x_i‖₂ ≤ c_x is *enforced* here by clipping each row to the c_x ball (a standardized design
    is not bounded by itself); |Π_R(y)| ≤ R by truncation and ‖β^t‖₂ ≤ C by the projection Π_C, so the guarantee
    holds for every input.

    Parameters: η⁰ step size, T iterations, R truncation of y, C feasibility radius, c_x row-norm bound,
    B noise scale (default 4(R + C c_x)c_x, the paper's choice).
    """
    X, y = _check_design(X, y)
    check_epsilon_delta(epsilon, delta)
    if not (isinstance(T, (int, np.integer)) and T >= 1):
        raise PrivacyError(f"T must be an integer >= 1, got {T!r}")
    R, C, c_x, eta0 = (check_positive(k, v) for k, v in (("R", R), ("C", C), ("c_x", c_x), ("eta0", eta0)))
    n, d = X.shape
    plan = noisy_gd_plan(
        n=n,
        epsilon=epsilon,
        delta=delta,
        T=T,
        R=R,
        C=C,
        c_x=c_x,
        eta0=eta0,
        B=B,
        calibration=calibration,
        on_invalid=on_invalid,
    )
    sd = plan.releases[0].noise_scale
    Xc = clip_rows(X, c_x)
    yt = np.clip(y, -R, R)
    noise = rng.normal(0.0, sd, size=(1, T, d))
    return _noisy_gd_from_stats((Xc.T @ Xc)[None], (Xc.T @ yt)[None], n, eta0=eta0, C=C, noise=noise)[0]


# ---------------------------------------------------------------------------------------------------------------
# 000 §4.3.1: noisy truncated OLS
# ---------------------------------------------------------------------------------------------------------------


def _ridge_in_ball(H: np.ndarray, g: np.ndarray, C: float) -> np.ndarray:
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


def truncated_ridge_fit(X: np.ndarray, y: np.ndarray, *, R: float, C: float, c_x: float, kappa: float) -> np.ndarray:
    """The deterministic part of :func:`noisy_truncated_ols`: argmin over ‖β‖₂ ≤ C of
    (1/n)Σ_i ½(x̃_i'β − Π_R(y_i))² + (κ/2)‖β‖², with x̃_i the row clipped to norm c_x."""
    n, d = X.shape
    Xc = clip_rows(X, c_x)
    return _ridge_in_ball(Xc.T @ Xc / n + kappa * np.eye(d), Xc.T @ np.clip(y, -R, R) / n, C)


def noisy_truncated_ols(
    X,
    y,
    *,
    epsilon: float,
    delta: float,
    R: float,
    C: float,
    c_x: float,
    kappa: float,
    rng: np.random.Generator,
    calibration: str = "paper",
    on_invalid: str = "refuse",
    noise: str = "derived",
) -> np.ndarray:
    """Noisy truncated OLS — Cai, Wang & Zhang, *The Cost of Privacy* (earlier version), §4.3.1.

    The paper releases β̂(X, f_T(y)) + W, W ~ N_d(0, d T² log(1.25/δ)/(n²ε²) I), with f_T the truncation of y
    at T (called R here). Its privacy holds "with probability 1 − o(1)" under eigenvalue conditions on the design,
    i.e. it is not a worst-case guarantee: the OLS map has no bounded sensitivity without them.

    This implementation makes the guarantee unconditional and says how:
    rows are clipped to ‖x_i‖₂ ≤ c_x, y truncated to [−R, R], a ridge term (κ/2)‖β‖² supplies the strong convexity
    the paper assumes of X'X/n, and the estimate is the minimiser over the ball ‖β‖₂ ≤ C. Its replace-one
    sensitivity is 2 c_x (R + c_x C)/(nκ) (:func:`dpcost.accounting.noisy_truncated_ols_sensitivity`); Gaussian
    noise calibrated to it gives (ε, δ)-DP under replace-one neighbours (``calibration`` "paper": the classic
    formula, proven for ε < 1; "tight": the analytic Gaussian mechanism).

    ``noise="printed"`` reproduces the paper's variance d R² log(1.25/δ)/(n²ε²) on the unregularised OLS of Π_R(y)
    instead. That is **not** a proven DP guarantee (it omits the design-dependent factor); it warns every time.
    """
    X, y = _check_design(X, y)
    check_epsilon_delta(epsilon, delta)
    R, C, c_x, kappa = (check_positive(k, v) for k, v in (("R", R), ("C", C), ("c_x", c_x), ("kappa", kappa)))
    n, d = X.shape
    if noise == "printed":
        warnings.warn(
            "PRIVACY WARNING: noisy_truncated_ols with the printed noise variance is not a proven DP guarantee",
            RuntimeWarning,
            stacklevel=2,
        )
        sd = math.sqrt(d * R**2 * math.log(1.25 / delta)) / (n * epsilon)
        return ols(X, np.clip(y, -R, R)) + rng.normal(0.0, sd, size=d)
    if noise != "derived":
        raise PrivacyError(f"noise must be 'derived' or 'printed', got {noise!r}")
    beta = truncated_ridge_fit(X, y, R=R, C=C, c_x=c_x, kappa=kappa)
    plan = noisy_truncated_ols_plan(
        n=n,
        epsilon=epsilon,
        delta=delta,
        R=R,
        C=C,
        c_x=c_x,
        kappa=kappa,
        calibration=calibration,
        on_invalid=on_invalid,
    )
    sd = plan.releases[0].noise_scale
    return beta + rng.normal(0.0, sd, size=d)


# ---------------------------------------------------------------------------------------------------------------
# Wang (2018), "Revisiting differentially private linear regression": SSP and AdaSSP
# ---------------------------------------------------------------------------------------------------------------


def _symmetric_gaussian(d: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Symmetric d × d matrix with i.i.d. N(0, σ²) on and above the diagonal (the privacy analysis's noise; the
    reference code's (Z + Z')/2 has off-diagonal variance σ²/2 instead, seed-001 notes pitfall 8)."""
    upper = np.triu(rng.normal(0.0, sigma, size=(d, d)))
    return upper + np.triu(upper, 1).T


def _clip_design(X, y, B_X: float, B_Y: float):
    X, y = _check_design(X, y)
    B_X, B_Y = check_positive("B_X", B_X), check_positive("B_Y", B_Y)
    return clip_rows(X, B_X), np.clip(y, -B_Y, B_Y)


def ssp(
    X,
    y,
    *,
    epsilon: float,
    delta: float,
    B_X: float,
    B_Y: float,
    rng: np.random.Generator,
    calibration: str = "paper",
    on_invalid: str = "refuse",
    neighbours: str = "replace",
) -> np.ndarray:
    """Sufficient statistics perturbation (Vu & Slavkovic 2009; Wang 2018 §3.2, App. C.1).

    θ̂ = (X'X + E₁)⁻¹(X'y + E₂), E₁ symmetric Gaussian, E₂ Gaussian (minimum-norm solution if singular: SSP is
    unstable for small λ_min, which AdaSSP fixes). Privacy: (ε, δ)-DP under replace-one neighbours, sensitivities
    2B_X² and 2B_X B_Y (twice Wang's add/remove ones; ``neighbours="add_remove"`` uses his), see
    :func:`dpcost.accounting.ssp_plan`. Rows are clipped to ‖x‖₂ ≤ B_X and y to [−B_Y, B_Y] here: B_X, B_Y are
    public bounds, never derived from the data.
    """
    Xc, yc = _clip_design(X, y, B_X, B_Y)
    d = Xc.shape[1]
    plan = ssp_plan(
        epsilon=epsilon,
        delta=delta,
        B_X=B_X,
        B_Y=B_Y,
        calibration=calibration,
        on_invalid=on_invalid,
        neighbours=neighbours,
    )
    s_xx, s_xy = (r.noise_scale for r in plan.releases)
    A = Xc.T @ Xc + _symmetric_gaussian(d, s_xx, rng)
    b = Xc.T @ yc + rng.normal(0.0, s_xy, size=d)
    return np.linalg.lstsq(A, b, rcond=None)[0]


def adassp(
    X,
    y,
    *,
    epsilon: float,
    delta: float,
    B_X: float,
    B_Y: float,
    rng: np.random.Generator,
    rho: float = 0.05,
    calibration: str = "paper",
    on_invalid: str = "refuse",
    neighbours: str = "replace",
) -> np.ndarray:
    """AdaSSP — Wang (2018), Algorithm 2: SSP with a ridge λ chosen from a private lower bound on λ_min(X'X).

    1. λ̃_min = max(λ_min + σ₁Z − σ₁√log(6/δ), 0)   (a high-probability lower bound; only selects λ)
    2. λ = max(0, √(d log(2d²/ρ))·σ₂ − λ̃_min)        (σ₂√(d log(2d²/ρ)) bounds ‖E₁‖ with probability 1 − ρ)
    3. θ̃ = (X'X + E₁ + λI)⁻¹(X'y + E₂) — with the *noisy* X'X (the printed output line is garbled; the proof and the
       reference code use the noisy one).
    Privacy: (ε, δ)-DP under replace-one neighbours by composing the three Gaussian releases
    (:func:`dpcost.accounting.adassp_plan`); λ̃_min and λ are post-processing. Rows clipped to ‖x‖₂ ≤ B_X, y to
    [−B_Y, B_Y] here. ρ is the failure probability of the operator-norm bound (0.05, as in the reference code).
    """
    Xc, yc = _clip_design(X, y, B_X, B_Y)
    n, d = Xc.shape
    plan = adassp_plan(
        epsilon=epsilon,
        delta=delta,
        B_X=B_X,
        B_Y=B_Y,
        calibration=calibration,
        on_invalid=on_invalid,
        neighbours=neighbours,
    )
    s_min, s_xx, s_xy = (r.noise_scale for r in plan.releases)
    G = Xc.T @ Xc
    lam_min = max(np.linalg.eigvalsh(G)[0], 0.0)
    lam_min_t = max(lam_min + s_min * rng.normal() - s_min * math.sqrt(math.log(6 / delta)), 0.0)
    lam = max(0.0, math.sqrt(d * math.log(2 * d**2 / rho)) * s_xx - lam_min_t)
    A = G + _symmetric_gaussian(d, s_xx, rng) + lam * np.eye(d)
    b = Xc.T @ yc + rng.normal(0.0, s_xy, size=d)
    return np.linalg.lstsq(A, b, rcond=None)[0]


# ---------------------------------------------------------------------------------------------------------------
# One Posterior Sample family and objective perturbation (Wang 2018; Kifer, Smith & Thakurta 2012)
# ---------------------------------------------------------------------------------------------------------------


def _posterior_sample(G: np.ndarray, b: np.ndarray, lam: float, gamma: float, rng: np.random.Generator) -> np.ndarray:
    """One draw of N(θ_λ, (γH)⁻¹), H = X'X + λI, θ_λ = H⁻¹X'y.

    With H = LL' (lower Cholesky), θ_λ + L'⁻¹z/√γ has covariance L'⁻¹L⁻¹/γ = H⁻¹/γ. Fix: the reference code takes
    R'⁻¹z with the *upper* factor R (H = R'R), whose covariance (RR')⁻¹ is not H⁻¹ (seed-001 notes §2.3).
    """
    H = G + lam * np.eye(len(b))
    L = np.linalg.cholesky(H)
    theta = linalg.cho_solve((L, True), b)
    z = rng.standard_normal(len(b))
    return theta + linalg.solve_triangular(L.T, z, lower=False) / math.sqrt(gamma)


def ops(
    X,
    y,
    *,
    epsilon: float,
    delta: float,
    B_X: float,
    B_Y: float,
    rng: np.random.Generator,
    B: float = 1.0,
    rho: float = 0.05,
    calibration: str = "paper",
    on_invalid: str = "refuse",
    neighbours: str = "replace",
) -> np.ndarray:
    """OPS-Balanced — One Posterior Sample with a data-independent calibration, Wang (2018) §3.2 and Appendix F
    (the "OPS" column of its Tables 3–4).

    θ̃ ~ p(θ | X, y) ∝ exp(−γ/2 (‖y − Xθ‖² + λ‖θ‖²)) = N(θ_λ, (γ(X'X + λI))⁻¹), with λ and γ from public
    quantities only (:func:`dpcost.accounting.ops_balanced_plan`). Privacy: (ε, δ)-DP by the per-instance bound of
    Remark 11 with λ_min = 0, proven for add/remove neighbours; under replace-one (default) the budget is halved by
    group privacy. Rows are clipped to ‖x‖₂ ≤ B_X and y to [−B_Y, B_Y] here. B is the "optimistic" guess of ‖θ*‖
    that sets λ (utility only; 1 in the paper).
    """
    Xc, yc = _clip_design(X, y, B_X, B_Y)
    n, d = Xc.shape
    plan = ops_balanced_plan(
        n=n,
        d=d,
        epsilon=epsilon,
        delta=delta,
        B_X=B_X,
        B_Y=B_Y,
        B=B,
        rho=rho,
        calibration=calibration,
        on_invalid=on_invalid,
        neighbours=neighbours,
    )
    p = plan.parameters
    return _posterior_sample(Xc.T @ Xc, Xc.T @ yc, p["lambda"], p["gamma"], rng)


def _adaops_lambda(*, lam_min_t: float, t_min: float, B_X: float, C1: float, C2: float) -> float:
    """argmin_{t ≥ t_min} B_X⁴C₁[1 + B_X²/h]^{2C₂}/h + t with h = t + λ̃_min (Wang 2018, eq. 7).

    The first term is convex and decreasing in t, the second increasing: one minimum. Searched on log t in log
    space, because [1 + B_X²/h]^{2C₂} overflows for small h (C₂ = 4 log(6/δ)/ε is in the hundreds).
    """

    def log_f(log_t: float) -> float:
        t = math.exp(log_t)
        h = t + lam_min_t
        first = math.log(B_X**4 * C1) + 2 * C2 * math.log1p(B_X**2 / h) - math.log(h)
        return float(np.logaddexp(first, log_t))

    lo = math.log(max(t_min, 1e-12))
    res = optimize.minimize_scalar(log_f, bounds=(lo, lo + 80.0), method="bounded", options={"xatol": 1e-9})
    return max(math.exp(res.x), t_min)


def adaops(
    X,
    y,
    *,
    epsilon: float,
    delta: float,
    B_X: float,
    B_Y: float,
    rng: np.random.Generator,
    rho: float = 0.05,
    calibration: str = "paper",
    on_invalid: str = "refuse",
    neighbours: str = "replace",
) -> np.ndarray:
    """AdaOPS — One Posterior Sample with adaptive regularisation, Wang (2018) Algorithm 1.

    1. λ̃_min = max(λ_min(X'X) + σ₁Z₁ − bias·σ₁, 0)                      (a private lower bound, failure charged to δ)
    2. ε̄, C₁, C₂ as in the paper; λ = argmin_{t ≥ t_min} of eq. (7)     (post-processing)
       Fix: t_min = 2(1 + log(2/δ′))B_X²/ε − λ̃_min (the reference code's), not the printed B_X²(1 + log)/(2ε) − λ̃_min,
       which leaves no valid γ (seed-001 notes §2.4).
    3. θ_λ = (X'X + λI)⁻¹X'y
    4. Δ = log(B_Y + B_X‖θ_λ‖) + s σ₂Z₂ + s·bias·σ₂,  s = log(1 + B_X²/(λ + λ̃_min)) (Lemma 12);  L̃ = B_X e^Δ
       Fix: no cap on L̃ — the reference code's min(e^Δ, B_Y + B_X√(2√(nB_Y)/(λ + λ_min))) is not a bound on
       ‖θ_λ‖ for large n and can break privacy.
    5. γ: the largest value whose pDP bound (Remark 11) at h = λ + λ̃_min and L̃ is ≤ ε/2 (the exact quadratic).
    output θ̃ ~ N(θ_λ, (γ(X'X + λI))⁻¹)  (correct Cholesky factor, see :func:`_posterior_sample`).

    Privacy: (ε, δ)-DP for add/remove neighbours by Wang's Theorem 2 with the corrections above; under replace-one
    (default) the whole algorithm runs at the group-privacy budget (:func:`dpcost.accounting.add_remove_budget`).
    Budget split and noise: :func:`dpcost.accounting.adaops_plan`. Rows clipped to ‖x‖₂ ≤ B_X, y to [−B_Y, B_Y].
    """
    Xc, yc = _clip_design(X, y, B_X, B_Y)
    n, d = Xc.shape
    plan = adaops_plan(
        d=d,
        epsilon=epsilon,
        delta=delta,
        B_X=B_X,
        B_Y=B_Y,
        rho=rho,
        calibration=calibration,
        on_invalid=on_invalid,
        neighbours=neighbours,
    )
    p = plan.parameters
    G, b = Xc.T @ Xc, Xc.T @ yc
    lam_min = max(np.linalg.eigvalsh(G)[0], 0.0)
    s1 = p["sigma_lambda_min"]
    lam_min_t = max(lam_min + s1 * rng.normal() - p["bias"] * s1, 0.0)
    t_min = max(p["t_floor"] - lam_min_t, 0.0)
    lam = _adaops_lambda(lam_min_t=lam_min_t, t_min=t_min, B_X=B_X, C1=p["C1"], C2=p["C2"])
    h = lam + lam_min_t
    theta = np.linalg.solve(G + lam * np.eye(d), b)
    sens = math.log1p(B_X**2 / h)
    s2 = sens * p["norm_multiplier"]
    log_bound = math.log(B_Y + B_X * np.linalg.norm(theta)) + s2 * rng.normal() + p["bias"] * s2
    L_t = B_X * math.exp(log_bound)
    gamma = ops_gamma(L=L_t, h=h, B_X=B_X, epsilon=p["posterior_epsilon"], log_term=p["posterior_log_term"], exact=True)
    return _posterior_sample(G, b, lam, gamma, rng)


def objpert(
    X,
    y,
    *,
    epsilon: float,
    delta: float,
    B_X: float,
    B_Y: float,
    C: float,
    rng: np.random.Generator,
    calibration: str = "paper",
    on_invalid: str = "refuse",
    neighbours: str = "replace",
) -> np.ndarray:
    """ObjPert — objective perturbation, Kifer, Smith & Thakurta (2012) Algorithm 1 (Gaussian version), the
    "ObjPert" comparator of Wang (2018).

    θ̃ = argmin_{‖θ‖₂ ≤ C} Σ_i ½(y_i − x_i'θ)² + (Δ/2)‖θ‖² + b'θ,  Δ = 2B_X²/ε,  b ~ N(0, ζ²(8 log(2/δ) + 4ε)/ε² I),
    ζ = B_X(B_X C + B_Y) (KST's objective times n). Privacy: (ε, δ)-DP under replace-one neighbours (KST Thm 2;
    :func:`dpcost.accounting.objpert_plan`). Rows clipped to ‖x‖₂ ≤ B_X, y to [−B_Y, B_Y], θ constrained to the C ball
    here, so ζ bounds every per-record gradient. Not copied from the reference code: its solver minimises
    θ'Hθ − θ'(X'y − b), half the linear term of the least-squares objective (seed-001 notes §2.5).
    """
    Xc, yc = _clip_design(X, y, B_X, B_Y)
    d = Xc.shape[1]
    plan = objpert_plan(
        epsilon=epsilon,
        delta=delta,
        B_X=B_X,
        B_Y=B_Y,
        C=C,
        calibration=calibration,
        on_invalid=on_invalid,
        neighbours=neighbours,
    )
    noise = rng.normal(0.0, plan.releases[0].noise_scale, size=d)
    return _ridge_in_ball(Xc.T @ Xc + plan.parameters["Delta"] * np.eye(d), Xc.T @ yc - noise, C)


# ---------------------------------------------------------------------------------------------------------------
# Comparators of The Cost of Privacy: Bassily, Smith & Thakurta (2014) and Sheffet (2017)
# ---------------------------------------------------------------------------------------------------------------


def noisy_sgd_ols(
    X,
    y,
    *,
    epsilon: float,
    delta: float,
    B_X: float,
    B_Y: float,
    C: float,
    passes: float,
    batch: int,
    rng: np.random.Generator,
    calibration: str = "paper",
    on_invalid: str = "refuse",
) -> np.ndarray:
    """Noisy stochastic gradient descent — Bassily, Smith & Thakurta (2014) Algorithm 1, for ½(y − x'θ)² on the
    ball ‖θ‖₂ ≤ C (000's comparator).

    θ₁ = 0; for t = 1 … T:  draw a batch S_t of b records uniformly without replacement;
        θ_{t+1} = Π_C(θ_t − η_t(ḡ_t + b_t)),  ḡ_t = mean of ∇ℓ(θ_t; x_i, y_i) over S_t,  b_t ~ N(0, σ²I_d),
        η_t = 2C / √(t(L² + dσ²))   (BST's ‖C‖/√(t(n²L² + pσ²)) in per-record units);
    output θ_{T+1} (BST's last iterate). L = B_X(B_X C + B_Y) bounds every per-record gradient on the ball.
    BST take b = 1 and T = n²: at n = 20,600 that is 4·10⁸ steps per repetition, out of reach for 1,500 fits. Here
    T = ⌈passes·n/b⌉ with both exposed (``batch=1, passes=n`` is BST's algorithm), and σ is calibrated for that T
    and b (:func:`dpcost.accounting.noisy_sgd_plan`). Privacy: (ε, δ)-DP under replace-one neighbours; rows clipped
    to ‖x‖₂ ≤ B_X and y to [−B_Y, B_Y] here.
    """
    Xc, yc = _clip_design(X, y, B_X, B_Y)
    n, d = Xc.shape
    plan = noisy_sgd_plan(
        n=n,
        epsilon=epsilon,
        delta=delta,
        B_X=B_X,
        B_Y=B_Y,
        C=C,
        passes=passes,
        batch=batch,
        calibration=calibration,
        on_invalid=on_invalid,
    )
    T, batch, L = plan.parameters["T"], plan.parameters["batch"], plan.parameters["L"]
    sigma = plan.releases[0].noise_scale
    eta = 2 * C / np.sqrt(np.arange(1, T + 1) * (L**2 + d * sigma**2))
    noise = rng.normal(0.0, sigma, size=(T, d))
    theta = np.zeros(d)
    for t in range(T):  # sequential by nature: each step needs the previous iterate
        S = rng.choice(n, size=batch, replace=False) if batch > 1 else rng.integers(0, n, size=1)
        Xs = Xc[S]
        grad = Xs.T @ (Xs @ theta - yc[S]) / batch
        theta = theta - eta[t] * (grad + noise[t])
        norm = math.sqrt(theta @ theta)
        if norm > C:
            theta *= C / norm
    return theta


def sheffet_jl_ols(
    X,
    y,
    *,
    epsilon: float,
    delta: float,
    B_X: float,
    B_Y: float,
    r: int,
    rng: np.random.Generator,
    calibration: str = "paper",
    on_invalid: str = "refuse",
) -> np.ndarray:
    """DP OLS by a Johnson–Lindenstrauss projection — Sheffet (2017), Algorithm 1 (004's comparator).

    A = [X, y] with rows clipped (‖x‖ ≤ B_X, |y| ≤ B_Y, so ‖a‖² ≤ B² = B_X² + B_Y²).
    1. w² = (8B²/ε)(√(2r ln(8/δ)) + 2 ln(8/δ))
    2. Z ~ Lap(4B²/ε);  if σ_min(A)² > w² + Z + 4B² ln(1/δ)/ε: A′ = A ("unaltered")
    3. else A′ = [A; wI_{d+1}] (the ridge fallback: X'X + w²I, X'y unchanged)
    4. release RA′, R an r × (n + …) matrix of i.i.d. N(0, 1);  β̃ = argmin_β ‖R A′_y − R A′_X β‖.
    RA′ is drawn as G S with G an r × (d + 1) standard Gaussian matrix and S the symmetric square root of A′'A′:
    each row of RA′ is N(0, A′'A′), so both have the same distribution (and the same privacy) at O(rd²) cost
    instead of O(rn). Privacy: (ε, δ)-DP, Sheffet's Theorem 3.1, replace-one neighbours
    (:func:`dpcost.accounting.sheffet_jl_plan`). r is left open by the paper: a public tuning constant.
    """
    Xc, yc = _clip_design(X, y, B_X, B_Y)
    d = Xc.shape[1]
    plan = sheffet_jl_plan(
        epsilon=epsilon, delta=delta, B_X=B_X, B_Y=B_Y, r=r, calibration=calibration, on_invalid=on_invalid
    )
    p = plan.parameters
    A = np.column_stack([Xc, yc])
    AtA = A.T @ A
    w, V = np.linalg.eigh(AtA)
    if not max(w[0], 0.0) > p["w2"] + rng.laplace(0.0, p["laplace_scale"]) + p["test_offset"]:
        w = w + p["w2"]  # A′ = [A; wI]: A′'A′ = A'A + w²I
    S = (V * np.sqrt(np.maximum(w, 0.0))) @ V.T
    M = rng.standard_normal((r, d + 1)) @ S
    return np.linalg.lstsq(M[:, :d], M[:, d], rcond=None)[0]
