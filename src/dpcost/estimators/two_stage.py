"""Two-stage private sparse regression — after Kifer, Smith & Thakurta (COLT 2012), "Private convex empirical risk
minimization and high-dimensional regression", §§4–5: a private support selection of size s, then a private fit on
the selected coordinates. It is the "Two Stage" baseline of Wang & Gu (AAAI 2020, Table 1 and §5).

**What is KST's and what is not.** Only the abstract of KST 2012 was available here (not its algorithms), so
stage 1 is NOT their selection procedure but the subsample-and-aggregate variant of it (subsampling stability,
Smith & Thakurta 2013): the n rows are cut, by a permutation drawn from ``rng`` independently of the data, into k =
``blocks`` disjoint blocks; on each block a non-private IGHT fit (:func:`~.losses.ight`, ``block_iters``
iterations from 0, step 1/(c2 λ̂), λ̂ the power-iteration estimate of λ_max(X_b'X_b/n_b)) votes for the ≤ s
coordinates of its support; the vote counts c ∈ {0, …, k}^d are released once with Gaussian noise and the support
is the s largest noisy counts (post-processing). **Stage 2 is not KST's objective perturbation** (their Alg. 1)
but output perturbation of the same kind of fit (Chaudhuri, Monteleoni & Sarwate 2011): objective perturbation
puts its noise b inside an argmin, and with b on the exact sampler's grid the argmin gives it away — from θ̃ and D
one recomputes b = −∇[Σℓ + Δ‖·‖²/2](θ̃), which lies on the grid only under the true data set (a test showed it
with an earlier version of this module). Output perturbation releases θ̂ + ξ with ξ drawn by the exact sampler,
whose guarantee is that of the Gaussian mechanism on a grid (:mod:`dpcost.dp.samplers`).

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
* Stage 2: θ̂_S = argmin (1/n)Σ_i ℓ(x_{iS}'θ, y_i) + λ‖θ‖²/2 over ℝ^s, each row restricted to S clipped to
  ‖x_S‖₂ ≤ B_X (S is public once released); ℓ the squared loss with the residual clipped at c_r (Huber) or the
  logistic loss (c_r = 1), so every per-example gradient has ℓ2 norm ≤ G = B_X·c_r at every θ and, by λ-strong
  convexity, ‖θ̂_S − θ̂′_S‖₂ ≤ 2G/(nλ). Solved by L-BFGS until ‖∇F‖₂ ≤ λτ, τ = ``tol``·2G/(nλ) (certified
  ‖θ − θ̂‖ ≤ τ; refused otherwise), so the released fit moves by ≤ (1 + 2·tol)·2G/(nλ). λ² =
  c_λ√(s log(1/δ2))/(nε2), which balances the ridge's bias (∝ λ) against the noise (∝ √s G/(nλε2)). Noise: paper:
  classic Gaussian (ε2 < 1, else refused or warned); tight: analytic.

Memory and time: X may be dense or CSR and is never densified or copied whole (blocks are sliced one at a time);
stage 2 forms the n × s submatrix (sparse stays sparse).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..dp.mechanisms import BOUND_MIN, calibrated_gaussian_sigma, check_positive
from ..dp.plan import PrivacyPlan, grid_release
from ..dp.privacy import Privacy
from ..dp.samplers import draw
from ..errors import PrivacyError
from .base import check_count, check_s, require_replace, take_rows
from .knowledge_transfer import strongly_convex_teacher
from .losses import as_design, check_loss, clip_rows_l2, ight

CURVATURE = {"squared": 1.0, "logistic": 0.25}  # c2: sup of ℓ'' in the linear predictor
POWER_ITERS = 20

# ---------------------------------------------------------------------------------------------------------------
# The plan
# ---------------------------------------------------------------------------------------------------------------


def count_sensitivity(s: int) -> float:
    """ℓ2 replace-one sensitivity of the vote counts: one block's ≤ s votes move, ‖c − c′‖₂ ≤ √(2s)."""
    return math.sqrt(2 * s)


