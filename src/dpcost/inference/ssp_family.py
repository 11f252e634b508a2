"""Private intervals for the SSP family — SSP, AdaSSP, joint SSP (:mod:`dpcost.estimators.ssp`) — from its released
statistics, a private residual variance and nothing else (docs/proofs.md, "Private confidence intervals").

One release, (ε, δ)-DP as a whole under replace-one neighbours (:mod:`.budget`): the estimator's own releases at
the share 1 − f of the budget — its draws exactly those of the estimator at that budget, so the centre is the
estimate — and S̃ = Σ clip_R(y_i − x_i'θ̂)² + noise at the share f. σ̂² = (S̃ − tr(Ĝ V_noise))/(n − d), the
residuals' share of the estimate's own noise taken out. The interval is post-processing of (G̃, b̃, λ, S̃), the
public noise scales and n, which is public under replace-one only: add/remove neighbours are refused (where σ̂²'s
floor binds it is σ_S/(n − d), which names n). The two routes:

* ``bootstrap``: the parametric bootstrap of Ferrando, Wang & Sheldon (AISTATS 2022, §4, OLS), re-simulating
  the sampling and the mechanism from the released values: Ĝ = G̃ with its eigenvalues floored at σ_G (a PSD
  stand-in for X'X), X'y* = Ĝθ̂ + N(0, σ̂²Ĝ) (the score of the linear model given X), G* = Ĝ + E*, b* = X'y* + e*,
  λ* by the method's own ridge rule on the simulated releases, θ* = (G* + λ*I)⁻¹b*; vectorised over the draws. The
  basic (pivotal) interval [2θ̂ − q_{1−α/2}(θ*), 2θ̂ − q_{α/2}(θ*)] corrects the ridge's shrinkage to first order.
* ``delta`` (default): Var θ̂ ≈ A⁻¹(σ̂²Ĝ + σ_b²I + σ_G²(tr(T)I + T − diag(T)))A⁻¹, A = G̃ + λI (the second term
  the noise on X'y, the third Cov(Eβ) of the symmetric noise on X'X at T, an estimate of ββ' corrected for θ̂'s own
  noise), normal quantiles. Exact given the released A but for the plug-ins: θ̂ − β = A⁻¹(X'e + e_b − Eβ) − λA⁻¹β.
  Where λ > 0 (AdaSSP, joint SSP) the interval is bias-aware (``bias="bound"``, the default): the ridge's bias
  b = −λA⁻¹β is estimated from released values, b̂ = −λA⁻¹β̃ with β̃ = Ĝ⁻¹b̃ the un-ridged solve, bounded by
  B = |b̂| + z_{1−γ/2}·sd(b̂ − b), and the interval is Armstrong & Kolesár's fixed-length one at level 1 − α + γ:
  θ̂ ± cv_{α−γ}(B/se)·se, cv_a(t) the 1 − a quantile of |N(t, 1)|, γ = :data:`GAMMA` (coverage ≥ 1 − α by the union
  bound; docs/proofs.md). At λ = 0 (SSP, or a ridge that is off) b = 0 and it is the normal interval.
  ``bias="ignore"`` is the interval without the bias (kept to measure what the bound buys).
  Measured (measurements/inference_coverage.py, 1,000 repetitions, n ∈ {2,000, 20,000}, ε ∈ {0.5, 1, 4}, with the
  bias bound): 0.942–0.970, but AdaSSP at n = 2,000, ε = 0.5 over-covers (0.977: the bound is conservative); the
  bootstrap, which
  carries the Gram noise twice (Ĝ = G̃ is already noisy), over-covers SSP (0.988 at ε = 0.5) and under-covers
  AdaSSP when its ridge is on (0.870).

Assumption that makes the coverage true: the linear model y = Xβ + e, e with mean 0 and constant variance σ² given
X, and clipping that does not bind (‖x_i‖ ≤ B_X, |y_i| ≤ B_Y for almost every row, |e_i| ≤ R). What can make it
under-cover, and is not in the interval: clipping bias (an interval centred on a biased estimate under-covers however
wide it is; the bounds are public choices, never read from the data), and, under ``bias="ignore"`` or the bootstrap
route, the ridge's bias −λA⁻¹β where AdaSSP's or joint SSP's λ is large (small n or ε, ill-conditioned X).
``details`` reports λ, the bias estimate b̂ and its bound B so a user can see them.
"""

from __future__ import annotations

import numpy as np

from ..dp.privacy import Privacy
from ..errors import PrivacyError
from ..estimators.base import clip_design, require_replace
from ..estimators.registry import METHODS
from ..estimators.ssp import noise_norm_bound, solve_statistics
from .base import check_level, check_rows, derived_rng, make_interval
from .budget import SHARE, residual_release, residual_sum_of_squares, sigma2_from, split

