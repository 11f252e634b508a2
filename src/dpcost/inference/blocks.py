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
on all n rows. No bias correction is offered: a biased estimator needs a larger n/k or nε, or another route (measured:
precond_gd_adaptive's blocks of 200 rows at ε = 0.5 cover 0.11).
"""

from __future__ import annotations

import numpy as np

from ..dp.plan import PrivacyPlan
from ..dp.privacy import Privacy
from ..errors import PrivacyError
from ..estimators.base import check_count, check_design, require_replace
from ..estimators.registry import METHODS
from .base import check_level, derived_rng, make_interval

# k: 10 blocks give the t-interval 9 degrees of freedom (t quantile 2.26 against 1.96: 15 % wider) while each
# block keeps a tenth of the rows; fewer blocks widen the quantile fast (k = 5: 2.78), more shrink every block's n
BLOCKS = 10


def blocks_interval(
    method: str, X, y, *, privacy: Privacy, rng: np.random.Generator, level: float = 0.95, blocks: int = BLOCKS,
    **constants,
):  # fmt: skip
    """The t-interval of k private block estimates (module docstring); ``constants`` are the estimator's."""
    m = METHODS[method]
    if not m.private:
        raise PrivacyError(f"{method} is not a private estimator")
    level = check_level(level)
    k = check_count("blocks", blocks)
    if k < 2:
        raise PrivacyError("blocks must be at least 2 (the t-interval needs k - 1 >= 1 degrees of freedom)")
    X, y = check_design(X, y)
    n, d = X.shape
    p = privacy.at(n)
    require_replace(p, "the blocks interval", "its block sizes are functions of n")
    if n < 2 * k:
        raise PrivacyError(f"{n} rows cannot make {k} blocks of at least 2 rows")
    tuning = m.resolve_tuning(constants, where=f"interval constants of {method}")
    order = derived_rng(rng, "interval", method, "blocks", k, "partition").permutation(n)
    parts = np.array_split(order, k)
    ests = np.stack([
        np.asarray(m.fn(X[idx], y[idx], privacy=p, rng=derived_rng(rng, "interval", method, "blocks", k, j), **tuning),
                   dtype=float)
        for j, idx in enumerate(parts)
    ])  # fmt: skip
    with np.errstate(over="ignore", invalid="ignore"):
        centre = ests.mean(axis=0)
        se = ests.std(axis=0, ddof=1) / np.sqrt(k)
    from scipy import special  # here: slow to import; scipy.stats's quantiles are these functions, at 3x its import

    t = special.stdtrit(k - 1, 0.5 + level / 2)
    plan = _plan(method, m, p, sorted({len(i) for i in parts}), d, tuning, k)
    return make_interval(centre - t * se, centre + t * se, centre, level=level, method=method, route="blocks",
                         quantile=f"t({k - 1})", plan=plan,
                         details={"se": se, "blocks": k, "block_estimates": ests})  # fmt: skip


def _plan(method, m, p, sizes, d, tuning, k) -> PrivacyPlan:
    """The plan of the whole release: the releases of one block (the block size whose releases lose the most: each
    is the estimator's plan at (ε, δ), so all compose to the same), composed in parallel over k blocks."""
    plans = [m.make_plan(p, size, d, tuning, {}) for size in sizes]
    worst = max(plans, key=lambda q: sum(r.count * ((r.sensitivity + r.rounding) / r.noise_scale) ** 2
                                         for r in q.releases if r.kind == "gaussian"))  # fmt: skip
    comp = (f"parallel composition over {k} disjoint blocks of sizes {sizes} (one record is in one block); the "
            f"releases of one block: {worst.composition}")  # fmt: skip
    why = (f"{k} runs of {method} on disjoint blocks, of which a neighbour changes one; the releases listed are one "
           f"block's ({worst.whole_mechanism_why}); the mean and the t-interval are post-processing")  # fmt: skip
    return PrivacyPlan(f"{method}+interval", p.epsilon, p.delta, p.calibration, comp,
                       f"{worst.assumption}; the partition is public randomness, drawn before any release",
                       worst.releases, p.relation, {**worst.parameters, "blocks": k}, worst.proven,
                       whole_mechanism=worst.whole_mechanism, whole_mechanism_why=why)  # fmt: skip