def _check_tuning(n, d, s, loss, blocks, block_iters, share, B_X, residual_clip, c_lambda, tol):
    check_loss(loss)
    s = check_s(s, d)
    blocks = check_count("blocks", blocks)
    if blocks > n:
        raise PrivacyError(f"blocks={blocks} exceeds n={n}: every block needs at least one row")
    check_count("block_iters", block_iters)
    if not (isinstance(share, numbers.Real) and not isinstance(share, bool) and BOUND_MIN <= share < 1):
        raise PrivacyError(
            f"share (stage 1's part of the budget) must lie strictly between 0 and 1 (and be at least "
            f"2^-484), got {share!r}"
        )
    for name, value in (("B_X", B_X), ("residual_clip", residual_clip), ("c_lambda", c_lambda), ("tol", tol)):
        check_positive(name, value)
    return s, blocks


def two_stage_plan(
    privacy: Privacy,
    n: int,
    d: int,
    *,
    s: int,
    loss: str = "squared",
    blocks: int,
    block_iters: int,
    share: float,
    B_X: float,
    residual_clip: float,
    c_lambda: float,
    tol: float,
) -> PrivacyPlan:
    """Two Gaussian releases, composed by basic composition (tuning as :func:`two_stage`, which holds the defaults):

    1. the k-block vote counts + N(0, σ1² I_d), ℓ2 sensitivity √(2s) (:func:`count_sensitivity`), at (ε1, δ1) =
       share·(ε, δ);
    2. the ridge fit on the selected s coordinates + N(0, σ2² I_s), ℓ2 sensitivity (1 + 2·tol)·2G/(nλ), G = B_X·c_r
       (logistic: c_r = 1), λ² = c_λ√(s log(1/δ2))/(nε2), at (ε2, δ2) = (1 − share)(ε, δ).

    paper: classic Gaussian σ = Δ√(2 log(1.25/δ_i))/ε_i (ε_i < 1, else refused or warned); tight: analytic.
    """
    p = privacy.at(n)
    require_replace(p, "two_stage", "its blocks are positional and n is public")
    s, k = _check_tuning(n, d, s, loss, blocks, block_iters, share, B_X, residual_clip, c_lambda, tol)
    eps, delta = p.epsilon, p.delta
    e1, d1, e2, d2 = share * eps, share * delta, (1 - share) * eps, (1 - share) * delta
    sens1 = count_sensitivity(s)
    sigma1, how1 = calibrated_gaussian_sigma(p, sens1, e1, d1, d, "stage 1 (epsilon1 = share * epsilon)")
    c_r = 1.0 if loss == "logistic" else residual_clip
    G = B_X * c_r
    lam = math.sqrt(c_lambda * math.sqrt(s * math.log(1 / d2)) / (n * e2))
    theta_sens = 2 * G / (n * lam)
    sens2 = (1 + 2 * tol) * theta_sens
    sigma2, how2 = calibrated_gaussian_sigma(p, sens2, e2, d2, s, "stage 2 (epsilon2 = (1 - share) * epsilon)")
    what1 = f"gaussian ({how1}): block vote counts (support = top s, post-processing)"
    what2 = f"gaussian ({how2}): the ridge fit on the selected coordinates (output perturbation)"
    rels = (
        grid_release("gaussian", what1, sens1, "l2", sigma1, 1, e1, d1, coordinates=d, sampler=p.sampler),
        grid_release("gaussian", what2, sens2, "l2", sigma2, 1, e2, d2, coordinates=s, sampler=p.sampler),
    )
    comp = "basic composition: stage 1 at (share eps, share delta), stage 2 at the rest"
    fit = "logistic loss" if loss == "logistic" else f"squared loss with the residual clipped at {c_r} (Huber)"
    assumption = (
        f"{k} positional blocks (about {n // k} rows) from a data-independent permutation, each casting <= {s} "
        f"votes; rows restricted to the selected s coordinates clipped to ||x_S||_2 <= {B_X}; {fit}; ridge lambda "
        f"= {lam:.6g}; the fit solved to ||grad F|| <= lambda*tau"
    )
    params = {
        "blocks": k,
        "rows per block": n // k,
        "epsilon1": e1,
        "delta1": d1,
        "epsilon2": e2,
        "delta2": d2,
        "count sensitivity": sens1,
        "G": G,
        "lambda": lam,
        "fit sensitivity 2G/(n lambda)": theta_sens,
        "tau": tol * theta_sens,
    }
    why = (
        "two Gaussian releases, the block vote counts and the ridge fit on the selected coordinates; the selection "
        "is post-processing"
    )
    return PrivacyPlan(
        "two_stage",
        eps,
        delta,
        p.calibration,
        comp,
        assumption,
        rels,
        p.relation,
        params,
        whole_mechanism=True,
        whole_mechanism_why=why,
    )


