"""Generalized linear models — Cai, Wang & Zhang, *Score Attack* (2025): Algorithm 1 (DP GLM by noisy gradient
descent, §3.2) and Algorithm 5 (DP sparse GLM by noisy iterative hard thresholding, §5.2.2), their replace-one
sensitivities and privacy plans, and the non-private baselines (the MLE by Newton's method, IHT).

Model (3.1): f_β(y|x) = h(y, σ) exp((y x'β − ψ(x'β))/c(σ)), loss L_n(β) = (1/n) Σ_i ψ(x_i'β) − y_i x_i'β.
Neighbours: *replace one record* (y_i, x_i), n public. Every private estimator enforces its assumptions itself,
whatever the data: (D1) by clipping every coordinate of x to [−σ_x, σ_x], Π_R by clipping y to [−R, R], (G1) by
clipping ψ'(x'β) to [−b, b], b = ``psi_bound`` (default c1; required where ψ' is unbounded — Gaussian, Poisson —
for which Prop. 3.3 and Lemma 5.4 fail as printed). Each record's residual ψ'_b(x'β) − Π_R(y) then has |·| ≤ ρ
(:func:`glm_residual_bound`): 1 for logistic (ψ' ∈ (0, 1), y ∈ {0, 1}), b + R for Gaussian, never above R + c1.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..dp.accountant import gaussian_noise_multiplier
from ..dp.mechanisms import check_positive, check_sensitivity
from ..dp.plan import PrivacyPlan, grid_release
from ..dp.privacy import Privacy
from ..dp.samplers import draw, grid_scale
from ..errors import DataError, PrivacyError
from .base import check_count, check_design, check_s, require_replace
from .sparse_regression import (
    NOISY_IHT_WHY,
    check_B,
    check_s_max,
    clip_design_linf,
    gradient_step,
    iht_loop,
    noisy_iht,
    noisy_iht_releases,
)

INF = math.inf

# ---------------------------------------------------------------------------------------------------------------
# Families
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GLMFamily:
    """A GLM (3.1): ψ and its derivatives, c(σ), c1 = sup|ψ'| and c2 = sup ψ'' ((G1), (G2); inf: unbounded), and
    the public ranges that bound the residual ψ'(x'β) − y: the closure of ψ'(ℝ) and of the support of y."""

    name: str
    psi: Callable
    psi_prime: Callable
    psi_double_prime: Callable
    c_sigma: float = 1.0
    c1: float = INF
    c2: float = INF
    mean_range: tuple[float, float] = (-INF, INF)
    y_range: tuple[float, float] = (-INF, INF)
    binary: bool = False  # y ∈ {0, 1}

    def check_y(self, y: np.ndarray) -> None:  # the residual bound ρ relies on y in the support
        if self.binary and not np.all((y == 0) | (y == 1)):
            raise DataError(f"the {self.name} family needs y in {{0, 1}}")
        lo, hi = self.y_range
        if y.size and (y.min() < lo or y.max() > hi):
            raise DataError(f"the {self.name} family needs y in [{lo}, {hi}]")


def logistic_family() -> GLMFamily:
    """ψ(u) = log(1 + e^u), c(σ) = 1, y ∈ {0, 1}: c1 = 1, c2 = 1/4."""
    from scipy import special  # here: slow to import, and only the logistic family needs it

    psi, psi2 = (lambda u: np.logaddexp(0.0, u)), (lambda u: special.expit(u) * special.expit(-u))
    return GLMFamily("logistic", psi, special.expit, psi2, 1.0, 1.0, 0.25, (0.0, 1.0), (0.0, 1.0), True)


def gaussian_family(sigma2: float = 1.0) -> GLMFamily:
    """ψ(u) = u²/2, c(σ) = σ²: linear regression. ψ' = u is unbounded (c1 = inf), c2 = 1."""
    sigma2 = check_positive("sigma2", sigma2)
    return GLMFamily("gaussian", lambda u: u * u / 2, lambda u: u, np.ones_like, sigma2, INF, 1.0)


