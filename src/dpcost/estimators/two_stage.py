"""Two-stage private sparse regression — Kifer, Smith & Thakurta (COLT 2012), "Private convex empirical risk
minimization and high-dimensional regression", §§4–5: a private support selection of size s, then objective
perturbation (their Algorithm 1, Gaussian version, Theorem 2) on the selected coordinates. It is the "Two Stage"
baseline of Wang & Gu (AAAI 2020, Table 1 and §5), who tune "the regularization parameter in the objective
function" as c3·s/ε, c3 ∈ {10⁻³, …, 10²}.

**What is KST's and what is not.** Only the abstract of KST 2012 was available here (not its algorithms), so
stage 1 is NOT their selection procedure but the subsample-and-aggregate variant of it (subsampling stability,
Smith & Thakurta 2013): the n rows are cut, by a permutation drawn from ``rng`` independently of the data, into k =
``blocks`` disjoint blocks; on each block a non-private IGHT fit (:func:`~.losses.ight`, ``block_iters``
iterations from 0, step 1/(c2 λ̂), λ̂ the power-iteration estimate of λ_max(X_b'X_b/n_b)) votes for the ≤ s
coordinates of its support; the vote counts c ∈ {0, …, k}^d are released once with Gaussian noise and the support
is the s largest noisy counts (post-processing). Stage 2 is KST's Algorithm 1 as in :mod:`.objpert`.

**Guarantee.** (ε, δ)-DP under replace-one neighbours (n public), by basic composition of stage 1 at
(ε1, δ1) = (share·ε, share·δ) and stage 2 at (ε2, δ2) = ((1 − share)ε, (1 − share)δ); ``share`` defaults to 1/2.
Add/remove neighbours are refused (the blocks are positional).

* Stage 1 sensitivity: replacing one record changes one block, whose vote vector v ∈ {0, 1}^d (≤ s ones) becomes
  another: ‖c − c′‖₂ ≤ √(2s) (‖·‖∞ ≤ 1), attained when the block's votes move to a disjoint set. No bound on the
  data is needed: whatever the block fit does, it casts at most s votes. Noise: paper: the classic Gaussian
  σ1 = √(2s)·√(2 log(1.25/δ1))/ε1 (proven for ε1 < 1; outside: refused or warned); tight: the analytic Gaussian.
  Why not report-noisy-max peeling on c (ℓ∞ sensitivity 1): s selections of Laplace(2/ε0) noise, ε0 from zCDP
  composition, have a noise sd about 2.2 times the Gaussian's here (531 against 246 at s = 2,000, ε1 = 1,
  δ1 = 5·10⁻⁶, both tight), and need s·d draws (5·10⁷ at d = 25,000: ~30 s with the exact sampler), not d.
* Stage 2 (KST Thm 2 as :func:`~.objpert.objpert_plan` states it; not re-checked against KST's text):
  θ̃ = argmin_{θ∈Θ} Σ_i ℓ(x_{iS}'θ, y_i) + (Δ/2)‖θ‖² + b'θ, b ~ N(0, σ2² I_s), σ2 = ζ√(8 log(2/δ2) + 4ε2)/ε2,
  Δ ≥ 2λ_H/ε2. Assumptions and how they are enforced: each row restricted to S is clipped to ‖x_S‖₂ ≤ B_X (S is
  public once released); ℓ is convex with a rank-one Hessian of eigenvalue ≤ λ_H = c2·B_X² (c2 = 1 squared, 1/4
  logistic); ‖∇ℓ‖₂ ≤ ζ on Θ: squared loss ½(u − y)², y clipped to [−B_Y, B_Y], Θ = {‖θ‖₂ ≤ C}: ζ = B_X(B_X C +
  B_Y); logistic log(1 + e^u) − yu, y in {0, 1} checked (DataError), Θ = ℝ^s: ζ = B_X. Ridge Δ: ``c3`` None gives
  KST's minimum 2λ_H/ε2; else Wang & Gu's Δ = c3·s/ε (total ε), refused below 2λ_H/ε2 (paper: or warned,
  ``on_invalid``, and the plan marked not proven).

**Known gap (floating point).** b is drawn with the exact discrete Gaussian (:func:`~dpcost.dp.samplers.draw`) on
a grid of σ2/2²⁰. KST's proof is for a continuous b in exact arithmetic, and b enters an argmin, not a rounded
release: from θ̃ and D one can recompute b_D(θ̃) = −∇[Σℓ + Δ‖·‖²/2](θ̃) (up to the solver's accuracy, better than
the grid step) and test whether it lies on the grid, which b_{D′}(θ̃) in general does not. No rounding of θ̃ is
known to close this; :mod:`.objpert` (numpy's normal) shares the question. Nor is the solver's tolerance accounted
for (KST analyse the exact minimiser; so does :mod:`.objpert`). Stated in every plan.

Memory and time: X may be dense or CSR and is never densified or copied whole (blocks are sliced one at a time);
stage 2 forms the n × s submatrix (sparse stays sparse; a dense X gives a dense n × s copy, 128 MB at n = 8,000,
s = 2,000) and one dense s × s matrix (32 MB), eigendecomposed (squared) or Cholesky-factored per Newton step
(logistic).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from scipy import linalg, sparse, special

from ..dp.mechanisms import check_positive, classic_gaussian_sigma, gaussian_sigma
from ..dp.plan import PrivacyPlan, Release
from ..dp.samplers import describe, draw, grid_scale
from ..dp.spec import Privacy
from ..errors import PrivacyError
from .base import check_count, check_s, require_replace, ridge_in_ball
from .losses import as_design, check_loss, clip_rows_l2, gradient_bound, ight
from .objpert import objpert_plan

CURVATURE = {"squared": 1.0, "logistic": 0.25}  # c2: sup of ℓ'' in the linear predictor
POWER_ITERS = 20
NEWTON_TOL = 1e-10  # stage 2 (logistic): stop at ‖∇F‖₂ ≤ NEWTON_TOL·(n·B_X + ‖b‖₂ + 1)
NEWTON_MAX = 100

# ---------------------------------------------------------------------------------------------------------------
# The plan
# ---------------------------------------------------------------------------------------------------------------


def count_sensitivity(s: int) -> float:
    """ℓ2 replace-one sensitivity of the vote counts: one block's ≤ s votes move, ‖c − c′‖₂ ≤ √(2s)."""
    return math.sqrt(2 * s)


