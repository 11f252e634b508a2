"""Private sparse learning by knowledge transfer — Wang & Gu (AAAI 2020), Algorithm 1 (DPSL-KT): a non-private
"teacher" fitted on the private data labels public features X̃ through one Gaussian release ỹ = X̃θ̂ + ξ, and a
"student" learns from (X̃, ỹ) by IGHT (Alg. 2) with the squared loss — post-processing. Two teachers:

``dpsl_kt`` (provable, ours)
    the exact minimiser of the λ-strongly convex F(θ) = (1/n) Σ_i ℓ(x_i'θ, y_i) + λ‖θ‖²/2 over R^d, rows clipped to
    ‖x_i‖₂ ≤ c_x and, for the squared loss, the residual clipped at ``residual_clip`` (the Huber loss, whose
    derivative is the clipped residual; logistic: |σ(u) − y| < 1). Every record's gradient then has ℓ2 norm ≤ G =
    c_x·c_r (c_r = 1 for logistic) at every θ, and for replace-one neighbours ‖θ̂ − θ̂′‖₂ ≤ 2G/(nλ) (Chaudhuri,
    Monteleoni & Sarwate 2011, Cor. 8: strong convexity against the one changed gradient). The solver ends within τ
    of the minimiser, τ = ``tol``·2G/(nλ), certified by ‖∇F(θ)‖₂ ≤ λτ or by a gradient descent's contraction
    (:func:`strongly_convex_teacher`: total, whatever the responses); so the released
    X̃θ moves by at most Δ = ‖X̃‖_op(2G/(nλ) + 2τ) — the ℓ2 sensitivity, with the public X̃'s largest singular value.
    The Gaussian mechanism at (ε, δ) on Δ: (ε, δ)-DP for every input.

``dpsl_kt_paper`` (Alg. 1 as printed; PRIVATE ONLY UNDER THE PAPER'S ASSUMPTIONS)
    IGHT on F with the ℓ0 constraint ‖θ‖₀ ≤ s, entries clipped to |x_ij| ≤ K and the residual at c_r, so that
    γ = K·c_r bounds ‖∇ℓ_i‖∞ everywhere; noise of Thm 4.3, σ² = 8mβ̃sγ² log(2.5/δ)/(n²ε²λ²) — the classic Gaussian
    mechanism at (ε, δ/2) on Δ = 2√(mβ̃s)γ/(nλ). Its proof needs (a) the teacher to be the exact minimiser of the
    non-convex ℓ0-constrained problem (IGHT returns a local solution, and the support can jump between neighbours,
    so the 2√sγ/(nλ) bound on ‖θ̂ − θ̂′‖ does not follow; tests/unit/estimators/test_knowledge_transfer.py shows a
    pair exceeding it), (b) ‖X̃v‖² ≤ mβ̃‖v‖² for sparse v, which holds only with high probability over X̃, and (c)
    for ``calibration: paper``, ε < 1. Every run emits a PRIVACY WARNING and its plan has ``proven=False``.

Neighbours: replace one record of the private (X, y), n public. X̃ must be independent of the private data — a
fresh draw or a disjoint public split; the code that splits enforces it (:mod:`dpcost.data.libsvm`,
:mod:`dpcost.simulation.designs`). A design may be dense or ``scipy.sparse``; no n × d or d × d dense matrix is
formed.
"""

from __future__ import annotations

import hashlib
import math
import warnings

import numpy as np

from ..dp.mechanisms import calibrated_gaussian_sigma, check_positive, classic_gaussian_sigma
from ..dp.plan import PrivacyPlan, grid_release
from ..dp.privacy import Privacy
from ..dp.samplers import draw
from ..errors import DataError, PrivacyError
from .base import FrozenMemo, check_count, check_s, frozen, issparse, require_replace
from .losses import as_design, check_loss, clip_entries, clip_rows_l2, ight, predictor, residual
from .sparse_mean import hard_threshold