def poisson_family() -> GLMFamily:
    """ψ(u) = e^u, c(σ) = 1, y ≥ 0: neither ψ' nor ψ'' is bounded."""
    return GLMFamily("poisson", np.exp, np.exp, np.exp, 1.0, INF, INF, (0.0, INF), (0.0, INF))


FAMILIES = {"logistic": logistic_family, "gaussian": gaussian_family, "poisson": poisson_family}


def get_family(family: str | GLMFamily) -> GLMFamily:
    if isinstance(family, GLMFamily):
        return family
    if family not in FAMILIES:
        raise PrivacyError(f"family must be one of {tuple(FAMILIES)} or a GLMFamily, got {family!r}")
    return FAMILIES[family]()


# ---------------------------------------------------------------------------------------------------------------
# Tuning, residual bound and sensitivities
# ---------------------------------------------------------------------------------------------------------------


def glm_residual_bound(family: str | GLMFamily, *, R: float, psi_bound: float | None = None) -> float:
    """ρ = sup |ψ'_b(u) − Π_R(y)| over every u and every y of the family's support, ψ'_b = ψ' clipped to [−b, b]
    (b = ``psi_bound``, default c1): max(m_hi − y_lo, y_hi − m_lo) with [m_lo, m_hi] = ψ'(ℝ) ∩ [−b, b] and
    [y_lo, y_hi] = supp y ∩ [−R, R]. Logistic: 1; Gaussian: b + R; Poisson: max(b, R). Never above R + min(c1, b)."""
    fam = get_family(family)
    b = _psi_bound(fam, psi_bound)
    m_lo, m_hi = max(fam.mean_range[0], -b), min(fam.mean_range[1], b)
    y_lo, y_hi = max(fam.y_range[0], -R), min(fam.y_range[1], R)
    return max(m_hi - y_lo, y_hi - m_lo)


def _psi_bound(fam: GLMFamily, psi_bound) -> float:
    if psi_bound is None:
        if not math.isfinite(fam.c1):
            raise PrivacyError(
                f"the {fam.name} family has unbounded psi' ((G1) fails, so the printed B bounds nothing): give a "
                "public psi_bound, to which psi'(x'beta) is clipped"
            )
        return fam.c1
    return check_positive("psi_bound", psi_bound)


class GLMTuning(NamedTuple):
    """The constants of one run, defaults resolved from public quantities (family, n, σ_x) only."""

    family: GLMFamily
    T: int
    eta0: float
    R: float
    sigma_x: float
    psi_bound: float  # b: ψ' clipped to [−b, b]
    rho: float  # residual bound (glm_residual_bound)
    B_printed: float  # 4(R + min(c1, b))σ_x (Prop. 3.3, Lemma 5.4)

    def mean(self, u: np.ndarray) -> np.ndarray:
        """ψ'_b(u): the fitted mean clipped to [−b, b] ((G1) enforced; for Gaussian: the linear predictor clipped)."""
        with np.errstate(over="ignore"):
            return np.clip(self.family.psi_prime(u), -self.psi_bound, self.psi_bound)

    def increment(self, X: np.ndarray, y: np.ndarray, beta: np.ndarray) -> np.ndarray:
        """The gradient step's move −(η⁰/n) Σ_i (ψ'_b(x_i'β) − y_i) x_i (X, y already clipped)."""
        return -(self.eta0 / len(y)) * (X.T @ (self.mean(X @ beta) - y))

    def assumption(self) -> str:
        b, sx = self.psi_bound, self.sigma_x
        return (
            f"coordinates of x clipped to [-{sx}, {sx}] (D1), y to [-{self.R}, {self.R}], psi' "
            f"({self.family.name}) to [-{b}, {b}] (G1): residual bound {self.rho:.6g}"
        )

    def params(self, B: float) -> dict:
        return {
            "B": B,
            "B printed": self.B_printed,
            "T": self.T,
            "eta0": self.eta0,
            "R": self.R,
            "psi_bound": self.psi_bound,
            "residual bound rho": self.rho,
        }


