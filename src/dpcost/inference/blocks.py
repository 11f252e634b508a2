"""A generic private interval for any private estimator: split the rows into k disjoint blocks, run the estimator
on each at the full (ε, δ), and take the t-interval of the k block estimates (subsample and aggregate, Nissim,
Raskhodnikova & Smith 2007; the flavour of Covington, He, Honaker & Kamath 2021 without their private mean, since
here every block estimate is itself private and the t-interval is post-processing of them).

Guarantee: parallel composition. The partition is a uniformly random one drawn from public randomness (never from
the data) before anything is released, blocks of sizes ⌊n/k⌋ or ⌈n/k⌉ in a public order. Under replace-one
neighbours the replaced record sits at the same position, so it lies in exactly one block: that block's release is
(ε, δ)-DP and the other k − 1 releases are the same function of the same records, so the k releases together are
(ε, δ)-DP (under add/remove neighbours the block sizes — functions of n — would differ: refused).

Coverage holds when the k block estimates are i.i.d. and nearly normal around the target β: the t-interval with
k − 1 degrees of freedom is then exact for their mean. What makes it under-cover: the bias of the estimator at
n/k rows (clipping, shrinkage, early stopping), which the t-interval does not see and which is larger at n/k than
at n; the interval's centre (the mean of the block estimates) is a different, noisier estimate than the estimator's
on all n rows.

No bias correction is offered; instead k follows from public quantities so that blocks stay large enough. An
estimator's small-sample bias is a function of its block's rows times its noise level: with μ the Gaussian-DP
parameter of one block's releases (√Σ (Δ_i/σ_i)² over its plan, :func:`plan_mu`; under ``paper`` calibration the same
sum, a signal-to-noise measure) the block estimates were measured unbiased enough for the t-interval once
n_b·μ ≥ :data:`MIN_ROWS_MU` [method] (the known-truth design x ~ N(0, I₃), 300 repetitions a cell, at ε = 0.5, 1 and
4 — the coverage crosses 0.93 at the same n_b·μ whatever ε: precond_gd_adaptive 0.89 at n_b·μ ≈ 240 for each ε, 0.95
at 270–280). By default k = min(:data:`BLOCKS`, ⌊n·μ / MIN_ROWS_MU⌋), refused below 2: fewer, larger blocks trade
the t quantile (k = 4: 3.18 against 2.26) for a bias the interval cannot see. A k given explicitly is used with a
warning below the measured size. The rule is measured at d = 3 (on wider designs the same bias may set in at
another n_b·μ); on real data the workflow's ``undercovers`` flag is what shows a bias that remains.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from ..dp.plan import PrivacyPlan
from ..dp.privacy import Privacy
from ..errors import PrivacyError
from ..estimators.base import check_count, check_design, require_replace, take_rows
from ..estimators.registry import METHODS
from .base import check_level, derived_rng, make_interval

# k: 10 blocks give the t-interval 9 degrees of freedom (t quantile 2.26 against 1.96: 15 % wider) while each
# block keeps a tenth of the rows; fewer blocks widen the quantile fast (k = 5: 2.78), more shrink every block's n
BLOCKS = 10
# The smallest n_b·μ (rows of a block × the μ of its releases, module docstring) from which each estimator's blocks
# were measured to cover on the known-truth design (d = 3, 300 reps a cell, Monte Carlo s.e. 0.013; n_b·μ: pooled
# coverage), each method's floor set in its registry entry (Method.blocks_rows_mu) from these: precond_gd 67–94:
# 0.87–0.93, 100–107: 0.94, 139–142: 0.95–0.96 (B0 = 3.5, C = 6, T = 3); precond_gd_adaptive 188–242: 0.12–0.91,
# 268–284: 0.95 (its gradient histograms read as empty, so C_t falls to the grid's bottom edge, a quarter of the median
# term: measured at 200 rows, ε = 1); Boosted AdaSSP 13–18: 0.72–0.83, 28: 0.94, 40–67: 0.95–0.96; AdaSSP 13–107:
# 0.45–0.51, 268–1,480: 0.94–0.97; joint SSP 13–107: 0.07–0.42, 268: 0.935, 402–1,480: 0.95–0.96 (their ridge shrinks
# small blocks); SSP and precond_gd_free cover from 13, the smallest measured. Viewed here by method name:
MIN_ROWS_MU: Mapping[str, float] = MappingProxyType(
    {k: m.blocks_rows_mu for k, m in METHODS.items() if m.blocks_rows_mu is not None}
)


def blocks_interval(
    method: str,
    X,
    y,
    *,
    privacy: Privacy,
    rng: np.random.Generator,
    level: float = 0.95,
    blocks: int | None = None,
    **constants,
):
    """The t-interval of k private block estimates (module docstring); ``constants`` are the estimator's. ``blocks``:
    k (default: :func:`block_count`'s, from n and the plan's μ)."""
    m = METHODS[method]
    if not m.private:
        raise PrivacyError(f"{method} is not a private estimator")
    level = check_level(level)
    # before the data are read, so the refusal is the same on every data set
    require_replace(privacy, f"{method}'s blocks interval", "its block sizes are functions of n")
    X, y = check_design(X, y)
    n, d = X.shape
    p = privacy.at(n)
    tuning = m.resolve_tuning(constants, where=f"interval constants of {method}")
    mu = plan_mu(m.make_plan(p, n, d, tuning, {}))
    floor = MIN_ROWS_MU[method]
    if blocks is None:
        k = block_count(method, n, mu)
    else:
        k = check_count("blocks", blocks)
        if k < 2:
            raise PrivacyError("blocks must be at least 2 (the t-interval needs k - 1 >= 1 degrees of freedom)")
        if n // k * mu < floor:
            warnings.warn(
                f"INTERVAL WARNING: {method}'s blocks of {n // k} rows have n_b*mu = {n // k * mu:.3g}, "
                f"below {floor:g}, where its block estimates were measured biased: the interval may "
                f"under-cover (blocks=None chooses fewer blocks)",
                RuntimeWarning,
                stacklevel=3,
            )
    if n < 2 * k:
        raise PrivacyError(f"{n} rows cannot make {k} blocks of at least 2 rows")
    # the partition from a stream of its own; the noise from children of its seed sequence (independent streams,
    # spawned without hashing the identity again)
    stream = derived_rng(rng, "interval", method, "blocks", k, "partition")
    parts = np.array_split(stream.permutation(n), k)
    children = stream.bit_generator.seed_seq.spawn(k)
    ests = _block_estimates(m, X, y, parts, children, p, tuning)
    with np.errstate(over="ignore", invalid="ignore"):
        centre = ests.mean(axis=0)
        se = ests.std(axis=0, ddof=1) / np.sqrt(k)
    from scipy import special  # here: slow to import; scipy.stats's quantiles are these functions, at 3x its import

    t = special.stdtrit(k - 1, 0.5 + level / 2)
    plan = _plan(method, m, p, sorted({len(i) for i in parts}), d, tuning, k)
    return make_interval(
        centre - t * se,
        centre + t * se,
        centre,
        level=level,
        method=method,
        route="blocks",
        quantile=f"t({k - 1})",
        plan=plan,
        details={"se": se, "blocks": k, "rows_mu": n // k * mu, "block_estimates": ests},
    )


def _block_estimates(m, X, y, parts: list, children: list, p: Privacy, tuning: dict) -> np.ndarray:
    """(k, d): the private estimate of each block of rows ``parts``, at the full budget ``p``, block j's noise from
    the j-th child stream (a method with a stacked ``blocks`` routine: the blocks of one size at once)."""
    if m.blocks is None:  # block j's release with the j-th child
        ests = np.stack(
            [
                np.asarray(
                    m.fn(take_rows(X, idx), take_rows(y, idx), privacy=p, rng=np.random.default_rng(c), **tuning),
                    dtype=float,
                )
                for idx, c in zip(parts, children, strict=True)
            ]
        )
    else:  # the blocks of each size (⌈n/k⌉ first, then ⌊n/k⌋) stacked, with the child of the first of them
        ests = np.empty((len(parts), X.shape[1]))
        for size in sorted({len(i) for i in parts}, reverse=True):
            js = [j for j, i in enumerate(parts) if len(i) == size]
            idx = np.stack([parts[j] for j in js])
            ests[js] = m.blocks(
                take_rows(X, idx), take_rows(y, idx), privacy=p, rng=np.random.default_rng(children[js[0]]), **tuning
            )
    return ests


def plan_mu(plan: PrivacyPlan) -> float:
    """√Σ count·((Δ + rounding)/σ)² over the plan's Gaussian releases: its Gaussian-DP μ under ``tight`` calibration
    (Dong, Roth & Su 2019: Gaussian releases compose to this μ), a signal-to-noise measure under ``paper``. A plan
    with another kind of release has no μ here: refused."""
    if any(r.kind != "gaussian" for r in plan.releases):
        raise PrivacyError(
            f"the blocks route sizes its blocks by the Gaussian-DP mu of {plan.method}'s releases; "
            f"it has others ({sorted({r.kind for r in plan.releases})})"
        )
    return math.sqrt(sum(r.count * ((r.sensitivity + r.rounding) / r.noise_scale) ** 2 for r in plan.releases))


def block_count(method: str, n: int, mu: float) -> int:
    """k = min(BLOCKS, ⌊n·μ / MIN_ROWS_MU[method]⌋) (module docstring), refused (a :class:`PrivacyError` saying
    why) when that is below 2: blocks of the measured size do not fit twice in n rows."""
    floor = MIN_ROWS_MU[method]
    k = BLOCKS if floor <= 0 else min(BLOCKS, int(n * mu // floor))
    if k < 2:
        raise PrivacyError(
            f"{method}'s blocks interval needs blocks of n_b*mu >= {floor:g} (its block estimates were measured "
            f"biased below); {n} rows at mu = {mu:.3g} make fewer than 2"
        )
    return k


def _plan(method, m, p, sizes, d, tuning, k) -> PrivacyPlan:
    """The plan of the whole release: the releases of one block (the block size whose releases lose the most: each
    is the estimator's plan at (ε, δ), so all compose to the same), composed in parallel over k blocks."""
    plans = [m.make_plan(p, size, d, tuning, {}) for size in sizes]
    worst = max(plans, key=plan_mu)
    comp = (
        f"parallel composition over {k} disjoint blocks of sizes {sizes} (one record is in one block); the "
        f"releases of one block: {worst.composition}"
    )
    why = (
        f"{k} runs of {method} on disjoint blocks, of which a neighbour changes one; the releases listed are one "
        f"block's ({worst.whole_mechanism_why}); the mean and the t-interval are post-processing"
    )
    return PrivacyPlan(
        f"{method}+interval",
        p.epsilon,
        p.delta,
        p.calibration,
        comp,
        f"{worst.assumption}; the partition is public randomness, drawn before any release",
        worst.releases,
        p.relation,
        {**worst.parameters, "blocks": k},
        worst.proven,
        whole_mechanism=worst.whole_mechanism,
        whole_mechanism_why=why,
    )
