"""The interval of :mod:`dpcost.estimators.blocks_ols` (blocks of unclipped OLS, censored private mean): the estimate
at the share 1 − f of the budget, and two releases of its censored blocks at f (docs/proofs.md "Blocks of unclipped
OLS"):

* the mean square of the censored standardized blocks, Ṽ = mean_j clip(z_j, ±r)² + noise (ℓ2 sensitivity r²√d/k):
  the between-block variance in units of s² is Ṽ − m̃², m̃ the released mean;
* the fractions censored below and above, p̃ = (#{z_j < −r}, #{z_j > r})/k + noise (ℓ2 sensitivity √(2d)/k).

Interval: β̂ ± cv·se, se² = s²·(max(Ṽ − m̃², floor)/k + σ_m²) (σ_m the estimate's noise sd in units of s), cv the
Armstrong–Kolesár critical value (the 1 − α + γ quantile of |N(B/se, 1)|, :func:`~.ssp_family.critical_value`) for
the censoring's bias bound B = s·KAPPA·(p̃_lo + p̃_hi + z_{1−γ/2}·√2·σ_p)₊ (a censored block moved by KAPPA·s on
average at most: KAPPA = 1 is ~3× the mean excess of a normal block beyond r = 2, 0.37 s).

Assumptions (stated, and flagged in ``details`` with a warning when visibly not met): the block estimates are
nearly normal around the OLS functional (the censored fraction near the normal's, at most :data:`FLAG_CENSORED`);
block OLS's own bias at ⌊n/k⌋ rows, after the jackknife, is small beside se (not visible to the interval: the
known-truth coverage test and measurements/inference_limit_blocks.py measure it).
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np

from ..dp.plan import share_release
from ..dp.privacy import Privacy
from ..dp.samplers import add_noise
from ..errors import PrivacyError
from ..estimators.base import check_design, require_replace
from ..estimators.blocks_ols import SHARES, blocks_release
from .base import check_level, derived_rng, make_interval
from .ssp_family import GAMMA, critical_value

SHARE = 0.1  # f: the interval's two releases together (half each), the estimate's five at 1 − f
KAPPA = 1.0  # the mean excess of a censored block beyond its bound, in units of s (module docstring)
FLAG_CENSORED = 0.1  # a censored fraction above this (a normal block at r·INFL = 3.75: 0.02 %) is flagged
# "bound" carries the censored fractions into an Armstrong–Kolesár interval; "ignore" (the default) uses them as a
# diagnostic only. Why the default: at k = 400, d = 5, ε = 1 the fractions' noise sd is √(2d)/(k·μ√(f/2)) ≈ 0.13,
# so the bound is ≈ 0.5·s ≈ 10 s.e. whatever the data (measured on housing: widths 3–10× HC3's, coverage 0.97–1.00);
# with r = 3, INFL = 1.25 a normal block is censored beyond 3.75 of its sd's (0.02 %): the bias left is negligible
BIAS, BIASES = "ignore", ("bound", "ignore")
VAR_FLOOR = 0.05  # the between-block variance in units of s² never below this (s is INFL = 1.25 times the pilot's)


def blocks_ols_interval(
    X, y, *, privacy: Privacy, rng: np.random.Generator, level: float = 0.95, share: float = SHARE, bias: str = BIAS
):
    """A private interval for every coefficient from blocks of unclipped OLS (module docstring): (ε, δ)-DP as a whole
    under replace-one neighbours (the estimate's releases at 1 − f, the interval's at f; Gaussian DP under ``tight``,
    basic composition under ``paper``)."""
    from scipy import special  # here: slow to import

    level = check_level(level)
    if bias not in BIASES:
        raise PrivacyError(f"bias must be one of {BIASES}, got {bias!r}")
    require_replace(privacy, "blocks_ols's censored interval", "its block count and block sizes are functions of n")
    X, y = check_design(X, y)
    n, d = X.shape
    p = privacy.at(n)
    shares = {key: (1 - share) * v for key, v in SHARES.items()}
    rel = blocks_release(X, y, privacy=p, rng=rng, shares=shares)
    k, r = rel.blocks, rel.plan.parameters["r"]
    root = math.sqrt(d)
    var_rel = share_release(p, r * r * root / k, share / 2, d, "interval: mean square of censored standardized blocks")
    cnt_rel = share_release(p, math.sqrt(2 * d) / k, share / 2, 2 * d, "interval: fractions censored below and above")
    own = derived_rng(rng, "interval", "blocks_ols", "censored blocks", k, share)
    zc = np.clip(rel.z, -r, r)
    V = add_noise((zc * zc).mean(axis=0), "gaussian", var_rel.noise_scale, own, p.sampler)
    frac = np.concatenate([(rel.z < -r).mean(axis=0), (rel.z > r).mean(axis=0)])
    pf = add_noise(frac, "gaussian", cnt_rel.noise_scale, own, p.sampler)
    m = (rel.estimate - rel.centre) / rel.scale  # the released mean, in units of s (post-processing)
    between = np.maximum(V - m * m, VAR_FLOOR)
    with np.errstate(over="ignore", invalid="ignore"):
        se = rel.scale * np.sqrt(between / k + rel.noise_sd**2)
        censored = pf[:d] + pf[d:]
        bound = (
            rel.scale
            * KAPPA
            * np.maximum(censored + special.ndtri(1 - GAMMA / 2) * math.sqrt(2) * cnt_rel.noise_scale, 0.0)
        )
        if bias == "bound":
            half = critical_value(bound / se, 1 - level - GAMMA) * se
        else:  # the censoring's bias left out: the censored fractions are a diagnostic only
            half = special.ndtri(0.5 + level / 2) * se
    flagged = censored > FLAG_CENSORED
    if flagged.any():
        warnings.warn(
            f"INTERVAL WARNING: blocks_ols censored {np.round(censored, 3)} of its blocks (coordinates "
            f"{np.flatnonzero(flagged).tolist()} above {FLAG_CENSORED}): the block estimates are not "
            f"nearly normal at this block size, and the bias bound rests on KAPPA = {KAPPA}",
            RuntimeWarning,
            stacklevel=2,
        )
    est = rel.plan
    plan = dataclasses.replace(
        est,
        method="blocks_ols+interval",
        releases=est.releases + (var_rel, cnt_rel),
        composition=est.composition + f"; the interval's two releases at {share:g} of the budget",
        parameters={**est.parameters, "interval_share": share},
    )
    return make_interval(
        rel.estimate - half,
        rel.estimate + half,
        rel.estimate,
        level=level,
        method="blocks_ols",
        route="censored",
        quantile=f"bias-aware: |N(B/se, 1)| at {level + GAMMA:g}",
        plan=plan,
        details={
            "se": se,
            "blocks": k,
            "bias_bound": bound,
            "censored": censored,
            "between_variance": between * rel.scale**2,
            "scale": rel.scale,
            "assumption_flag": flagged,
        },
    )