def glm_tuning(family, n: int, *, T, eta0, R, sigma_x, psi_bound, sparse: bool = False) -> GLMTuning:
    """Check the tuning and resolve the defaults (None) of App. A.5 (Alg. 1) and C.8 (Alg. 5), with the unknown
    restricted-smoothness constant γ bounded by c2 σ_x² (λ_max(E ψ'' xx') ≤ c2 λ_max(Σ_x) ≤ c2 σ_x² for a design
    with uncorrelated coordinates) and γ/α = 1 (ρ = 1 in C.8):
    η⁰ = 3/(4γ) (A.5) or 1/(2γ) (C.8); T = ⌈2 log(9n)⌉ (A.5) or ⌈2 log(6γn)⌉ (C.8);
    R = min(ess sup|y|, c1 + √(2 c2 c(σ) log n)) with c1 → b where ψ' is clipped. A default the family leaves
    infinite (Poisson: c2 = inf) must be given."""
    fam = get_family(family)
    n = check_count("n", n)
    sigma_x = check_positive("sigma_x", sigma_x)
    b = _psi_bound(fam, psi_bound)
    c1 = min(fam.c1, b)
    gamma = fam.c2 * sigma_x**2
    if R is None:
        R = min(max(-fam.y_range[0], fam.y_range[1]), c1 + math.sqrt(2 * fam.c2 * fam.c_sigma * math.log(n)))
    if eta0 is None:
        eta0 = (1 / 2 if sparse else 3 / 4) / gamma
    if T is None and math.isfinite(gamma):
        T = max(1, math.ceil(2 * math.log(6 * gamma * n if sparse else 9 * n)))
    for name, v in (("R", R), ("eta0", eta0)):
        if not (isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) and v > 0):
            raise PrivacyError(f"{name} must be a finite number > 0 (the {fam.name} family gives no default), got {v}")
    T = check_count("T", T)
    rho = glm_residual_bound(fam, R=R, psi_bound=b)
    return GLMTuning(fam, T, float(eta0), float(R), sigma_x, b, rho, 4 * (R + c1) * sigma_x)


def glm_step_sensitivity(
    family, *, R: float, sigma_x: float, eta0: float, n: int, d: int = 1, psi_bound=None, norm: str = "l2"
) -> float:
    """Replace-one sensitivity of one gradient step (η⁰/n) Σ_i (ψ'_b(x_i'β) − Π_R(y_i)) x_i, for any β.

    Each record's term r·x has |r| ≤ ρ (:func:`glm_residual_bound`) and x ∈ [−σ_x, σ_x]^d, so replacing one moves
    the step by at most 2η⁰ρσ_x/n in every coordinate (``norm="linf"``, Alg. 5) and 2η⁰ρσ_x√d/n in ℓ2 (Alg. 1).
    ℓ∞, attained (d ≥ 2): x = σ_x·1, x′ = σ_x(1 − 2e_1), β = β_1 e_1 and, for Gaussian, β_1σ_x ≥ b, y = −R,
    y′ = R (r = b + R, r′ = −(b + R)); for logistic y = 0, y′ = 1 and β_1σ_x → ∞ (r → 1, r′ → −1; equal in floating
    point from β_1σ_x ≈ 40): every coordinate j ≥ 2 moves by 2η⁰ρσ_x/n. ℓ2, the supremum (approached, not attained):
    x = σ_x·1, x′ = x − τσ_x e_1 with τ → 0 and β steep enough along e_1 that x'β and x′'β sit at the two extremes.
    With ρ = R + c1 these are the paper's η⁰B√d/n and η⁰B/n at B = 2(R + c1)σ_x, half the printed B.
    """
    rho = glm_residual_bound(family, R=R, psi_bound=psi_bound)
    scale = {"l2": math.sqrt(d), "linf": 1.0}[norm]
    return 2 * eta0 * rho * sigma_x * scale / n