# ---------------------------------------------------------------------------------------------------------------
# Stage 1: block votes and their release
# ---------------------------------------------------------------------------------------------------------------


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """a'b for vectors (einsum: numpy's multi-threaded BLAS dot takes milliseconds on short vectors here)."""
    return float(np.einsum("i,i", a, b))


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
        Xb, yb = take_rows(X, rows), take_rows(y, rows)
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
    residual_clip: float = 1.0,  # squared loss: the residual's clip c_r (Huber); the logistic loss has c_r = 1
    c_lambda: float = 1.0,  # stage 2's ridge: λ² = c_λ √(s log(1/δ2))/(n ε2)
    tol: float = 0.01,  # stage 2's solver certificate τ, in units of the fit's sensitivity 2G/(nλ)
) -> np.ndarray:
    """Two-stage private sparse regression after Kifer, Smith & Thakurta (2012) (module docstring: what is and is
    not theirs).

    1. perm = rng.permutation(n); c = :func:`vote_counts`; ĉ = c + N(0, σ1² I_d); S = the s largest ĉ_j.
    2. θ̂_S = the λ-ridge fit on X_S (rows clipped to ‖x_S‖₂ ≤ B_X; Huber or logistic loss) by
       :func:`~.knowledge_transfer.strongly_convex_teacher`; θ̃_S = θ̂_S + N(0, σ2² I_s); θ̃ is 0 off S.

    Privacy: (ε, δ)-DP under replace-one neighbours (n public) by :func:`two_stage_plan`, whatever the data; both
    releases drawn by the exact sampler (``privacy.sampler``). ``loss``: "squared" or "logistic" (y in {0, 1}, else
    DataError). Returns θ̃ (length d; its support is within S).
    """
    X, y = as_design(X, y, loss)
    n, d = X.shape
    plan = two_stage_plan(
        privacy,
        n,
        d,
        s=s,
        loss=loss,
        blocks=blocks,
        block_iters=block_iters,
        share=share,
        B_X=B_X,
        residual_clip=residual_clip,
        c_lambda=c_lambda,
        tol=tol,
    )
    counts = vote_counts(X, y, loss=loss, s=s, blocks=blocks, block_iters=block_iters, perm=rng.permutation(n))
    support = top_s(release_counts(counts, plan.releases[0].noise_scale, rng, privacy.sampler)[0], s)
    c_r = 1.0 if loss == "logistic" else residual_clip
    fit = strongly_convex_teacher(
        clip_rows_l2(X[:, support], B_X),
        y,
        loss=loss,
        lam=plan.parameters["lambda"],
        residual_clip=c_r,
        tau=plan.parameters["tau"],
        c_x=B_X,
    )
    theta = np.zeros(d)
    theta[support] = draw("gaussian", plan.releases[1].noise_scale, support.size, rng, privacy.sampler).add(fit)
    return theta