PAPER_GAP = (
    "dpsl_kt_paper is private only under the paper's assumptions: Thm 4.3 needs the teacher to be the exact "
    "minimiser of the l0-constrained problem (IGHT is not), and ||X~ v||^2 <= m beta~ ||v||^2 for sparse v, which "
    "holds only with high probability over X~"
)


# ‖X̃‖_op by the matrix's contents (a digest): every release of a run asks it of the same public matrix — Figure 5
# at m = 4,000, d = 5,000: ten ARPACK runs of 5-10 s a repetition (each ε of dpsl_kt, and its plan), now one
_NORMS: dict[bytes, float] = {}


_FROZEN_NORMS = FrozenMemo(8)


def operator_norm(X) -> float:
    """‖X‖_op, the largest singular value of a public matrix (ARPACK, tolerance 1e-10, a fixed start: the same value
    for the same matrix), raised by a relative 1e-6 against its rounding. Dense matrices with min(m, d) ≤ 2,000 use
    the exact SVD. Memoised on a digest of the matrix (its format, dtype, shape and bytes; the last 8 matrices), a
    :func:`~.base.frozen` one on its identity (hashing 160 MB took 0.1 s, ten times a Figure 5 repetition)."""
    if frozen(X):
        return _FROZEN_NORMS.get(X, None, lambda: _operator_norm(X))
    key = _digest(X)
    if key not in _NORMS:
        if len(_NORMS) >= 8:
            del _NORMS[next(iter(_NORMS))]  # the oldest
        _NORMS[key] = _operator_norm(X)
    return _NORMS[key]


def _digest(X) -> bytes:
    h = hashlib.blake2b(digest_size=20)
    if issparse(X):
        X = X.tocsr()
        parts = (X.data, X.indices, X.indptr)
    else:
        X = np.asarray(X)
        parts = (X,)
    h.update(repr((type(X).__name__, X.dtype.str, X.shape)).encode())
    for a in parts:
        h.update(np.ascontiguousarray(a).data)
    return h.digest()


def _operator_norm(X) -> float:
    if not issparse(X) and min(X.shape) <= 2000:
        top = float(np.linalg.svd(X, compute_uv=False)[0])
    else:
        from scipy.sparse import linalg as splinalg  # here: slow to import

        v0 = np.ones(min(X.shape))
        top = float(splinalg.svds(X, k=1, tol=1e-10, v0=v0, return_singular_vectors=False)[0])
    return top * (1 + 1e-6)


def _check_lam(c_lambda: float, n: int, d: int, s: int, p: Privacy) -> float:
    """λ with λ² = c_λ √(s log d log(1/δ))/(nε): Thm 4.5's choice, which balances the ridge's bias (∝ λ) against
    the release's noise (∝ 1/(nελ)). §5 prints the grid c₁√(s log d log(1/δ))/(nε) without saying whether it is λ's
    or λ²'s; read as λ's it keeps the noise constant in ε (σ ∝ 1/(nελ)), so we read it as λ²'s, as Thm 4.5 has it."""
    c_lambda = check_positive("c_lambda", c_lambda)
    return math.sqrt(c_lambda * math.sqrt(s * math.log(max(d, 2)) * math.log(1 / p.delta)) / (n * p.epsilon))


# ---------------------------------------------------------------------------------------------------------------
# The provable DPSL-KT
# ---------------------------------------------------------------------------------------------------------------