# ---------------------------------------------------------------------------------------------------------------
# Algorithm 1: DP GLM by noisy gradient descent
# ---------------------------------------------------------------------------------------------------------------


def dp_glm_plan(
    privacy: Privacy,
    n: int,
    d: int,
    *,
    family: str | GLMFamily,
    T: int | None,
    eta0: float | None,
    R: float | None,
    sigma_x: float,
    B: float | None,
    psi_bound: float | None,
) -> PrivacyPlan:
    """Alg. 1: T Gaussian releases of the gradient step, ℓ2 sensitivity Δ = 2η⁰ρσ_x√d/n (:func:`glm_step_sensitivity`;
    tuning as :func:`dp_glm`, which holds the defaults; None is resolved by :func:`glm_tuning`).

    paper: each step the Gaussian mechanism of Example 2.1 at (ε/T, δ/T) on the paper's bound η⁰B√d/n, B =
           4(R + c1)σ_x by default (Prop. 3.3; at least 2Δn/(η⁰√d)), i.e. σ = η⁰B√(2d log(2T/δ))/(nε/T) as printed;
           basic composition; proven for ε/T < 1 (outside: refused or warned, ``on_invalid``).
    tight: σ = Δ × the exact (Gaussian-DP) noise multiplier of T Gaussian steps at the total (ε, δ). B is checked,
    not used.
    Both refuse B below 2ρσ_x and a family with unbounded ψ' without ``psi_bound``. ``beta0`` does not enter the
    noise, so the plan does not take it.
    """
    p = privacy.at(n)
    require_replace(p, "dp_glm", "the sensitivity is derived with n public")
    epsilon, delta = p.epsilon, p.delta
    d = check_count("d", d)
    t = glm_tuning(family, n, T=T, eta0=eta0, R=R, sigma_x=sigma_x, psi_bound=psi_bound)
    T = t.T
    sens = glm_step_sensitivity(t.family, R=t.R, sigma_x=t.sigma_x, eta0=t.eta0, n=n, d=d, psi_bound=t.psi_bound)
    check_sensitivity(sens)  # a zero bound must never mean zero noise
    B = check_B(B, 2 * t.rho * t.sigma_x, t.B_printed, "2 rho sigma_x")
    params, typed = t.params(B), {"coordinates": d, "sampler": p.sampler}
    whole = {
        "whole_mechanism": True,
        "whole_mechanism_why": "T Gaussian gradient steps; the clipping is in the "
        "sensitivity, the iterates are post-processing",
    }
    if p.calibration == "tight":
        sigma = grid_scale(sens * gaussian_noise_multiplier(T, epsilon, delta), sens, d, "l2", "gaussian", p.sampler)
        rel = grid_release("gaussian", "gaussian", sens, "l2", sigma, T, **typed)
        comp = f"exact Gaussian-DP composition of {T} Gaussian steps (closed form)"
        return PrivacyPlan("dp_glm", epsilon, delta, "tight", comp, t.assumption(), (rel,), p.relation, params, **whole)
    if epsilon / T >= 1:
        p.outside_validity(f"Alg. 1's per-step Gaussian mechanism needs epsilon/T < 1, got epsilon={epsilon}, T={T}")
    paper_bound = t.eta0 * B * math.sqrt(d) / n  # what the printed σ is derived from (≥ Δ)
    sigma = paper_bound * math.sqrt(2 * math.log(2 * T / delta)) / (epsilon / T)
    sigma = grid_scale(sigma, sens, d, "l2", "gaussian", p.sampler)
    rel = grid_release("gaussian", "gaussian", sens, "l2", sigma, T, epsilon / T, delta / T, **typed)
    comp = f"basic composition of {T} Gaussian mechanisms at (eps/T, delta/T) (Example 2.1)"
    params |= {"noise derived from eta0 B sqrt(d) / n": paper_bound, "true sensitivity / that": sens / paper_bound}
    return PrivacyPlan("dp_glm", epsilon, delta, "paper", comp, t.assumption(), (rel,), p.relation, params, **whole)


