"""Noisy truncated OLS — Cai, Wang & Zhang, *The Cost of Privacy* (2019 preprint, arXiv:1902.04495), §4.3.1, made
unconditionally private by a ridge term: the algorithm, its sensitivity and its privacy plan."""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..dp.mechanisms import check_positive, check_sensitivity, classic_gaussian_sigma, gaussian_sigma
from ..dp.plan import PrivacyPlan, grid_release
from ..dp.privacy import Privacy
from ..dp.samplers import add_noise, grid_scale
from ..errors import PrivacyError
from .base import check_design, clip_rows, require_replace, ridge_in_ball
from .ols import ols
from .sums import plan_once

NOISE = ("derived", "printed")


def noisy_truncated_ols_sensitivity(*, R: float, C: float, c_x: float, kappa: float, n: int) -> float:
    """Replace-one ℓ2 sensitivity of the κ-ridge, C-ball-constrained least squares on clipped, truncated data.

    The objective (1/n)Σ_i ½(x_i'β − Π_R(y_i))² + (κ/2)‖β‖² is κ-strongly convex and each per-record gradient is
    bounded on the ball by G = c_x(R + c_x C), so the minimiser moves by at most 2G/(nκ) (Chaudhuri, Monteleoni
    & Sarwate 2011, Lemma 7).
    """
    return 2 * c_x * (R + c_x * C) / (n * kappa)


def noisy_truncated_ols_plan(
    privacy: Privacy, n: int, d: int, *, R: float, C: float, c_x: float, kappa: float, noise: str
) -> PrivacyPlan:
    """One Gaussian release of sensitivity 2c_x(R + c_x C)/(nκ).

    paper: the classic σ = Δ√(2 log(1.25/δ))/ε the paper prints, proven for ε < 1. tight: the analytic Gaussian.
    ``noise="printed"``: the paper's variance d R² log(1.25/δ)/(n²ε²) on the unregularised OLS of Π_R(y) — recorded
    as used, with ``proven=False``: it omits the design-dependent factor, so it is not a sensitivity bound.
    """
    if noise not in NOISE:
        raise PrivacyError(f"noise must be 'derived' or 'printed', got {noise!r}")
    p = privacy.at(n)
    require_replace(p, "noisy_truncated_ols", "its sensitivity 2c_x(R + c_x C)/(n kappa) uses the public sample size n")
    epsilon, delta = p.epsilon, p.delta
    if noise == "printed":
        warnings.warn(
            "PRIVACY WARNING: noisy_truncated_ols with the printed noise variance is not a proven DP guarantee",
            RuntimeWarning,
            stacklevel=3,
        )
        sd = math.sqrt(d * R**2 * math.log(1.25 / delta)) / (n * epsilon)
        return PrivacyPlan(
            "noisy_truncated_ols",
            epsilon,
            delta,
            p.calibration,
            "NONE PROVEN: the paper's printed noise variance d R^2 log(1.25/delta)/(n eps)^2 on unregularised OLS",
            f"y truncated to [-{R}, {R}]; no bound on the design (the paper's eigenvalue conditions are not enforced)",
            (
                grid_release(
                    "gaussian",
                    "gaussian (printed variance, no proven sensitivity)",
                    None,
                    "l2",
                    sd,
                    1,
                    epsilon,
                    delta,
                    coordinates=d,
                    sampler=p.sampler,
                ),
            ),
            p.relation,
            proven=False,
            whole_mechanism=True,
            whole_mechanism_why="one Gaussian release of the OLS fit of the truncated y (no proven sensitivity)",
        )
    sens = noisy_truncated_ols_sensitivity(R=R, C=C, c_x=c_x, kappa=kappa, n=n)
    check_sensitivity(sens)
    if p.calibration == "paper" and epsilon >= 1:
        p.outside_validity(f"the classic Gaussian calibration is proven only for epsilon < 1 (got epsilon={epsilon})")
    classic = p.calibration == "paper"
    # the classic formula's range was checked just above, once, in the terms of this package's calibrations
    sigma = classic_gaussian_sigma(sens, epsilon, delta) if classic else gaussian_sigma(sens, epsilon, delta)
    comp = "single Gaussian release, " + ("classic calibration" if classic else "analytic Gaussian")
    assumption = (
        f"rows clipped to ||x||_2 <= c_x = {c_x}, y truncated to [-{R}, {R}], ridge kappa = {kappa}, "
        f"estimate constrained to ||b||_2 <= {C}"
    )
    sigma = grid_scale(sigma, sens, d, "l2", "gaussian", p.sampler)
    rel = grid_release("gaussian", "gaussian", sens, "l2", sigma, 1, epsilon, delta, coordinates=d, sampler=p.sampler)
    why = "one Gaussian release of the clipped ridge fit"
    return PrivacyPlan(
        "noisy_truncated_ols",
        epsilon,
        delta,
        p.calibration,
        comp,
        assumption,
        (rel,),
        p.relation,
        whole_mechanism=True,
        whole_mechanism_why=why,
    )