def dpsl_kt_plan(
    privacy: Privacy,
    n: int,
    d: int,
    *,
    s: int,
    loss: str = "squared",
    X_public,
    c_lambda: float,
    c_x: float,
    residual_clip: float,
    tol: float,
) -> PrivacyPlan:
    """One Gaussian release of X̃θ̂ ∈ R^m with Δ = ‖X̃‖_op·(1 + 2·tol)·2G/(nλ), G = c_x·c_r (module docstring), X̃ =
    ``X_public`` (public, m × d). paper: classic σ (ε < 1); tight: analytic σ."""
    p = privacy.at(n)
    require_replace(p, "dpsl_kt", "the teacher's sensitivity is derived with n public")
    n, d = check_count("n", n), check_count("d", d)
    Xp = _public(X_public, d)
    m, op_norm = Xp.shape[0], operator_norm(Xp)
    s, loss = check_s(s, d), check_loss(loss)
    c_x, tol = check_positive("c_x", c_x), check_positive("tol", tol)
    c_r = 1.0 if loss == "logistic" else check_positive("residual_clip", residual_clip)
    lam = _check_lam(c_lambda, n, d, s, p)
    theta_sens = 2 * c_x * c_r / (n * lam)
    sens = op_norm * (1 + 2 * tol) * theta_sens
    sigma, how = calibrated_gaussian_sigma(p, sens, p.epsilon, p.delta, m, "dpsl_kt")
    rel = grid_release(
        "gaussian", f"gaussian ({how})", sens, "l2", sigma, 1, p.epsilon, p.delta, coordinates=m, sampler=p.sampler
    )
    assumption = (
        f"rows of x clipped to l2 norm {c_x}; "
        + ("logistic loss" if loss == "logistic" else f"squared loss with the residual clipped at {c_r} (Huber)")
        + f"; ridge lambda = {lam:.6g}; the "
        f"teacher solved to ||grad F|| <= lambda*tau; public auxiliary features X~ ({m} rows, "
        f"||X~||_op = {op_norm:.6g}) independent of the private data"
    )
    params = {
        "lambda": lam,
        "teacher sensitivity 2G/(n lambda)": theta_sens,
        "tau": tol * theta_sens,
        "m": m,
        "op_norm": op_norm,
    }
    why = "one Gaussian release of the teacher's labels X~ theta-hat; the student is post-processing"
    return PrivacyPlan(
        "dpsl_kt",
        p.epsilon,
        p.delta,
        p.calibration,
        "one release",
        assumption,
        (rel,),
        p.relation,
        params,
        whole_mechanism=True,
        whole_mechanism_why=why,
    )


def _teacher_objective(loss: str, X, y: np.ndarray, lam: float, c_r: float):
    n = X.shape[0]

    def fg(theta):
        u = X @ theta
        if loss == "squared":
            r = u - y
            a = np.abs(r)
            per = np.where(a <= c_r, 0.5 * r * r, c_r * a - 0.5 * c_r * c_r)  # Huber
            g = np.clip(r, -c_r, c_r)
        else:
            per = np.logaddexp(0.0, u) - y * u
            g = 0.5 * (1 + np.tanh(u / 2)) - y  # σ(u) − y
        grad = np.asarray(X.T @ g) / n + lam * theta
        return float(per.mean() + 0.5 * lam * theta @ theta), grad

    return fg