def _glm_data(X, y, family) -> tuple[np.ndarray, np.ndarray]:
    X, y = check_design(X, y)
    get_family(family).check_y(y)
    return X, y


def dp_glm(
    X,
    y,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    family: str | GLMFamily = "logistic",
    T: int | None = None,  # A.5: (2γ/α) log(9n) at γ/α = 1
    eta0: float | None = None,  # A.5: 3/(4γ), γ ≤ c2 σ_x²
    R: float | None = None,  # A.5: min(ess sup|y|, c1 + √(2 c2 c(σ) log n)); 1 for logistic
    sigma_x: float,
    B: float | None = None,  # Prop. 3.3: 4(R + c1)σ_x
    psi_bound: float | None = None,
    beta0=None,
) -> np.ndarray:
    """DP GLM by noisy gradient descent — Cai, Wang & Zhang, *Score Attack*, Algorithm 1.

    β⁰ = ``beta0`` (a *public* pilot, never fitted on these data; None: 0 — the paper's ‖β⁰ − β̂‖ ≤ 3 is
    data-dependent); for t < T: β^{t+1} = β^t − (η⁰/n) Σ_i (ψ'_b(x_i'β^t) − Π_R(y_i)) x_i + w_t, w_t ~ N_d(0, σ²I),
    σ from :func:`dp_glm_plan`. Returns β^T.

    Privacy: (ε, δ)-DP under replace-one neighbours, for every input: every coordinate of x is clipped to
    [−σ_x, σ_x] (D1), y to [−R, R], and ψ'(x'β) to [−b, b], b = ``psi_bound`` (G1) — for the Gaussian family that
    clips the linear predictor x'β (the loss ψ_b(u) − yu, ψ_b Huber-like: choose b ≥ sup|x'β*|; below it the fit is
    biased, and diverges when many |y| > b); required there and for Poisson (PrivacyError), default c1 elsewhere.
    Step sensitivity in ℓ2: 2η⁰ρσ_x√d/n (:func:`glm_step_sensitivity`; ρ = 1 for logistic). y outside the family's
    support (logistic: not in {0, 1}) is refused (DataError). Tuning defaults: :func:`glm_tuning`.
    """
    X, y = _glm_data(X, y, family)
    n, d = X.shape
    plan = dp_glm_plan(privacy, n, d, family=family, T=T, eta0=eta0, R=R, sigma_x=sigma_x, B=B, psi_bound=psi_bound)
    t = glm_tuning(family, n, T=T, eta0=eta0, R=R, sigma_x=sigma_x, psi_bound=psi_bound)
    beta = np.zeros(d) if beta0 is None else np.array(beta0, dtype=float)
    if beta.shape != (d,) or not np.isfinite(beta).all():
        raise DataError(f"beta0 must be a finite vector of length d={d}")
    Xc, yt = clip_design_linf(X, y, t.sigma_x, t.R)
    noise = draw("gaussian", plan.releases[0].noise_scale, (t.T, d), rng, privacy.sampler)
    for step in range(t.T):
        beta = beta + noise[step].add(t.increment(Xc, yt, beta))  # the release; the iterate is post-processing
    return beta