ROUTES = ("delta", "bootstrap")
DRAWS = 1000  # bootstrap draws: the 2.5 % quantile from 1,000 draws has a relative sd of ≈ 3 % in its tail distance
BIAS = ("bound", "ignore")
# γ: the part of 1 − level spent on the bias bound B failing (union bound); at level 0.95 the interval proper is at
# 0.96 (z 2.05 against 1.96 where B = 0) and B holds with probability 0.99 (z_{0.995} = 2.58 s.e. of b̂ above |b̂|)
GAMMA = 0.01


def ssp_family_interval(
    method: str,
    X,
    y,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    level: float = 0.95,
    route: str = "delta",
    share: float = SHARE,
    R: float | None = None,
    draws: int = DRAWS,
    bias: str = "bound",
    **constants,
):
    """A private confidence interval for β from SSP, AdaSSP or joint SSP (module docstring).

    ``constants`` are the estimator's (B_X, B_Y, and ρ, κ, ratio where it takes them); R, the residual clip of the
    σ̂² release, defaults to B_Y: the data arrive with y clipped to [−B_Y, B_Y], so B_Y ≥ 3σ wherever B_Y is the
    usual 3 sd(y) (σ ≤ sd(y)), and clipping a Gaussian residual at 3σ loses 0.5 % of σ². Guarantee: (ε, δ)-DP under
    replace-one neighbours, by composing the estimator's releases at the share 1 − f with the σ̂² release
    (sensitivity R²) at f (:func:`~.budget.split`). Add/remove neighbours are refused at the call: σ̂² =
    max(S̃ − tr(ĜV), σ_S)/(n − d) and the check n ≥ d + 2 read n, which add/remove makes private (where the floor
    binds, σ̂² names n)."""
    statistics, level = _check_arguments(method, route, level, bias, draws, constants)
    # before anything reads the data: the refusal depends on the specification alone, so it is the same on every
    # data set (a neighbour never sees "released" where the other sees "refused")
    require_replace(
        privacy,
        f"{method}'s {route} interval",
        "sigma^2 divides by n - d and the interval needs n >= d + 2 rows, and under add/remove n is private",
    )
    Xc, yc = clip_design(X, y, constants["B_X"], constants["B_Y"])
    n, d = Xc.shape
    check_rows(n, d)
    sp = split(privacy, n, share)
    R, rel = residual_release(sp, constants["B_Y"] if R is None else R)
    own = derived_rng(rng, "interval", method, route, "residual sum of squares", R, share)
    s = statistics(X, y, privacy=sp.estimate, rng=rng, **constants)
    theta = solve_statistics(s)
    S = residual_sum_of_squares(Xc, yc, theta, R, rel, own, privacy.sampler)
    G_hat = _psd(s.G, s.sigma_G)
    V_noise = _noise_covariance(s, theta)
    # Σ r_i² at θ̂ holds the estimate's noise too, Σ(x_i'(θ̂ − β))² ≈ tr(X'X V_noise): taken out (docs/proofs.md)
    sigma2 = sigma2_from(S - float(np.sum(G_hat * V_noise)), rel.noise_scale, n, d)
    if route == "bootstrap":
        sims = _bootstrap(method, s, G_hat, theta, sigma2, draws, derived_rng(rng, "interval", method, "bootstrap"))
        a = (1 - level) / 2
        q_lo, q_hi = np.quantile(sims, [a, 1 - a], axis=0)
        lower, upper, quantile = 2 * theta - q_hi, 2 * theta - q_lo, f"basic bootstrap, {draws} draws"
        se, details = sims.std(axis=0, ddof=1), {}
    else:
        lower, upper, quantile, se, details = _delta_interval(s, theta, G_hat, V_noise, sigma2, level, bias)
    plan = sp.plan(method, s.plan, (rel,), f"residuals clipped to [-R, R], R = {R:.6g}, for sigma^2")
    return make_interval(
        lower,
        upper,
        theta,
        level=level,
        method=method,
        route=route,
        quantile=quantile,
        plan=plan,
        details={"sigma2": sigma2, "se": se, "lambda": s.lam, **details},
    )