def strongly_convex_teacher(
    X, y, *, loss: str, lam: float, residual_clip: float, tau: float, c_x: float, max_iter: int = 5000
) -> np.ndarray:
    """argmin F, F(θ) = (1/n) Σ ℓ(x_i'θ, y_i) + λ‖θ‖²/2 (ℓ Huber at c_r for squared, logistic), to ‖θ − θ*‖ ≤ τ, for
    rows already clipped to ‖x_i‖₂ ≤ c_x (public). Total: a result within τ for every finite input.

    Fast path: L-BFGS until ‖∇F(θ)‖₂ ≤ λτ (then ‖θ − θ*‖ ≤ ‖∇F(θ)‖/λ ≤ τ by λ-strong convexity). L-BFGS fails where
    F itself cannot be resolved — a response of 1e300 makes F ≈ 1e298, whose rounding hides every decrease its line
    search looks for — and a refusal there would tell that record's data set from its neighbours. So it is followed,
    when it stops short, by gradient descent with step 2/(L + λ), L = λ + ℓ''·c_x² (ℓ'' ≤ 1 Huber, ≤ 1/4 logistic):
    each step contracts the distance to θ* by q = (L − λ)/(L + λ), so ⌈log(‖∇F(θ₀)‖/(λτ))/log(1/q)⌉ steps from θ₀
    put it within τ (the gradient alone is needed, and it is finite: clipped residuals, clipped rows). A τ below the
    floating-point floor of that descent, ~ 2⁻⁴⁸·(L/λ)·G/λ with G = c_x·c_r, is refused — a check of public constants
    only."""
    from scipy import optimize  # here: slow to import

    lam, tau, c_x = (check_positive(k, v) for k, v in (("lam", lam), ("tau", tau), ("c_x", c_x)))
    c_r = 1.0 if loss == "logistic" else residual_clip
    L = lam + (0.25 if loss == "logistic" else 1.0) * c_x * c_x
    if not tau > 2.0**-48 * (L / lam) * (c_x * c_r / lam):
        raise PrivacyError(
            f"the teacher's tolerance tau = {tau:.3g} is below what floating point can certify at "
            f"lambda = {lam:.3g}, c_x = {c_x:.3g}: raise tol or c_lambda"
        )
    fg = _teacher_objective(loss, X, y, lam, residual_clip)
    target = lam * tau
    theta = np.zeros(X.shape[1])
    with np.errstate(over="ignore", invalid="ignore"):  # F may overflow for a huge response: descent below
        for _ in range(4):  # restarts from the last iterate if L-BFGS stops on its own criteria first
            res = optimize.minimize(
                fg,
                theta,
                jac=True,
                method="L-BFGS-B",
                options={"maxiter": max_iter, "gtol": target / 10 / math.sqrt(theta.size), "ftol": 0.0, "maxcor": 20},
            )
            if np.isfinite(res.x).all():
                theta = res.x
            if np.linalg.norm(fg(theta)[1]) <= target:
                return theta
        q = (L - lam) / (L + lam)
        grad = fg(theta)[1]
        steps = math.ceil(math.log(max(np.linalg.norm(grad) / target, 1.0)) / math.log(1 / q)) if q > 0 else 1
        for _ in range(steps):
            theta = theta - (2 / (L + lam)) * grad
            grad = fg(theta)[1]
            if np.linalg.norm(grad) <= target:
                break
    return theta


def _student(X_public, y_priv: np.ndarray, s: int, eta2: float, T2: int) -> np.ndarray:
    """Alg. 1, lines 3–4: IGHT on L̃(θ) = (1/2m)‖ỹ − X̃θ‖² (post-processing). A step η₂ too large for the public
    design diverges: its overflow is mapped into the finite floats (NaN to 0), so the release stays total."""
    with np.errstate(over="ignore", invalid="ignore"):
        theta = ight(X_public, y_priv, loss="squared", s=s, eta=eta2, T=T2)
    return np.nan_to_num(theta, nan=0.0)


def _public(X_public, d: int):
    if X_public is None:
        raise DataError("DPSL-KT needs public auxiliary features X_public (independent of the private data)")
    Xp = as_design(X_public)
    if Xp.shape[1] != d:
        raise DataError(f"X_public has {Xp.shape[1]} columns, the private design {d}")
    return Xp