def _check_tuning(n, d, s, loss, blocks, block_iters, share, B_X, B_Y, C, c3):
    check_loss(loss)
    s = check_s(s, d)
    blocks = check_count("blocks", blocks)
    if blocks > n:
        raise PrivacyError(f"blocks={blocks} exceeds n={n}: every block needs at least one row")
    check_count("block_iters", block_iters)
    if not (isinstance(share, numbers.Real) and not isinstance(share, bool) and 0 < share < 1):
        raise PrivacyError(f"share (stage 1's part of the budget) must lie strictly between 0 and 1, got {share!r}")
    check_positive("B_X", B_X)
    if loss == "squared":
        if B_Y is None or C is None:
            raise PrivacyError("the squared loss needs public bounds B_Y on |y| and C on ||theta||_2 (stage 2)")
        check_positive("B_Y", B_Y)
        check_positive("C", C)
    elif B_Y is not None or C is not None:
        raise PrivacyError("B_Y and C are the squared loss's bounds; the logistic loss takes neither (set them None)")
    if c3 is not None:
        check_positive("c3", c3)
    return s, blocks


def two_stage_plan(privacy: Privacy, n: int, d: int, *, s: int, loss: str = "squared", blocks: int = 50,
                   block_iters: int = 10, share: float = 0.5, B_X: float = 1.0, B_Y: float | None = None,
                   C: float | None = None, c3: float | None = None) -> PrivacyPlan:  # fmt: skip
    """Two releases, composed by basic composition (tuning as :func:`two_stage`, which holds the defaults):

    1. the k-block vote counts + N(0, σ1² I_d), ℓ2 sensitivity √(2s) (:func:`count_sensitivity`), at (ε1, δ1) =
       share·(ε, δ). paper: σ1 = √(2s)√(2 log(1.25/δ1))/ε1, ε1 < 1 (else refused/warned); tight: analytic Gaussian.
    2. KST's b at (ε2, δ2) = (1 − share)(ε, δ), both calibrations: σ2 = ζ√(8 log(2/δ2) + 4ε2)/ε2 (the multiplier of
       :func:`~.objpert.objpert_plan`), ζ = :func:`~.losses.gradient_bound` (B_X(B_X C + B_Y) or B_X); ridge
       Δ = 2 c2 B_X²/ε2, or c3·s/ε if given (refused below that minimum; paper: or warned, ``proven=False``).
    """
    p = privacy.at(n)
    require_replace(p, "two_stage", "its blocks are positional and n is public")
    s, k = _check_tuning(n, d, s, loss, blocks, block_iters, share, B_X, B_Y, C, c3)
    eps, delta = p.epsilon, p.delta
    e1, d1, e2, d2 = share * eps, share * delta, (1 - share) * eps, (1 - share) * delta
    sens1 = count_sensitivity(s)
    if p.calibration == "paper":
        if e1 >= 1:
            p.outside_validity(f"stage 1's classic Gaussian needs epsilon1 = share * epsilon < 1, got {e1:.4g}")
        sigma1, how1 = classic_gaussian_sigma(sens1, e1, d1), "classic Gaussian (Dwork & Roth Thm A.1)"
    else:
        sigma1, how1 = gaussian_sigma(sens1, e1, d1, "analytic"), "analytic Gaussian (Balle & Wang 2018)"
    sigma1 = grid_scale(sigma1, sens1, d, "l2", "gaussian", p.sampler)
    # KST Thm 2 through objpert_plan: its noise multiplier sigma/zeta and ridge/lambda_H do not depend on B_Y or C
    kst = objpert_plan(Privacy(e2, d2, p.calibration, p.on_invalid, sampler=p.sampler), n, s, B_X=B_X,
                       B_Y=B_Y or 1.0, C=C or 1.0)  # fmt: skip
    zeta = float(gradient_bound(loss, c_x=B_X, B_y=B_Y, radius=None if C is None else B_X * C))
    sigma2 = float(zeta * kst.releases[0].noise_scale / kst.parameters["zeta"])
    lam_h = float(CURVATURE[loss] * B_X**2)
    ridge_min = float(kst.parameters["Delta"] * CURVATURE[loss])  # 2 λ_H / ε2
    ridge = ridge_min if c3 is None else float(c3 * s / eps)
    proven, gap = True, ""
    if ridge < ridge_min * (1 - 1e-12):
        gap = (f"ridge Delta = c3 s / epsilon = {ridge:.4g} is below KST's 2 lambda_H / epsilon2 = {ridge_min:.4g} "
               f"(c3 >= {ridge_min * eps / s:.4g} needed)")  # fmt: skip
        if p.calibration == "tight":
            raise PrivacyError(gap)
        p.outside_validity(gap)
        proven = False
    caveat = "b enters an argmin on the sampler's grid, not a rounded release (module docstring, known gap)"
    rels = (
        Release("gaussian: block vote counts (support = top s, post-processing)", sens1, "l2", sigma1, 1, e1, d1,
                describe("gaussian", d, "l2", p.sampler)),
        Release("gaussian: objective perturbation term b (KST Alg. 1)", 2 * zeta, "l2 (gradient)", sigma2, 1, e2, d2,
                describe("gaussian", 0, "l2", p.sampler) + "; " + caveat),
    )  # fmt: skip
    comp = f"basic composition: stage 1 {how1} at (share eps, share delta), stage 2 KST (2012) Theorem 2"
    bounds = f"y clipped to [-{B_Y}, {B_Y}], theta in ||theta||_2 <= {C}" if loss == "squared" else "y in {0, 1}"
    assumption = (
        f"{k} positional blocks (about {n // k} rows) from a data-independent permutation, each casting <= {s} "
        f"votes; rows restricted to the selected s coordinates clipped to ||x_S||_2 <= {B_X}; {bounds}"
    )
    if gap:
        assumption = "NOT PROVEN: " + gap + "; " + assumption
    params = {"blocks": k, "rows per block": n // k, "epsilon1": e1, "delta1": d1, "epsilon2": e2, "delta2": d2,
              "count sensitivity": sens1, "zeta": zeta, "lambda_H": lam_h, "Delta": ridge, "Delta minimum": ridge_min,
              "c3": c3, "floating point": caveat}  # fmt: skip
    return PrivacyPlan("two_stage", eps, delta, p.calibration, comp, assumption, rels, p.relation, params, proven)


