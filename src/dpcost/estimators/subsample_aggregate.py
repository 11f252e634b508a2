"""Subsample-and-aggregate OLS (Nissim, Raskhodnikova & Smith 2007; Smith 2011): OLS on disjoint blocks, each block
estimate clipped to a ball, averaged, one Gaussian release — the algorithm, its sensitivity and its privacy plan
(derivation: docs/proofs.md, "Subsample and aggregate")."""

from __future__ import annotations

import numpy as np

from ..dp.mechanisms import check_positive, classic_gaussian_sigma, gaussian_sigma
from ..dp.plan import PrivacyPlan, grid_release
from ..dp.privacy import Privacy
from ..dp.samplers import add_noise, grid_scale
from .base import check_count, check_design, project_l2_ball, require_replace, take_rows
from .sums import plan_once


def n_blocks(n: int, block_size: int) -> int:
    """k = max(1, ⌊n / block_size⌋) disjoint blocks: a public rule in n."""
    return max(1, n // check_count("block_size", block_size))


def subsample_aggregate_plan(privacy: Privacy, n: int, d: int, *, R_b: float, block_size: int) -> PrivacyPlan:
    """One Gaussian release of the mean of k clipped block estimates: replace-one sensitivity 2R_b/k (the partition is
    drawn independently of the data, so replacing the record at one position changes one block, whose clipped
    estimate moves by at most 2R_b).

    tight: the analytic Gaussian mechanism (Balle & Wang 2018). paper: the classic Gaussian, proven for ε < 1.
    Add/remove neighbours are refused: adding a record shifts the partition of every later position.
    """
    p = privacy.at(n)
    check_positive("R_b", R_b)
    require_replace(p, "subsample_aggregate", "its blocks are positional")
    k = n_blocks(n, block_size)
    sens = 2 * R_b / k
    if p.calibration == "tight":
        sigma, budget, comp = (
            gaussian_sigma(sens, p.epsilon, p.delta, "analytic"),
            (None, None),
            "one analytic Gaussian",
        )
    else:
        if p.epsilon >= 1:
            p.outside_validity(f"the classic Gaussian mechanism needs epsilon < 1, got epsilon={p.epsilon}")
        sigma, budget = classic_gaussian_sigma(sens, p.epsilon, p.delta), (p.epsilon, p.delta)
        comp = "one classic Gaussian release"
    sigma = grid_scale(sigma, sens, d, "l2", "gaussian", p.sampler)
    rel = grid_release(
        "gaussian",
        "gaussian: mean of clipped block OLS estimates",
        sens,
        "l2",
        sigma,
        1,
        *budget,
        coordinates=d,
        sampler=p.sampler,
    )
    assumption = f"{k} disjoint blocks of about {n // k} rows, each block's OLS estimate projected on ||b||_2 <= {R_b}"
    params = {"blocks": k}
    return PrivacyPlan(
        "subsample_aggregate",
        p.epsilon,
        p.delta,
        p.calibration,
        comp,
        assumption,
        (rel,),
        p.relation,
        params,
        whole_mechanism=True,
        whole_mechanism_why="one Gaussian release of the mean of clipped block estimates",
    )


def _fit(G: np.ndarray, h: np.ndarray) -> np.ndarray:
    return np.einsum("kij,kj->ki", np.linalg.pinv(G, hermitian=True), h)


# per-row outer products x_i x_i' formed at a time by block_ols: 64 MB (all at once, a 10^6 × 21 design took 3.5 GB)
OUTER_BYTES = 2**26


def block_ols(X: np.ndarray, y: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """OLS (minimum-norm where singular) of each block of consecutive rows beginning at ``starts``: (k, d).

    Total on finite input: a block whose sums X'X, X'y overflow, whose eigendecomposition fails (LAPACK does not
    converge on such extreme matrices) or whose fit is not finite gets the public value 0. A block's result depends
    on its own rows only: when the batch fails, the blocks are refitted one by one, and a batch of one gives the
    same bits as its row of the batch (each matrix is its own LAPACK call). The sums are formed a run of whole blocks
    at a time, at most :data:`OUTER_BYTES` of per-row outer products (the same additions in the same order)."""
    n, d = X.shape
    ends = np.append(starts[1:], n)
    rows = max(1, OUTER_BYTES // (8 * d * d))
    G, h = np.empty((len(starts), d, d)), np.empty((len(starts), d))
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is caught below, block by block
        i = 0
        while i < len(starts):
            j = max(i + 1, int(np.searchsorted(ends, starts[i] + rows, side="right")))
            lo, hi = starts[i], ends[j - 1]
            Xc = X[lo:hi]
            G[i:j] = np.add.reduceat(Xc[:, :, None] * Xc[:, None, :], starts[i:j] - lo, axis=0)
            h[i:j] = np.add.reduceat(Xc * y[lo:hi, None], starts[i:j] - lo, axis=0)
            i = j
        ok = np.isfinite(G).all(axis=(1, 2)) & np.isfinite(h).all(axis=1)
        est = np.zeros(h.shape)
        try:
            est[ok] = _fit(G[ok], h[ok])
        except np.linalg.LinAlgError:
            for j in np.flatnonzero(ok):
                try:
                    est[j] = _fit(G[j : j + 1], h[j : j + 1])[0]
                except np.linalg.LinAlgError:
                    pass  # this block keeps 0
    return np.where(np.isfinite(est).all(axis=1, keepdims=True), est, 0.0)


def subsample_aggregate(X, y, *, privacy: Privacy, rng: np.random.Generator, R_b: float, block_size: int) -> np.ndarray:
    """Subsample and aggregate (Nissim, Raskhodnikova & Smith 2007, §4; Smith 2011) with OLS as the block estimator.

    The n rows are permuted (rng, independent of the data) and cut into k = max(1, ⌊n/block_size⌋) blocks of sizes
    differing by at most one; θ̂_j = OLS of block j, projected on the ball ‖θ‖₂ ≤ R_b; the release is
    (1/k)Σ_j θ̂_j + N(0, σ²I).

    Privacy: (ε, δ)-DP under replace-one neighbours, sensitivity 2R_b/k (:func:`subsample_aggregate_plan`), for every
    finite input, no bound on x or y needed: each block's estimate is a total function of that block's rows (its OLS
    fit, or the public 0 where the fit overflows or fails, :func:`block_ols`) projected on the ball ‖θ‖₂ ≤ R_b (the
    projection is finite for every finite fit), so replacing one record moves one block's term by at most 2R_b
    whatever the rows. R_b and block_size are public constants.
    """
    X, y = check_design(X, y)
    n, d = X.shape
    plan = subsample_aggregate_plan(privacy, n, d, R_b=R_b, block_size=block_size)
    return _release(X, y, plan, R_b, rng, privacy)


def subsample_aggregate_batch(
    X, y, *, privacy: Privacy, rngs: list[np.random.Generator], tunings: list[dict], plans: dict
) -> list[np.ndarray]:
    """:func:`subsample_aggregate` on one subsample with every set of constants in ``tunings`` (each complete), run
    i with its own ``rngs[i]`` (its partition and its noise): the separate calls' estimates bit for bit, each the
    same (ε, δ)-DP release. Shared, because deterministic: the design is checked once and a plan computed once per
    (privacy, n, d, constants) into ``plans``, the caller's memo (its PRIVACY WARNINGs given when it is computed; a
    refusal raised every time, the first being the separate calls' first)."""
    X, y = check_design(X, y)
    n, d = X.shape
    planned = []
    for t in tunings:  # every plan first, in order: the first refusal is the separate calls' first
        kw = dict(R_b=t["R_b"], block_size=t["block_size"])
        planned.append(plan_once(plans, subsample_aggregate_plan, privacy, n, d, **kw))
    return [_release(X, y, plan, t["R_b"], rng, privacy) for plan, t, rng in zip(planned, tunings, rngs, strict=True)]


def _release(X, y, plan: PrivacyPlan, R_b: float, rng: np.random.Generator, privacy: Privacy) -> np.ndarray:
    """The release of :func:`subsample_aggregate` on a checked design with its plan: the partition drawn from
    ``rng``, the clipped block estimates averaged, the noise drawn from ``rng``."""
    n = len(y)
    k = plan.parameters["blocks"]
    perm = rng.permutation(n)
    sizes = np.full(k, n // k) + (np.arange(k) < n % k)  # k blocks, sizes differing by at most one
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    estimates = project_l2_ball(block_ols(take_rows(X, perm), take_rows(y, perm), starts), R_b)
    return add_noise(estimates.mean(axis=0), "gaussian", plan.releases[0].noise_scale, rng, privacy.sampler)