def glm_mle(X, y, *, family: str | GLMFamily = "logistic", ridge: float = 1e-6, max_iter: int = 200, tol=1e-10):
    """The (non-private) GLM MLE argmin L_n(β) + (ridge/2)‖β‖², by Newton's method with backtracking.

    The tiny ridge makes the minimiser exist on (quasi-)separable logistic data, where the MLE is infinite: the
    fit is then large but finite (‖β‖ grows like log(1/ridge)); elsewhere it moves the MLE by O(ridge). Stops when
    the squared Newton decrement falls below ``tol``."""
    X, y = _glm_data(X, y, family)
    fam, (n, d), ridge = get_family(family), X.shape, check_positive("ridge", ridge)

    def loss(b):
        u = X @ b
        with np.errstate(over="ignore"):
            return float(np.mean(fam.psi(u) - y * u) + ridge / 2 * b @ b)

    beta, f = np.zeros(d), loss(np.zeros(d))
    for _ in range(check_count("max_iter", max_iter)):
        u = X @ beta
        g = X.T @ (fam.psi_prime(u) - y) / n + ridge * beta
        H = (X.T * fam.psi_double_prime(u)) @ X / n + ridge * np.eye(d)
        step = np.linalg.solve(H, g)
        dec = float(g @ step)
        if dec < tol:
            break
        a = 1.0
        while (f_new := loss(beta - a * step)) > f - 0.25 * a * dec and a > 1e-10:
            a /= 2  # backtracking: Newton's full step can overshoot where ψ'' is far from constant
        beta, f = beta - a * step, f_new
    return beta


# ---------------------------------------------------------------------------------------------------------------
# Algorithm 5: DP sparse GLM by noisy iterative hard thresholding
# ---------------------------------------------------------------------------------------------------------------


def dp_sparse_glm_plan(
    privacy: Privacy,
    n: int,
    d: int,
    *,
    s: int,
    family: str | GLMFamily,
    T: int | None,
    eta0: float | None,
    R: float | None,
    sigma_x: float,
    B: float | None,
    psi_bound: float | None,
    s_max: int | None = None,
) -> PrivacyPlan:
    """Alg. 5: T NoisyHT (Peeling) steps of s selections on gradient steps of ℓ∞ sensitivity Δ = 2η⁰ρσ_x/n
    (:func:`glm_step_sensitivity`; no bound on β is needed: c1, or the clip b, bounds ψ'). Tuning as
    :func:`dp_sparse_glm`, which holds the defaults (None resolved by :func:`glm_tuning`).

    paper: NoisyHT(·, s, ε/T, δ/T, λ = η⁰B/n) as printed, B = 4(R + c1)σ_x by default (Lemma 5.4; λ ≥ 2Δ), Laplace
           scale λ·2√(3s log(T/δ))/(ε/T); basic composition; refused or warned where Lemma 5.1 alone certifies it.
    tight: λ = Δ, one Laplace scale for all T·s selections and releases by the accountant.
    The calibration is that of Alg. 4.2 (:func:`~dpcost.estimators.sparse_regression.noisy_iht_releases`). Both
    refuse B below 2ρσ_x; ``s_max`` ≥ s calibrates every Peeling for s_max selections.
    """
    p = privacy.at(n)
    require_replace(p, "dp_sparse_glm", "the sensitivity is derived with n public")
    s = check_s(s, check_count("d", d))
    k = check_s_max(s, s_max)
    t = glm_tuning(family, n, T=T, eta0=eta0, R=R, sigma_x=sigma_x, psi_bound=psi_bound, sparse=True)
    sens = glm_step_sensitivity(
        t.family, R=t.R, sigma_x=t.sigma_x, eta0=t.eta0, n=n, psi_bound=t.psi_bound, norm="linf"
    )
    check_sensitivity(sens)
    B = check_B(B, 2 * t.rho * t.sigma_x, t.B_printed, "2 rho sigma_x")
    rels, comp, lam, b0 = noisy_iht_releases(
        p,
        s=s,
        k=k,
        T=t.T,
        sens=sens,
        lam_paper=t.eta0 * B / n,
        B=B,
        printed="Alg. 5's printed NoisyHT scale",
        lemma="Lemma 5.1",
    )
    params = t.params(B) | {
        "lambda": lam,
        "true sensitivity / lambda": sens / lam,
        "Laplace scale per unit lambda": b0 / lam,
    }
    return PrivacyPlan(
        "dp_sparse_glm",
        p.epsilon,
        p.delta,
        p.calibration,
        comp,
        t.assumption(),
        rels,
        p.relation,
        params,
        whole_mechanism=False,
        whole_mechanism_why=NOISY_IHT_WHY,
    )