def dpsl_kt(
    X,
    y,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    s: int,
    loss: str = "squared",
    X_public,
    c_lambda: float,
    c_x: float,
    residual_clip: float = 1.0,
    tol: float = 0.01,
    eta2: float = 1.0,
    T2: int = 100,
) -> np.ndarray:
    """DPSL-KT with a provable teacher (module docstring): (ε, δ)-DP under replace-one neighbours for every input.

    Teacher: the λ-strongly convex fit of :func:`strongly_convex_teacher` on rows clipped to ‖x‖₂ ≤ c_x (enforced
    here), λ = c_λ√(s log d log(1/δ))/(nε). Release: ỹ = X̃θ̂ + ξ, ξ ~ N(0, σ²I_m), σ from :func:`dpsl_kt_plan`
    (exact discrete Gaussian). Student: IGHT (Alg. 2) on (X̃, ỹ) with the squared loss, sparsity s, step η₂ and T₂
    iterations — also for a logistic teacher, whose linear predictor the student regresses on (Alg. 1, line 3).
    Returns the student's s-sparse θ^p."""
    loss = check_loss(loss)
    X, y = as_design(X, y, loss)
    n, d = X.shape
    Xp = _public(X_public, d)
    plan = dpsl_kt_plan(
        privacy, n, d, s=s, loss=loss, X_public=Xp, c_lambda=c_lambda, c_x=c_x, residual_clip=residual_clip, tol=tol
    )
    lam, tau = plan.parameters["lambda"], plan.parameters["tau"]
    c_r = 1.0 if loss == "logistic" else residual_clip
    theta = strongly_convex_teacher(clip_rows_l2(X, c_x), y, loss=loss, lam=lam, residual_clip=c_r, tau=tau, c_x=c_x)
    noise = draw("gaussian", plan.releases[0].noise_scale, Xp.shape[0], rng, privacy.sampler)
    y_priv = noise.add(np.asarray(Xp @ theta))  # the one release
    return _student(Xp, y_priv, s, check_positive("eta2", eta2), check_count("T2", T2))


# ---------------------------------------------------------------------------------------------------------------
# Algorithm 1 as printed (Thm 4.3)
# ---------------------------------------------------------------------------------------------------------------


def dpsl_kt_paper_plan(
    privacy: Privacy,
    n: int,
    d: int,
    *,
    s: int,
    loss: str = "squared",
    X_public,
    c_lambda: float,
    K: float,
    residual_clip: float,
    beta_tilde: float,
) -> PrivacyPlan:
    """Thm 4.3: one Gaussian release of X̃θ̂ with Δ = 2√(mβ̃s)γ/(nλ), γ = K·c_r (c_r = 1 for logistic), at (ε, δ/2):
    paper: σ² = 8mβ̃sγ² log(2.5/δ)/(n²ε²λ²), the classic formula (ε < 1 or refused / warned); tight: the analytic σ
    on the same Δ. ``proven=False`` either way: Δ bounds the sensitivity only under the paper's assumptions."""
    p = privacy.at(n)
    require_replace(p, "dpsl_kt_paper", "Definition 2.4: data sets of the same size differing in one example")
    n, d = check_count("n", n), check_count("d", d)
    m = _public(X_public, d).shape[0]
    s, loss = check_s(s, d), check_loss(loss)
    K, beta_tilde = check_positive("K", K), check_positive("beta_tilde", beta_tilde)
    gamma = K * (1.0 if loss == "logistic" else check_positive("residual_clip", residual_clip))
    lam = _check_lam(c_lambda, n, d, s, p)
    sens = 2 * math.sqrt(m * beta_tilde * s) * gamma / (n * lam)
    sigma, how = calibrated_gaussian_sigma(p, sens, p.epsilon, p.delta / 2, m, "dpsl_kt_paper")
    rel = grid_release(
        "gaussian",
        f"gaussian ({how}) at (epsilon, delta/2)",
        sens,
        "l2",
        sigma,
        1,
        p.epsilon,
        p.delta / 2,
        coordinates=m,
        sampler=p.sampler,
    )
    assumption = (
        f"PRIVATE ONLY UNDER THE PAPER'S ASSUMPTIONS (Thm 4.3): the IGHT teacher taken as the exact "
        f"minimiser of the l0-constrained problem; ||X~ v||^2 <= m beta~ ||v||^2 for s-sparse v with "
        f"beta~ = {beta_tilde}; entries of x clipped to [-{K}, {K}], residual at the clip, gamma = "
        f"{gamma}; lambda = {lam:.6g}"
    )
    params = {
        "lambda": lam,
        "gamma": gamma,
        "beta_tilde": beta_tilde,
        "m": m,
        "printed sigma": classic_gaussian_sigma(sens, p.epsilon, p.delta / 2),
    }
    why = (
        "private only under the paper's assumptions (Thm 4.3): its Delta is not a sensitivity bound for every "
        "input, so its release cannot be composed as a Gaussian of that sensitivity"
    )
    return PrivacyPlan(
        "dpsl_kt_paper",
        p.epsilon,
        p.delta,
        p.calibration,
        "one release (Thm 4.3)",
        assumption,
        (rel,),
        p.relation,
        params,
        proven=False,
        whole_mechanism=False,
        whole_mechanism_why=why,
    )