def _check_arguments(method: str, route: str, level: float, bias: str, draws, constants) -> tuple:
    """(statistics, level): the released statistics of ``method``'s registry entry and the checked level, after
    the route, bias, draws and the public bounds are checked — all before the data are read."""
    statistics = METHODS[method].statistics if method in METHODS else None
    if statistics is None:  # the routes read the released statistics of the methods whose registry entry names them
        family = sorted(k for k, m in METHODS.items() if m.statistics is not None)
        raise PrivacyError(f"{method!r} is not in the SSP family {family}")
    if route not in ROUTES:
        raise PrivacyError(f"route must be one of {ROUTES}, got {route!r}")
    level = check_level(level)
    if bias not in BIAS:
        raise PrivacyError(f"bias must be one of {BIAS}, got {bias!r}")
    if not (isinstance(draws, int) and not isinstance(draws, bool) and draws >= 100):
        raise PrivacyError(f"draws must be an integer >= 100, got {draws!r}")
    if "B_X" not in constants or "B_Y" not in constants:
        raise PrivacyError(f"{method} needs its public bounds B_X and B_Y")
    return statistics, level


def _delta_interval(s, theta, G_hat, V_noise, sigma2: float, level: float, bias: str) -> tuple:
    """(lower, upper, quantile, se, details) of the ``delta`` route (module docstring): the delta-method
    standard errors, and where λ > 0 under ``bias="bound"`` Armstrong & Kolesár's fixed-length interval around
    the ridge's estimated bias and its bound; else the normal interval."""
    from scipy import special  # here: slow to import; scipy.stats's quantiles are these functions, at 3x its import

    A_inv = _inverse(s)
    with np.errstate(over="ignore", invalid="ignore"):
        cov = V_noise + sigma2 * A_inv @ G_hat @ A_inv
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    if bias == "bound" and s.lam > 0 and level + GAMMA < 1:
        b_hat, b_sd = ridge_bias(s, G_hat, A_inv, sigma2)
        with np.errstate(over="ignore", invalid="ignore"):
            B = np.abs(b_hat) + special.ndtri(1 - GAMMA / 2) * b_sd
            half = critical_value(B / se, 1 - level - GAMMA) * se
        quantile = f"bias-aware: |N(B/se, 1)| at {level + GAMMA:g}, bias bound at {1 - GAMMA:g}"
        details = {"bias": b_hat, "bias_bound": B}
    else:
        half, quantile, details = special.ndtri(0.5 + level / 2) * se, "normal", {}
    lower, upper = theta - half, theta + half
    return lower, upper, quantile, se, details


def critical_value(t, alpha: float) -> np.ndarray:
    """cv_α(t): the 1 − α quantile of |N(t, 1)| (Armstrong & Kolesár 2020), vectorised over t (NaN, ±inf: inf).
    P(|N(t, 1)| ≤ c) = Φ(c − t) − Φ(−c − t) increases in c and lies between 1 − α at c = |t| + z_{1−α} (upper end
    below) and c = |t| + z_{1−α/2} (above): bisection between the two, 60 halvings."""
    from scipy import special  # here: slow to import

    t = np.abs(np.asarray(t, dtype=float))
    ok = np.isfinite(t)
    tt = np.where(ok, t, 0.0)
    lo, hi = tt + special.ndtri(1 - alpha), tt + special.ndtri(1 - alpha / 2)
    for _ in range(60):
        mid = (lo + hi) / 2
        inside = special.ndtr(mid - tt) - special.ndtr(-mid - tt) >= 1 - alpha
        hi, lo = np.where(inside, mid, hi), np.where(inside, lo, mid)
    return np.where(ok, hi, np.inf)


def ridge_bias(s, G_hat: np.ndarray, A_inv: np.ndarray, sigma2: float) -> tuple[np.ndarray, np.ndarray]:
    """The ridge's bias b = −λA⁻¹β given the released A, estimated by post-processing: b̂ = −λA⁻¹β̃ with β̃ = Ĝ⁻¹b̃,
    the un-ridged solve on the eigenvalue-floored Gram matrix (β̃ − β ≈ Ĝ⁻¹u, u = X'e + e_b − Eβ), and the sd of
    b̂ − b = −λA⁻¹Ĝ⁻¹u: Var u = σ̂²Ĝ + σ_b²I + Cov(Eβ), Cov(Eβ) at T, β̃β̃' less β̃'s own noise (docs/proofs.md)."""
    G_inv = np.linalg.pinv(G_hat)
    beta_t = G_inv @ s.b
    M = s.lam * A_inv @ G_inv
    with np.errstate(over="ignore", invalid="ignore"):
        T = _target(s, beta_t, G_inv, sigma2 * G_hat)
        V_b = M @ (sigma2 * G_hat + _mechanism(s, T)) @ M.T
    return -s.lam * A_inv @ beta_t, np.sqrt(np.maximum(np.nan_to_num(np.diag(V_b), nan=np.inf), 0.0))


def _psd(G: np.ndarray, floor: float) -> np.ndarray:
    """G̃ with its eigenvalues floored at ``floor`` (σ_G): a positive definite stand-in for X'X."""
    w, V = np.linalg.eigh(G)
    return (V * np.maximum(w, floor)) @ V.T


