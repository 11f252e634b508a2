"""Sparse linear regression — Cai, Wang & Zhang, *The Cost of Privacy* (Ann. Statist. 2021), Algorithm 4.2 (private
iterative hard thresholding) with its non-private counterpart, and the comparator the paper names, the private
Frank-Wolfe LASSO of Talwar, Thakurta & Zhang (NeurIPS 2015), Algorithm 2: the algorithms, their replace-one
sensitivities and their privacy plans.

Neighbouring relation throughout: *replace one record* (one row of (X, y)), with n public. Every private estimator
clips the design coordinate-wise and truncates y to [−R, R] inside the function (:func:`clip_design_linf`): that,
and the constraint set the iterates live in, is what bounds the sensitivities, whatever the data.

Memory: X (n × d, d up to 8,000) is never copied more than once — not at all when it is float64 and already inside
the clipping bounds — and no d × d matrix is formed: one step costs one product X'r, with Xβ formed from the ≤ s
(IHT) or ≤ T (Frank-Wolfe) columns of the current support.
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import replace

import numpy as np

from ..dp.accountant import dpa, rdp_epsilon
from ..dp.mechanisms import check_positive, check_sensitivity
from ..dp.plan import PrivacyPlan, Release
from ..dp.privacy import Privacy
from ..dp.samplers import draw
from ..errors import PrivacyError
from .base import beyond, check_count, check_design, check_s, frozen, issparse, project_l2_ball, require_replace
from .frank_wolfe import FRANK_WOLFE_WHY, vertex_selections
from .losses import as_design, check_loss, clip_entries, gradient, gram_columns, residual
from .sparse_mean import hard_threshold, peel_from_noise, peeling_plan, peeling_releases

# ---------------------------------------------------------------------------------------------------------------
# Shared: clipping and the gradient step
# ---------------------------------------------------------------------------------------------------------------


def clip_design_linf(X: np.ndarray, y: np.ndarray, x_bound: float, R: float | None) -> tuple[np.ndarray, np.ndarray]:
    """Every coordinate of X clipped to [−x_bound, x_bound] and y to [−R, R] (R None: y unchanged).

    Public bounds only. X is returned itself, not copied, when no coordinate lies outside the bound (the result is
    the same either way); otherwise one clipped copy is made. The caller must not modify the result in place.
    """
    if beyond(X, x_bound):
        X = np.clip(X, -x_bound, x_bound)
    return X, (y if R is None else np.clip(y, -R, R))


def gradient_step(X: np.ndarray, y: np.ndarray, beta: np.ndarray, eta0: float, mean=None) -> np.ndarray:
    """β − (η⁰/n) Σ_i (m(x_i'β) − y_i) x_i, with Xβ formed from the columns of β's support only (one full X'r
    product). ``mean`` is m, the map from linear predictor to fitted mean (a GLM's ψ′, clipped; None: the identity,
    least squares)."""
    n = X.shape[0]
    support = np.flatnonzero(beta)
    fit = X[:, support] @ beta[support] if support.size else np.zeros(n)
    return beta - (eta0 / n) * (X.T @ ((fit if mean is None else mean(fit)) - y))


# ---------------------------------------------------------------------------------------------------------------
# Noisy IHT, shared by Alg. 4.2 (below) and the sparse GLM (Score Attack Alg. 5, :mod:`.glm`): loop and calibration
# ---------------------------------------------------------------------------------------------------------------


def iht_loop(step, d: int, *, s: int, T: int, project=None) -> tuple[np.ndarray, np.ndarray]:
    """Non-private IHT: β⁰ = 0, T times β ← project(P_s(step(β))) with P_s = :func:`hard_threshold` (``project``
    None: no projection). Returns (β^T, its support by decreasing |β^{T−0.5}_j|)."""
    beta, idx = np.zeros(d), np.zeros(0, dtype=np.int64)
    for _ in range(T):
        beta, idx = hard_threshold(step(beta), s)
        if project is not None:
            beta = project(beta)
    return beta, idx


def noisy_iht(step, d: int, *, s: int, T: int, b: float, rng: np.random.Generator, sampler: str, project=None):
    """NoisyIHT: β⁰ = 0, T times β ← project(Peeling(step(β), s)) with Peeling at Laplace scale b (fresh selection
    noise W (s × d) and release noise W̃ (s) every step, drawn in that order; ``project`` None: none).
    ``step(β)`` is the gradient step β^{t+0.5}; its ℓ∞ sensitivity is the caller's to bound and to pass to
    :func:`noisy_iht_releases`. Returns (β^T, the support chosen by the last Peeling, in selection order)."""
    beta = np.zeros(d)
    chosen = np.zeros(0, dtype=np.int64)
    for _ in range(T):
        v = step(beta)
        W = draw("laplace", b, (1, s, d), rng, sampler)
        W_tilde = draw("laplace", b, (1, s), rng, sampler)
        est, picked = peel_from_noise(v[None], W, W_tilde)
        beta, chosen = (est[0] if project is None else project(est[0])), picked[0]
    return beta, chosen


def check_s_max(s: int, s_max: int | None) -> int:
    """The number of selections each Peeling is calibrated for: s_max ≥ s (None: s)."""
    k = s if s_max is None else s_max
    if not (isinstance(k, (int, np.integer)) and s <= k):
        raise PrivacyError(f"s_max must be an integer >= s = {s}, got {s_max!r}")
    return k


def check_B(B, B_min: float, B_printed: float, bound: str) -> float:
    """The paper's noise scale B (None: the printed ``B_printed``), refused unless a finite number ≥ ``B_min``, the
    value (formula ``bound``) at which λ = η⁰B/n covers the true sensitivity."""
    B = B_printed if B is None else B
    if not (isinstance(B, numbers.Real) and not isinstance(B, bool) and math.isfinite(B) and B >= B_min * (1 - 1e-12)):
        raise PrivacyError(f"noise scale B={B!r} is below the replace-one sensitivity bound {bound} = {B_min}")
    return B


@functools.lru_cache(maxsize=1024)
def _peeling_epsilon(k: int, scale: float, delta: float) -> float:
    """ε at δ that the better of basic composition and RDP accounting certifies for k report-noisy-max selections
    and k Laplace releases at Laplace scale ``scale`` per unit of sensitivity (as :func:`peeling_scale_tight`)."""
    lib = dpa()[0]
    events = [
        lib.SelfComposedDpEvent(lib.ZCDpEvent((2 / scale) ** 2 / 2), k),
        lib.SelfComposedDpEvent(lib.LaplaceDpEvent(scale), k),
    ]
    return min(3 * k / scale, rdp_epsilon(events, delta))


def noisy_iht_releases(
    p: Privacy, *, s: int, k: int, T: int, sens: float, lam_paper: float, B: float, printed: str, lemma: str
) -> tuple[tuple[Release, Release], str, float, float]:
    """The releases of T Peeling steps of s selections (noise calibrated for k ≥ s) on gradient steps of true ℓ∞
    sensitivity ``sens``; p at a numeric δ. Returns (releases, composition, λ, continuous Laplace scale b₀).

    paper: Peeling(·, s, ε/T, δ/T, λ = ``lam_paper`` = η⁰B/n) as printed, Laplace scale λ·2√(3k log(T/δ))/(ε/T);
           basic composition over T steps. ``lemma`` (the Peeling lemma) is the only proof of that scale: where
           neither basic composition nor RDP accounting certifies a step at (ε/T, δ/T) (B near its minimum, ε/T
           large), refused or warned (``on_invalid``), naming ``printed``.
    tight: one Laplace scale for all T·s selections and T·s releases at λ = ``sens``, the smallest that the better
           of basic composition and RDP accounting allows at the total (ε, δ) (:func:`peeling_scale_tight` with T·s
           steps; adaptive composition, so the same bound as one Peeling of T·s coordinates).
    """
    epsilon, delta = p.epsilon, p.delta
    if p.calibration == "paper":
        lam = lam_paper
        step = peeling_plan(replace(p, epsilon=epsilon / T, delta=delta / T), s=s, lam=lam, s_max=k)
        comp = f"basic composition of {T} Peeling steps at (eps/T, delta/T), each by {lemma}"
        b_step = 2 * lam / step.releases[0].epsilon
        certified = _peeling_epsilon(int(k), b_step / sens, delta / T)
        if certified > epsilon / T * (1 + 1e-9):
            p.outside_validity(
                f"{printed} at eps/T={epsilon / T:.4g} with B={B:.4g} is certified only for "
                f"eps/T={certified:.4g} by basic composition or RDP accounting ({lemma} alone claims it)"
            )
    else:
        lam = sens
        step = peeling_plan(p, s=T * s, lam=lam, s_max=T * k)
        comp = (
            f"{T * s} report-noisy-max selections and {T * s} Laplace releases ({T} Peeling steps of {s}): the "
            "better of basic composition and RDP accounting (dp-accounting)"
        )
    sel = step.releases[0]
    b, b0 = sel.noise_scale, 2 * lam / sel.epsilon  # grid scale; continuous scale (peeling_plan: ε_sel = 2λ/b0)
    return peeling_releases(sens, b, T * s, b0, p.sampler), comp, lam, b0


NOISY_IHT_WHY = "peeling's report-noisy-max selections are not additive-noise releases"


# ---------------------------------------------------------------------------------------------------------------
# Private iterative hard thresholding (004, Alg. 4.2)
# ---------------------------------------------------------------------------------------------------------------


def iht_coordinate_bound(c_x: float, s: int) -> float:
    """The coordinate clip of Alg. 4.2: (D1′) at |I| = s, √s‖x‖∞ ≤ c_x, i.e. ‖x‖∞ ≤ c_x/√s."""
    return c_x / math.sqrt(s)


def iht_step_sensitivity(*, R: float, C: float, c_x: float, eta0: float, n: int, s: int) -> float:
    """ℓ∞ sensitivity of the gradient step β^{t+0.5} of Alg. 4.2 under replace-one neighbours, given β^t.

    With every coordinate of x clipped to c_x/√s, |Π_R(y)| ≤ R and β^t s-sparse with ‖β^t‖₂ ≤ C (a Peeling output
    projected by Π_C; β⁰ = 0): |x'β^t| ≤ ‖x_{supp β^t}‖₂‖β^t‖₂ ≤ √s (c_x/√s) C = C c_x, so each record's term
    (x'β^t − Π_R(y))x has ℓ∞ norm ≤ (R + C c_x) c_x/√s, and replacing one record moves (η⁰/n)Σ_i of them by at most
    2η⁰(R + C c_x)c_x/(n√s) in every coordinate. Attained: β^t = (C/√s)·1_S, x = (c_x/√s)·1, y = −R against
    x′ = (c_x/√s)(1 − 2·1_S), y′ = R, at any coordinate outside S.
    """
    return 2 * eta0 * (R + C * c_x) * c_x / (n * math.sqrt(s))


def dp_iht_plan(
    privacy: Privacy,
    n: int,
    d: int,
    *,
    s: int,
    T: int,
    eta0: float,
    R: float,
    C: float,
    c_x: float,
    B: float | None,
    s_max: int | None = None,
) -> PrivacyPlan:
    """Alg. 4.2: T Peeling steps (s report-noisy-max selections and s Laplace releases each) on gradient steps of
    ℓ∞ sensitivity Δ = 2η⁰(R + C c_x)c_x/(n√s) (:func:`iht_step_sensitivity`; coordinates clipped to c_x/√s, y
    to [−R, R], iterates s-sparse in the ℓ2 ball of radius C).

    paper: Peeling(·, s, ε/T, δ/T, λ = η⁰B/n) as printed, B = 4(R + C c_x)c_x/√s by default (Lemma 4.4, twice the
           sensitivity bound, so λ = 2Δ), Laplace scale λ·2√(3s log(T/δ))/(ε/T); basic composition over T steps.
           Lemma 3.3 is the only proof of that scale: where neither basic composition nor RDP accounting certifies a
           step at (ε/T, δ/T) (only with B near its minimum and ε/T large), refused or warned (``on_invalid``).
    tight: one Laplace scale for all T·s selections and T·s releases at the true Δ, the smallest that the better of
           basic composition and RDP accounting allows at the total (ε, δ) (:func:`peeling_scale_tight` with T·s
           steps; adaptive composition, so the same bound as one Peeling of T·s coordinates). B is checked, not used.
    Both refuse B below 2(R + C c_x)c_x/√s, the bound that makes λ ≥ Δ. ``s_max`` (≥ s; None: s) calibrates
    every Peeling for s_max selections while s are made (set by a private selection of s, never by the config).
    """
    p = privacy.at(n)
    require_replace(p, "dp_iht", "the sensitivity is derived with n public")
    epsilon, delta = p.epsilon, p.delta
    n, T = check_count("n", n), check_count("T", T)
    s = check_s(s, d)
    k = check_s_max(s, s_max)
    R, C, c_x, eta0 = (check_positive(k, v) for k, v in (("R", R), ("C", C), ("c_x", c_x), ("eta0", eta0)))
    sens = iht_step_sensitivity(R=R, C=C, c_x=c_x, eta0=eta0, n=n, s=s)
    check_sensitivity(sens)  # a zero bound must never mean zero noise
    B_min = 2 * (R + C * c_x) * c_x / math.sqrt(s)
    B_printed = 4 * (R + C * c_x) * c_x / math.sqrt(s)
    B = check_B(B, B_min, B_printed, "2(R + C c_x)c_x/sqrt(s)")
    rels, comp, lam, b0 = noisy_iht_releases(
        p,
        s=s,
        k=k,
        T=T,
        sens=sens,
        lam_paper=eta0 * B / n,
        B=B,
        printed="Alg. 4.2's printed Peeling scale",
        lemma="Lemma 3.3",
    )
    assumption = (
        f"coordinates of x clipped to [-c_x/sqrt(s), c_x/sqrt(s)] = [-{c_x / math.sqrt(s):.6g}, "
        f"{c_x / math.sqrt(s):.6g}] ((D1') at |I| = s), y truncated to [-{R}, {R}], iterates s-sparse in "
        f"||b||_2 <= {C}"
    )
    params = {
        "B": B,
        "B printed (Lemma 4.4)": B_printed,
        "lambda": lam,
        "true sensitivity / lambda": sens / lam,
        "coordinate clip c_x/sqrt(s)": c_x / math.sqrt(s),
        "Laplace scale per unit lambda": b0 / lam,
    }
    return PrivacyPlan(
        "dp_iht",
        epsilon,
        delta,
        p.calibration,
        comp,
        assumption,
        rels,
        p.relation,
        params,
        whole_mechanism=False,
        whole_mechanism_why=NOISY_IHT_WHY,
    )


def dp_iht(
    X,
    y,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    s: int,
    T: int,
    eta0: float,
    R: float,
    C: float,
    c_x: float,
    B: float | None = None,
    s_max: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """DP sparse linear regression by private iterative hard thresholding — Cai, Wang & Zhang (2021), Algorithm 4.2.

    β⁰ = 0; for t < T: β^{t+0.5} = β^t − (η⁰/n) Σ_i (x_i'β^t − Π_R(y_i)) x_i;
    β^{t+1} = Π_C(Peeling(β^{t+0.5}, s, λ)) with Peeling = Alg. 3.2 (:mod:`dpcost.estimators.sparse_mean`) and
    Π_C the projection on the ℓ2 ball of radius C. Noise scale from :func:`dp_iht_plan`.

    Privacy: (ε, δ)-DP under replace-one neighbours. Sensitivity of each gradient step (given the released β^t)
    in ℓ∞: Δ = 2η⁰(R + C c_x)c_x/(n√s) (:func:`iht_step_sensitivity`). Lemma 4.4 assumes (D1′),
    √|I|·‖x_I‖∞ < c_x for every index set I of size o(n), and (P1′) on the true β; only |I| = s is used, i.e.
    ‖x‖∞ < c_x/√s, and what bounds β^t is Π_C, not (P1′) (so C plays the role of c₀). Here every coordinate of x
    is *clipped* to [−c_x/√s, c_x/√s] and y to [−R, R] inside the function, so the guarantee holds for every input.
    Note the scaling: c_x is the (D1′) constant, not an ℓ∞ bound — for x with entries in [−a, a], c_x = a√s clips
    nothing. Calibration "paper": Peeling at (ε/T, δ/T) with λ = η⁰B/n, B default 4(R + C c_x)c_x/√s as printed
    (enough: λ = 2Δ), basic composition; "tight": λ = Δ and RDP accounting of all T·s selections and releases.

    Parameters: s sparsity, T iterations, η⁰ step size, R truncation of y, C feasibility radius, c_x the (D1′)
    design bound, B the paper's noise scale (≥ 2(R + C c_x)c_x/√s, else refused); s_max ≥ s, the selections the
    noise is calibrated for (:func:`dp_iht_plan`; None: s).
    Returns (β^T, the support selected by the last Peeling, in selection order).
    """
    X, y = check_design(X, y)
    n, d = X.shape
    plan = dp_iht_plan(privacy, n, d, s=s, T=T, eta0=eta0, R=R, C=C, c_x=c_x, B=B, s_max=s_max)
    s, T = check_s(s, d), check_count("T", T)
    b = plan.releases[0].noise_scale
    Xc, yt = clip_design_linf(X, y, iht_coordinate_bound(c_x, s), R)
    step = lambda beta: gradient_step(Xc, yt, beta, eta0)  # noqa: E731
    project = lambda beta: project_l2_ball(beta, C)  # noqa: E731
    return noisy_iht(step, d, s=s, T=T, b=b, rng=rng, sampler=privacy.sampler, project=project)


def iht(X, y, *, s: int, loss: str = "squared", T: int, eta0: float, R: float | None = None, C: float | None = None):
    """Iterative hard thresholding (Blumensath & Davies 2009) — the non-private Alg. 4.2: the same loop with Peeling
    replaced by keeping the s largest |coordinates| (ties: lowest index). R truncates y (None: no truncation), C
    projects on the ℓ2 ball (None: no projection). With ``loss="logistic"`` (y in {0, 1}) it is IGHT, Wang & Gu
    (2020) Alg. 2, on the logistic loss. X may be ``scipy.sparse``. Returns (β^T, its support indices by decreasing
    |β^{T−0.5}_j|)."""
    X, y = as_design(X, y, check_loss(loss))
    n, d = X.shape
    s, T = check_s(s, d), check_count("T", T)
    eta0 = check_positive("eta0", eta0)
    if R is not None:
        y = np.clip(y, -check_positive("R", R), R)
    project = None if C is None else functools.partial(project_l2_ball, C=check_positive("C", C))
    return iht_loop(lambda beta: beta - eta0 * gradient(loss, X, y, beta), d, s=s, T=T, project=project)


# ---------------------------------------------------------------------------------------------------------------
# Private Frank-Wolfe LASSO (Talwar, Thakurta & Zhang 2015, Alg. 2)
# ---------------------------------------------------------------------------------------------------------------


def frank_wolfe_regression_sensitivity(*, R: float, radius: float, c_x: float, n: int, loss: str = "squared") -> float:
    """Replace-one sensitivity of each vertex score ⟨±radius·e_j, ∇L(θ)⟩, L(θ) = (1/2n)Σ_i (x_i'θ − Π_R(y_i))².
    Logistic loss (y in {0, 1}): the residual σ(x'θ) − y lies in (−1, 1), so it is radius·2c_x/n, whatever R.

    With ‖x‖∞ ≤ c_x, |Π_R(y)| ≤ R and ‖θ‖₁ ≤ radius: |x'θ − Π_R(y)| ≤ c_x·radius + R, so ∂_j of one record's loss
    is at most (R + radius·c_x)c_x in absolute value and replacing one record moves ∇_j L by at most
    2(R + radius·c_x)c_x/n, the score by radius times that. Attained: θ = radius·e_k, x = c_x·1, y = −R against
    x′ = c_x(1 − 2e_k), y′ = R, at any j ≠ k.
    """
    rho = 1.0 if check_loss(loss) == "logistic" else R + radius * c_x
    return radius * 2 * rho * c_x / n


def vertex_scores(X: np.ndarray, y: np.ndarray, fit: np.ndarray, radius: float, loss: str = "squared") -> np.ndarray:
    """The scores ⟨v, ∇L(θ)⟩ of the 2d vertices v = +radius·e_j (first d) and −radius·e_j (last d), for
    L(θ) = (1/2n)‖Xθ − y‖² (or the logistic loss) and ``fit`` = Xθ: ∇L(θ) = X'(residual)/n."""
    grad = np.asarray(X.T @ residual(loss, fit, y)) / X.shape[0]
    return np.concatenate([radius * grad, -radius * grad])


def frank_wolfe_regression_plan(
    privacy: Privacy, n: int, d: int, *, radius: float, T: int, c_x: float, R: float, loss: str = "squared"
) -> PrivacyPlan:
    """T report-noisy-min selections over the 2d vertices ±radius·e_j of the ℓ1 ball, score sensitivity
    Δ = radius·2(R + radius·c_x)c_x/n (:func:`frank_wolfe_regression_sensitivity`), Laplace(2Δ/ε₀) noise, each
    selection ε₀-DP. paper: ε₀ by advanced composition. tight: ε₀ by the better of basic composition and zCDP/RDP
    accounting (dp-accounting)."""
    p = privacy.at(n)
    require_replace(p, "frank_wolfe_lasso", "the sensitivity is derived with n public")
    epsilon, delta = p.epsilon, p.delta
    n, T = check_count("n", n), check_count("T", T)
    check_count("d", d)
    R, radius, c_x = (check_positive(k, v) for k, v in (("R", R), ("radius", radius), ("c_x", c_x)))
    sens = frank_wolfe_regression_sensitivity(R=R, radius=radius, c_x=c_x, n=n, loss=loss)
    rel, comp = vertex_selections(p, sens, T)
    on_y = "logistic loss, y in {0, 1}" if loss == "logistic" else f"y truncated to [-{R}, {R}]"
    assumption = f"coordinates of x clipped to [-{c_x}, {c_x}], {on_y}, estimate in the l1 ball of radius {radius}"
    return PrivacyPlan(
        "frank_wolfe_lasso",
        epsilon,
        delta,
        p.calibration,
        comp,
        assumption,
        (rel,),
        p.relation,
        whole_mechanism=False,
        whole_mechanism_why=FRANK_WOLFE_WHY,
    )


def private_frank_wolfe_regression(
    X,
    y,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    radius: float,
    T: int,
    c_x: float,
    R: float,
    loss: str = "squared",
) -> np.ndarray:
    """Private Frank-Wolfe LASSO — Talwar, Thakurta & Zhang (2015), Algorithm 2 (A_Noise-FW, polytope case), for
    least squares over the ℓ1 ball of the given radius.

    Loss L(θ) = (1/2n) Σ_i (x_i'θ − Π_R(y_i))², ∇L(θ) = (1/n) X'(Xθ − Π_R(y)); constraint set {‖θ‖₁ ≤ radius}, the
    convex hull of the 2d vertices ±radius·e_j. θ₁ = 0; for t = 1 … T: α_v = ⟨v, ∇L(θ_t)⟩ + Laplace(b) for every
    vertex v, θ̃_t = argmin α_v (exact grid noise, ties to the lowest index), θ_{t+1} = (1 − μ_t)θ_t + μ_t θ̃_t with
    μ_t = 2/(t + 2). Returns θ_{T+1}, which has at most T nonzero coordinates.

    Privacy: (ε, δ)-DP under replace-one neighbours. Each score has replace-one sensitivity
    Δ = radius·2(R + radius·c_x)c_x/n (:func:`frank_wolfe_regression_sensitivity`), which needs ‖x‖∞ ≤ c_x (TTZ's
    bounded-ℓ∞ design), |y| ≤ R and θ_t in the ℓ1 ball; the first two are *enforced* here by clipping every
    coordinate of x to [−c_x, c_x] and y to [−R, R], the third holds by construction. So each report-noisy-min with
    Laplace(2Δ/ε₀) is ε₀-DP, and T of them compose to (ε, δ): ε₀ by advanced composition ("paper") or by zCDP/RDP
    accounting ("tight"), :func:`frank_wolfe_regression_plan`. TTZ print b = L₁‖C‖₁√(8T log(1/δ))/(nε) (L₁ the
    ℓ∞ bound of one record's gradient) without fixing the neighbour relation: advanced composition certifies about
    ε at that scale for a score sensitivity of L₁‖C‖₁/n, but only about 2ε for the replace-one 2L₁‖C‖₁/n; hence the
    package's own calibration, as in :func:`~dpcost.estimators.frank_wolfe.private_frank_wolfe_mean`.
    The ½ in L does not matter: the score sensitivity and the noise scale with it alike. Only the selections touch
    the data; θ is post-processing. ``loss="logistic"`` (y in {0, 1}): the same on the logistic loss, score
    sensitivity radius·2c_x/n; X may be ``scipy.sparse`` (the columns added are read one at a time).
    """
    X, y = as_design(X, y, check_loss(loss))
    n, d = X.shape
    b = frank_wolfe_regression_plan(privacy, n, d, radius=radius, T=T, c_x=c_x, R=R, loss=loss).releases[0].noise_scale
    T = check_count("T", T)
    Xc, yt = clip_entries(X, c_x), (y if loss == "logistic" else np.clip(y, -R, R))
    if issparse(Xc):
        Xc = Xc.tocsc()  # column reads below
    noise = draw("laplace", b, (T, 2 * d), rng, privacy.sampler)
    theta = np.zeros(d)
    # fit: X θ_t, kept up to date from the one column each step adds. Least squares on a frozen X: X'Xθ_t instead,
    # from the Gram column of that coordinate (cached per X, shared by Figure 5's five ε, which pick the same few
    # coordinates), not one pass over X a step; the scores agree to round-off and are released on the noise's grid
    Xty = Xc.T @ yt if loss == "squared" and frozen(Xc) else None
    fit = np.zeros(n if Xty is None else d)
    for t in range(1, T + 1):
        # noisy scores on the grid, ties to the lowest index (still ε₀-DP)
        scores = vertex_scores(Xc, yt, fit, radius, loss) if Xty is None else _gram_scores(fit, Xty, radius, n)
        k = int(np.argmin(noise[t - 1].add(scores)))
        j, sign = k % d, (1.0 if k < d else -1.0)
        mu = 2 / (t + 2)
        theta *= 1 - mu
        theta[j] += mu * sign * radius
        fit *= 1 - mu
        if Xty is not None:  # fit holds X'Xθ here
            fit += (mu * sign * radius) * gram_columns(Xc, [j])[:, 0]
        else:
            fit += (mu * sign * radius) * (Xc[:, [j]].toarray().ravel() if issparse(Xc) else Xc[:, j])
    return theta


def _gram_scores(gram_fit: np.ndarray, Xty: np.ndarray, radius: float, n: int) -> np.ndarray:
    """:func:`vertex_scores` of the squared loss from X'Xθ and X'y: ∇L(θ) = (X'Xθ − X'y)/n."""
    grad = (gram_fit - Xty) / n
    return np.concatenate([radius * grad, -radius * grad])