def dp_sparse_glm(
    X,
    y,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    s: int,
    family: str | GLMFamily = "logistic",
    T: int | None = None,  # C.8: (2γ/(ρα)) log(6γn) at γ/α = ρ = 1
    eta0: float | None = None,  # C.8: 1/(2γ), γ ≤ c2 σ_x²
    R: float | None = None,  # C.8: min(ess sup|y|, c1 + √(2 c2 c(σ) log n)); 1 for logistic
    sigma_x: float,
    B: float | None = None,  # Lemma 5.4: 4(R + c1)σ_x
    psi_bound: float | None = None,
    s_max: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """DP sparse GLM by noisy IHT — Cai, Wang & Zhang, *Score Attack*, Algorithm 5.

    β⁰ = 0; for t < T: β^{t+0.5} = β^t − (η⁰/n) Σ_i (ψ'_b(x_i'β^t) − Π_R(y_i)) x_i,
    β^{t+1} = NoisyHT(β^{t+0.5}, s) (Alg. 3 = Peeling: fresh Laplace noise on |v_j| for each of s selections, fresh
    noise on the released values), by the loop Alg. 4.2 shares (:func:`~dpcost.estimators.sparse_regression.noisy_iht`).

    Privacy: (ε, δ)-DP under replace-one neighbours, for every input: coordinates of x clipped to [−σ_x, σ_x] (D1'),
    y to [−R, R], ψ' to [−b, b] (G1; for Gaussian the linear predictor — see :func:`dp_glm`). ℓ∞ sensitivity of
    the gradient step: 2η⁰ρσ_x/n (:func:`glm_step_sensitivity`). Noise: :func:`dp_sparse_glm_plan`.
    Returns (β^T, the support chosen by the last Peeling, in selection order).
    """
    X, y = _glm_data(X, y, family)
    n, d = X.shape
    plan = dp_sparse_glm_plan(
        privacy, n, d, s=s, family=family, T=T, eta0=eta0, R=R, sigma_x=sigma_x, B=B, psi_bound=psi_bound, s_max=s_max
    )
    t = glm_tuning(family, n, T=T, eta0=eta0, R=R, sigma_x=sigma_x, psi_bound=psi_bound, sparse=True)
    Xc, yt = clip_design_linf(X, y, t.sigma_x, t.R)
    step = lambda beta: gradient_step(Xc, yt, beta, t.eta0, t.mean)  # noqa: E731
    b = plan.releases[0].noise_scale
    return noisy_iht(step, d, s=check_s(s, d), T=t.T, b=b, rng=rng, sampler=privacy.sampler)


def sparse_glm_iht(
    X,
    y,
    *,
    s: int,
    family: str | GLMFamily = "logistic",
    T: int,
    eta0: float,
    R: float | None = None,
    psi_bound: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Non-private IHT for a sparse GLM (Alg. 2 on L_n): Alg. 5 with NoisyHT replaced by keeping the s largest
    |coordinates| (:func:`~dpcost.estimators.sparse_regression.iht_loop`). R truncates y, ``psi_bound`` clips ψ'
    (None: neither). Returns (β^T, its support by decreasing |β^{T−0.5}_j|)."""
    X, y = _glm_data(X, y, family)
    fam = get_family(family)
    n, d = X.shape
    s, T, eta0 = check_s(s, d), check_count("T", T), check_positive("eta0", eta0)
    if R is not None:
        y = np.clip(y, -check_positive("R", R), R)
    b = INF if psi_bound is None else check_positive("psi_bound", psi_bound)
    mean = lambda u: np.clip(fam.psi_prime(u), -b, b)  # noqa: E731
    return iht_loop(lambda beta: gradient_step(X, y, beta, eta0, mean), d, s=s, T=T)