def ight_teacher(
    X, y, *, loss: str, s: int, lam: float, K: float, residual_clip: float, eta1: float, T1: int
) -> np.ndarray:
    """The paper's teacher: IGHT (Alg. 2) on L_S + λ‖·‖²/2, ‖θ‖₀ ≤ s, entries clipped to K; for the squared loss
    the residual clipped at c_r (Huber), which makes γ = K·c_r a bound on ‖∇ℓ_i‖∞ at every θ. The ridge term is
    taken by its proximal map, θ ← H_s((θ − η₁∇L_S(θ))/(1 + η₁λ)): the fixed points of Alg. 2's gradient step on
    L_S + λ‖·‖²/2, without its divergence when η₁λ > 2."""
    Xc = clip_entries(X, K)
    n, theta = Xc.shape[0], np.zeros(Xc.shape[1])
    for _ in range(check_count("T1", T1)):
        u = predictor(Xc, theta)
        r = np.clip(u - y, -residual_clip, residual_clip) if loss == "squared" else residual("logistic", u, y)
        # the ridge by its proximal map: stable at every eta1*lam, with the fixed points of Alg. 2's step on F
        theta, _ = hard_threshold((theta - eta1 * np.asarray(Xc.T @ r) / n) / (1 + eta1 * lam), s)
    return theta


def dpsl_kt_paper(
    X,
    y,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    s: int,
    loss: str = "squared",
    X_public,
    c_lambda: float,
    K: float = 1.0,
    residual_clip: float = 1.0,
    beta_tilde: float,
    eta1: float = 1.0,
    T1: int = 100,
    eta2: float = 1.0,
    T2: int = 100,
) -> np.ndarray:
    """DPSL-KT, Wang & Gu (2020) Algorithm 1 with the noise of Thm 4.3 — PRIVATE ONLY UNDER THE PAPER'S ASSUMPTIONS
    (module docstring): every call warns (PRIVACY WARNING) and the plan is ``proven=False``.

    Teacher: IGHT on the private data (:func:`ight_teacher`), λ = c_λ√(s log d log(1/δ))/(nε). Release ỹ = X̃θ̂ + ξ
    with σ of :func:`dpsl_kt_paper_plan`. Student: IGHT on (X̃, ỹ), squared loss. Returns θ^p."""
    loss = check_loss(loss)
    X, y = as_design(X, y, loss)
    n, d = X.shape
    Xp = _public(X_public, d)
    plan = dpsl_kt_paper_plan(
        privacy,
        n,
        d,
        s=s,
        loss=loss,
        X_public=Xp,
        c_lambda=c_lambda,
        K=K,
        residual_clip=residual_clip,
        beta_tilde=beta_tilde,
    )
    warnings.warn("PRIVACY WARNING: " + PAPER_GAP, RuntimeWarning, stacklevel=2)
    c_r = 1.0 if loss == "logistic" else residual_clip
    theta = ight_teacher(
        X,
        y,
        loss=loss,
        s=check_s(s, d),
        lam=plan.parameters["lambda"],
        K=K,
        residual_clip=c_r,
        eta1=check_positive("eta1", eta1),
        T1=T1,
    )
    noise = draw("gaussian", plan.releases[0].noise_scale, Xp.shape[0], rng, privacy.sampler)
    y_priv = noise.add(np.asarray(predictor(Xp, theta)))
    return _student(Xp, y_priv, s, check_positive("eta2", eta2), check_count("T2", T2))