def _inverse(s) -> np.ndarray:
    """A⁻¹, A = G̃ + λI the matrix the estimate solved with (pseudo-inverse if singular)."""
    return np.linalg.pinv(s.G + s.lam * np.eye(len(s.b)))


def _mechanism(s, T: np.ndarray) -> np.ndarray:
    """The mechanism's part of Var u, u = X'e + e_b − Eβ: σ_b²I + σ_G²(tr(T)I + T − diag(T)), the second term Cov(Eβ)
    of the symmetric noise E on X'X at ββ' = T (docs/proofs.md)."""
    d = len(T)
    # numpy squares (inf past the float maximum, under the callers' errstate), not Python's ** (OverflowError)
    sb2, sG2 = np.square(np.float64(s.sigma_b)), np.square(np.float64(s.sigma_G))
    return sb2 * np.eye(d) + sG2 * (np.trace(T) * np.eye(d) + T - np.diag(np.diag(T)))


def _target(s, theta: np.ndarray, inv: np.ndarray, sampling: np.ndarray | float = 0.0) -> np.ndarray:
    """T, an estimate of ββ' from an estimate θ = β + inv·u: θθ' − V with V = inv(``sampling`` + the mechanism's part
    at θθ')inv (E θθ' = ββ' + Var θ: the plug-in alone over-states it), projected onto the PSD cone."""
    T = np.outer(theta, theta)
    V = inv @ (sampling + _mechanism(s, T)) @ inv.T
    if not np.isfinite(V).all():
        return T
    w, U = np.linalg.eigh(T - V)
    return (U * np.maximum(w, 0.0)) @ U.T


def _noise_covariance(s, theta: np.ndarray) -> np.ndarray:
    """The mechanism's part of Var θ̂ given the released A: A⁻¹(σ_b²I + Cov(Eβ))A⁻¹ at T = :func:`_target` of θ̂
    (its mechanism part only, as measured: docs/proofs.md)."""
    A_inv = _inverse(s)
    with np.errstate(over="ignore", invalid="ignore"):
        V = A_inv @ _mechanism(s, np.outer(theta, theta)) @ A_inv
        if not np.isfinite(V).all():
            return V
        return A_inv @ _mechanism(s, _target(s, theta, A_inv)) @ A_inv


def _bootstrap(method, s, G_hat, theta, sigma2, B, rng) -> np.ndarray:
    """B draws θ* of the mechanism re-run on data simulated from the released values (module docstring)."""
    d = len(theta)
    w, V = np.linalg.eigh(G_hat)
    score = (rng.standard_normal((B, d)) * np.sqrt(sigma2 * w)) @ V.T  # N(0, σ̂² Ĝ)
    iu = np.triu_indices(d)
    E = np.zeros((B, d, d))
    E[:, iu[0], iu[1]] = rng.standard_normal((B, len(iu[0]))) * s.sigma_G
    E = E + np.triu(E, 1).transpose(0, 2, 1)
    G_star = G_hat + E
    b_star = G_hat @ theta + score + rng.standard_normal((B, d)) * s.sigma_b
    lam = _ridge(method, s, G_hat, G_star, rng)
    A = G_star + lam[:, None, None] * np.eye(d)
    with np.errstate(over="ignore", invalid="ignore"):
        try:
            return np.linalg.solve(A, b_star[..., None])[..., 0]
        except np.linalg.LinAlgError:  # an exactly singular draw (SSP has no ridge): minimum-norm solutions
            return np.stack([np.linalg.lstsq(a, b, rcond=None)[0] for a, b in zip(A, b_star, strict=True)])


def _ridge(method, s, G_hat, G_star, rng) -> np.ndarray:
    """λ* of each simulated release by the method's own rule, which its release records in ``s.extra``: none, no
    ridge (SSP); a private λ_min (``sigma_min``: AdaSSP's), simulated from Ĝ; κ and ρ (joint SSP's), read off G*
    (:func:`~dpcost.estimators.ssp.ridge_from_noisy_gram`)."""
    B, d = len(G_star), len(G_hat)
    if not s.extra:
        return np.zeros(B)
    if "sigma_min" in s.extra:
        e = s.extra
        noisy_min = np.linalg.eigvalsh(G_hat)[0] + e["sigma_min"] * rng.standard_normal(B)
        return np.maximum(0.0, e["bound"] - np.maximum(noisy_min - e["shift"], 0.0))
    bound = s.extra["kappa"] * noise_norm_bound(s.sigma_G, d, s.extra["rho"])
    return np.maximum(0.0, bound - np.linalg.eigvalsh(G_star)[:, 0])