# ---------------------------------------------------------------------------------------------------------------
# Stage 1: block votes and their release
# ---------------------------------------------------------------------------------------------------------------


def block_starts(n: int, blocks: int) -> np.ndarray:
    """Start positions of k = ``blocks`` consecutive blocks of sizes ⌊n/k⌋ or ⌈n/k⌉ (a public rule in n), and n."""
    sizes = np.full(blocks, n // blocks) + (np.arange(blocks) < n % blocks)
    return np.concatenate([[0], np.cumsum(sizes)])


def block_step(X, loss: str) -> float:
    """1/(c2 λ̂): λ̂ the largest eigenvalue of X'X/n_b by POWER_ITERS power iterations from the all-ones vector
    (deterministic); 1 when X is zero. Any value is private: it is computed inside the block."""
    v = np.ones(X.shape[1]) / math.sqrt(X.shape[1])
    lam = 0.0
    for _ in range(POWER_ITERS):
        w = np.asarray(X.T @ (X @ v)).ravel() / X.shape[0]
        lam = math.sqrt(_dot(w, w))
        if not lam > 0:
            return 1.0
        v = w / lam
    return 1.0 / (CURVATURE[loss] * lam)


def vote_counts(X, y, *, loss: str, s: int, blocks: int, block_iters: int, perm: np.ndarray) -> np.ndarray:
    """c_j = #{blocks whose non-private fit has j in its support}: rows perm[start_b : start_{b+1}] form block b, and
    its vote is the support (≤ s coordinates) of IGHT (:func:`~.losses.ight`, T = ``block_iters``, step
    :func:`block_step`) on them. Deterministic given ``perm``; int64 of length d."""
    counts = np.zeros(X.shape[1], dtype=np.int64)
    starts = block_starts(X.shape[0], blocks)
    for a, b in zip(starts[:-1], starts[1:], strict=True):
        rows = np.sort(perm[a:b])
        Xb, yb = X[rows], y[rows]
        theta = ight(Xb, yb, loss=loss, s=s, eta=block_step(Xb, loss), T=block_iters)
        counts[np.flatnonzero(theta)] += 1
    return counts


def release_counts(counts, sigma: float, rng: np.random.Generator, sampler: str = "exact", repeats: int = 1):
    """``repeats`` independent releases counts + N(0, σ² I) (exact discrete Gaussian on a grid): (repeats, d)."""
    counts = np.asarray(counts, dtype=float)
    return draw("gaussian", sigma, (repeats, counts.size), rng, sampler).add(counts)


def top_s(noisy: np.ndarray, s: int) -> np.ndarray:
    """The s largest noisy counts (ties: lowest index), as sorted indices."""
    return np.sort(np.argsort(-np.asarray(noisy), kind="stable")[:s])


# ---------------------------------------------------------------------------------------------------------------
# Stage 2: objective perturbation on the selected coordinates
# ---------------------------------------------------------------------------------------------------------------


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """a'b for vectors (einsum: numpy's multi-threaded BLAS dot takes milliseconds on short vectors here)."""
    return float(np.einsum("i,i", a, b))


def _gram(A, B) -> np.ndarray:
    """A'B as a dense array (A, B dense or sparse)."""
    G = A.T @ B
    return G.toarray() if sparse.issparse(G) else np.asarray(G)


def perturbed_argmin(Xs, y, *, loss: str, ridge: float, b: np.ndarray, C: float | None, B_X: float) -> np.ndarray:
    """argmin_Θ Σ_i ℓ(x_i'θ, y_i) + (ridge/2)‖θ‖² + b'θ on the (clipped) n × s design Xs.

    squared: Θ the C ball, ½θ'(Xs'Xs + ridge I)θ − (Xs'y − b)'θ: the unconstrained minimiser by Cholesky if it lies
    in the ball, else :func:`~.base.ridge_in_ball` (an eigendecomposition, several seconds at s = 2,000).
    logistic: Θ = ℝ^s, damped Newton (Cholesky of Xs'WXs + ridge I, backtracking) until ‖∇F‖₂ ≤
    NEWTON_TOL·(n B_X + ‖b‖₂ + 1); RuntimeError if NEWTON_MAX steps do not get there.
    """
    s = Xs.shape[1]
    if loss == "squared":
        H = _gram(Xs, Xs)
        H[np.diag_indices(s)] += ridge
        g = np.asarray(Xs.T @ y).ravel() - b
        theta = linalg.cho_solve(linalg.cho_factor(H), g)
        return theta if math.sqrt(_dot(theta, theta)) <= C else ridge_in_ball(H, g, C)

    def value(t):
        u = Xs @ t
        return float(np.sum(np.logaddexp(0.0, u) - y * u) + 0.5 * ridge * _dot(t, t) + _dot(b, t))

    theta, f = np.zeros(s), value(np.zeros(s))
    tol = NEWTON_TOL * (Xs.shape[0] * B_X + math.sqrt(_dot(b, b)) + 1)
    for _ in range(NEWTON_MAX):
        mu = special.expit(Xs @ theta)
        grad = np.asarray(Xs.T @ (mu - y)).ravel() + ridge * theta + b
        if math.sqrt(_dot(grad, grad)) <= tol:
            return theta
        w = mu * (1 - mu)
        WX = sparse.diags(w) @ Xs if sparse.issparse(Xs) else Xs * w[:, None]
        H = _gram(Xs, WX)
        H[np.diag_indices(s)] += ridge
        step = linalg.cho_solve(linalg.cho_factor(H), grad)
        t = 1.0
        while (f_new := value(theta - t * step)) > f - 1e-4 * t * _dot(grad, step) and t > 1e-10:
            t /= 2
        theta, f = theta - t * step, f_new
    raise RuntimeError(f"stage 2 (logistic objective perturbation): Newton did not converge in {NEWTON_MAX} steps")


# ---------------------------------------------------------------------------------------------------------------
# The estimator
# ---------------------------------------------------------------------------------------------------------------


def two_stage(
    X,
    y,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    s: int,
    loss: str = "squared",
    blocks: int = 50,  # k disjoint blocks voting on the support; n/k rows each
    block_iters: int = 10,  # IGHT iterations of each block's fit (1: top-s marginal screening)
    share: float = 0.5,  # stage 1's part of (ε, δ)
    B_X: float = 1.0,  # public bound on ‖x_S‖₂ (rows restricted to the selected coordinates are clipped to it)
    B_Y: float | None = None,  # squared loss: public bound on |y| (clipped); required there
    C: float | None = None,  # squared loss: θ in the ball ‖θ‖₂ ≤ C; required there
    c3: float | None = None,  # Wang & Gu's ridge Δ = c3·s/ε; None: KST's minimum 2 c2 B_X²/ε2
) -> np.ndarray:
    """Two-stage private sparse regression — Kifer, Smith & Thakurta (2012), stage 1 in the subsample-and-aggregate
    variant (module docstring, which states what is and is not KST's).

    1. perm = rng.permutation(n); c = :func:`vote_counts`; ĉ = c + N(0, σ1² I_d); S = the s largest ĉ_j.
    2. θ̃_S = :func:`perturbed_argmin` on X_S (rows clipped to ‖x_S‖₂ ≤ B_X; squared: y clipped to [−B_Y, B_Y])
       with b ~ N(0, σ2² I_s) and ridge Δ; θ̃ is 0 off S.

    Privacy: (ε, δ)-DP under replace-one neighbours (n public) by :func:`two_stage_plan`, whatever the data: the
    vote structure bounds stage 1, clipping and the ball bound stage 2 (floating-point caveat: module docstring).
    ``loss``: "squared" or "logistic" (y in {0, 1}, else DataError). Returns θ̃ (length d; its support is within S).
    """
    X, y = as_design(X, y, loss)
    n, d = X.shape
    plan = two_stage_plan(privacy, n, d, s=s, loss=loss, blocks=blocks, block_iters=block_iters, share=share,
                          B_X=B_X, B_Y=B_Y, C=C, c3=c3)  # fmt: skip
    counts = vote_counts(X, y, loss=loss, s=s, blocks=blocks, block_iters=block_iters, perm=rng.permutation(n))
    support = top_s(release_counts(counts, plan.releases[0].noise_scale, rng, privacy.sampler)[0], s)
    Xs = clip_rows_l2(X[:, support], B_X)
    yc = np.clip(y, -B_Y, B_Y) if loss == "squared" else y
    b = draw("gaussian", plan.releases[1].noise_scale, support.size, rng, privacy.sampler).add(np.zeros(support.size))
    theta = np.zeros(d)
    theta[support] = perturbed_argmin(Xs, yc, loss=loss, ridge=plan.parameters["Delta"], b=b, C=C, B_X=B_X)
    return theta
