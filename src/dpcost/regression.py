"""Linear regression estimators of The Cost of Privacy (Cai, Wang & Zhang) and their non-private baseline.

Neighbouring relation throughout: *replace one record* (y_i, x_i), as in both versions of the paper.
Every private estimator enforces the boundedness its guarantee rests on (row clipping, response truncation,
projection on a ball) inside the function, so the guarantee holds for any input, not only for well-behaved data.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import optimize

from .accounting import adassp_plan, noisy_gd_plan, noisy_truncated_ols_plan, ssp_plan
from .errors import DataError, PrivacyError
from .mechanisms import check_epsilon_delta


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


def _positive(name: str, value: float) -> float:
    if not (isinstance(value, (int, float, np.floating)) and math.isfinite(value) and value > 0):
        raise PrivacyError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


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
    R, C, c_x, eta0 = (_positive(k, v) for k, v in (("R", R), ("C", C), ("c_x", c_x), ("eta0", eta0)))
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
    R, C, c_x, kappa = (_positive(k, v) for k, v in (("R", R), ("C", C), ("c_x", c_x), ("kappa", kappa)))
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
    B_X, B_Y = _positive("B_X", B_X), _positive("B_Y", B_Y)
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
) -> np.ndarray:
    """Sufficient statistics perturbation (Vu & Slavkovic 2009; Wang 2018 §3.2, App. C.1).

    θ̂ = (X'X + E₁)⁻¹(X'y + E₂), E₁ symmetric Gaussian, E₂ Gaussian (minimum-norm solution if singular: SSP is
    unstable for small λ_min, which AdaSSP fixes). Privacy: (ε, δ)-DP under replace-one neighbours, sensitivities
    2B_X² and 2B_X B_Y (twice Wang's add/remove ones), see :func:`dpcost.accounting.ssp_plan`. Rows are clipped to
    ‖x‖₂ ≤ B_X and y to [−B_Y, B_Y] here: B_X, B_Y are public bounds, never derived from the data.
    """
    Xc, yc = _clip_design(X, y, B_X, B_Y)
    d = Xc.shape[1]
    plan = ssp_plan(epsilon=epsilon, delta=delta, B_X=B_X, B_Y=B_Y, calibration=calibration, on_invalid=on_invalid)
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
    plan = adassp_plan(epsilon=epsilon, delta=delta, B_X=B_X, B_Y=B_Y, calibration=calibration, on_invalid=on_invalid)
    s_min, s_xx, s_xy = (r.noise_scale for r in plan.releases)
    G = Xc.T @ Xc
    lam_min = max(np.linalg.eigvalsh(G)[0], 0.0)
    lam_min_t = max(lam_min + s_min * rng.normal() - s_min * math.sqrt(math.log(6 / delta)), 0.0)
    lam = max(0.0, math.sqrt(d * math.log(2 * d**2 / rho)) * s_xx - lam_min_t)
    A = G + _symmetric_gaussian(d, s_xx, rng) + lam * np.eye(d)
    b = Xc.T @ yc + rng.normal(0.0, s_xy, size=d)
    return np.linalg.lstsq(A, b, rcond=None)[0]