def truncated_ridge_fit(X: np.ndarray, y: np.ndarray, *, R: float, C: float, c_x: float, kappa: float) -> np.ndarray:
    """The deterministic part of :func:`noisy_truncated_ols`: argmin over ‖β‖₂ ≤ C of
    (1/n)Σ_i ½(x̃_i'β − Π_R(y_i))² + (κ/2)‖β‖², with x̃_i the row clipped to norm c_x."""
    n, d = X.shape
    Xc = clip_rows(X, c_x)
    return ridge_in_ball(Xc.T @ Xc / n + kappa * np.eye(d), Xc.T @ np.clip(y, -R, R) / n, C)


def noisy_truncated_ols(
    X,
    y,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    R: float,
    C: float,
    c_x: float,
    kappa: float,
    noise: str = "derived",
) -> np.ndarray:
    """Noisy truncated OLS — Cai, Wang & Zhang (2019 preprint), §4.3.1.

    The paper releases β̂(X, f_T(y)) + W, W ~ N_d(0, d T² log(1.25/δ)/(n²ε²) I), with f_T the truncation of y
    at T (called R here). Its privacy holds "with probability 1 − o(1)" under eigenvalue conditions on the design,
    i.e. it is not a worst-case guarantee: the OLS map has no bounded sensitivity without them.

    This implementation makes the guarantee unconditional and says how:
    rows are clipped to ‖x_i‖₂ ≤ c_x, y truncated to [−R, R], a ridge term (κ/2)‖β‖² supplies the strong convexity
    the paper assumes of X'X/n, and the estimate is the minimiser over the ball ‖β‖₂ ≤ C. Its replace-one
    sensitivity is 2 c_x (R + c_x C)/(nκ) (:func:`noisy_truncated_ols_sensitivity`); Gaussian noise calibrated to it
    gives (ε, δ)-DP under replace-one neighbours (calibration "paper": the classic formula, proven for ε < 1;
    "tight": the analytic Gaussian mechanism).

    ``noise="printed"`` reproduces the paper's variance d R² log(1.25/δ)/(n²ε²) on the unregularised OLS of Π_R(y)
    instead. That is **not** a proven DP guarantee (it omits the design-dependent factor); it warns every time.
    """
    X, y = check_design(X, y)
    R, C, c_x, kappa = (check_positive(k, v) for k, v in (("R", R), ("C", C), ("c_x", c_x), ("kappa", kappa)))
    n, d = X.shape
    plan = noisy_truncated_ols_plan(privacy, n, d, R=R, C=C, c_x=c_x, kappa=kappa, noise=noise)
    sd = plan.releases[0].noise_scale
    if noise == "printed":  # the plan has warned: not a proven guarantee
        return add_noise(ols(X, np.clip(y, -R, R)), "gaussian", sd, rng, privacy.sampler)
    beta = truncated_ridge_fit(X, y, R=R, C=C, c_x=c_x, kappa=kappa)
    return add_noise(beta, "gaussian", sd, rng, privacy.sampler)


def noisy_truncated_ols_batch(
    X, y, *, privacy: Privacy, rngs: list[np.random.Generator], tunings: list[dict], plans: dict
) -> list[np.ndarray]:
    """:func:`noisy_truncated_ols` on one subsample with every set of constants in ``tunings`` (each complete), run i
    with its own ``rngs[i]``: the separate calls' estimates bit for bit, each the same (ε, δ)-DP release (nothing
    random is shared). Shared, because deterministic: the design is checked once, X̃'X̃/n formed once per c_x and
    X̃'Π_R(y)/n once per (c_x, R) (:func:`truncated_ridge_fit`'s sums), and a plan computed once per (privacy, n,
    d, constants) into ``plans``, the caller's memo (its PRIVACY WARNINGs given when it is computed; a refusal
    raised every time, the first being the separate calls' first). A run with the printed noise runs as the
    estimator does."""
    X, y = check_design(X, y)
    n, d = X.shape
    grams: dict = {}
    out = []
    for t, rng in zip(tunings, rngs, strict=True):
        R, C, c_x, kappa = (check_positive(k, t[k]) for k in ("R", "C", "c_x", "kappa"))
        kw = dict(R=R, C=C, c_x=c_x, kappa=kappa, noise=t["noise"])
        sd = plan_once(plans, noisy_truncated_ols_plan, privacy, n, d, **kw).releases[0].noise_scale
        if t["noise"] == "printed":
            out.append(add_noise(ols(X, np.clip(y, -R, R)), "gaussian", sd, rng, privacy.sampler))
            continue
        if c_x not in grams:
            Xc = clip_rows(X, c_x)
            grams[c_x] = Xc, Xc.T @ Xc / n, {}
        Xc, gram, moments = grams[c_x]
        if R not in moments:
            moments[R] = Xc.T @ np.clip(y, -R, R) / n
        beta = ridge_in_ball(gram + kappa * np.eye(d), moments[R], C)
        out.append(add_noise(beta, "gaussian", sd, rng, privacy.sampler))
    return out
