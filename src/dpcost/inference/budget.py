"""The budget of an interval: the method's (ε, δ) split between the estimate and the interval's own releases, one
plan for both, and the private residual sum of squares (docs/proofs.md, "Private confidence intervals").

Split. ``tight``: Gaussian DP (Dong, Roth & Su 2019, Cor. 3.3). The whole release is μ-GDP with μ the exact GDP
parameter of (ε, δ) (:func:`~dpcost.estimators.boosted_adassp.gdp_mu`); the estimator runs at the (ε_est, δ) whose
μ_est = μ√(1 − f), the interval's releases get μ√f, and μ² adds exactly (adaptively). ``paper``: basic composition,
the estimator at ((1 − f)ε, (1 − f)δ) and the interval's one Gaussian release at (fε, fδ) (analytic Gaussian,
Balle & Wang 2018, exact for one release).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..dp.accountant import gaussian_epsilon
from ..dp.mechanisms import check_positive
from ..dp.plan import PrivacyPlan, Release, share_release
from ..dp.privacy import Privacy
from ..dp.samplers import add_noise
from ..errors import PrivacyError
from ..estimators.boosted_adassp import gdp_mu

# f: the interval's share of μ² (tight) or of (ε, δ) (paper). Its one release is a scalar (the residual sum of
# squares); 10 % costs the estimate 1/√0.9 − 1 = 5.4 % more noise and leaves σ̂² a relative noise of
# R²/(√0.1·μ·n·σ²): 0.10 at n = 2,000, ε = 0.5 (μ = 0.142), R = 3σ — small beside the noise terms of the interval
# at that n, and the estimate's extra noise is the price every user pays. docs/proofs.md derives both numbers.
SHARE = 0.1


def check_share(share: float) -> float:
    if not (isinstance(share, (int, float)) and not isinstance(share, bool) and 0 < share < 1):
        raise PrivacyError(
            f"share (the interval's part of the budget) must lie strictly between 0 and 1, got {share!r}"
        )
    return float(share)


@dataclasses.dataclass(frozen=True)
class Split:
    """The estimator's privacy specification and how the interval's release is calibrated."""

    estimate: Privacy  # the specification the estimator runs at
    whole: Privacy  # the method's, δ a number
    share: float

    def gaussian_release(self, name: str, sensitivity: float, coordinates: int = 1) -> Release:
        """One Gaussian release of ℓ2 sensitivity Δ in the interval's part of the budget, on the noise grid."""
        return share_release(self.whole, sensitivity, self.share, coordinates, name)

    def plan(self, method: str, est: PrivacyPlan, extra: tuple[Release, ...], assumption: str) -> PrivacyPlan:
        """One plan for the estimate's releases and the interval's: the method's (ε, δ), both compositions said."""
        p, f = self.whole, self.share
        if p.calibration == "tight":
            comp = (
                f"Gaussian DP: the estimator's releases at mu*sqrt(1 - {f}) ({est.composition}), the interval's "
                f"at mu*sqrt({f}); mu^2 adds, mu = {gdp_mu(p.epsilon, p.delta):.6g} (exact)"
            )
        else:
            comp = (
                f"basic composition: the estimator at ((1 - {f}) eps, (1 - {f}) delta) ({est.composition}), the "
                f"interval's release at ({f} eps, {f} delta), analytic Gaussian"
            )
        why = (
            f"the estimator's releases ({est.whole_mechanism_why}) and the interval's; the interval is post-processing"
        )
        return PrivacyPlan(
            f"{method}+interval",
            p.epsilon,
            p.delta,
            p.calibration,
            comp,
            f"{est.assumption}; {assumption}",
            est.releases + extra,
            p.relation,
            {**est.parameters, "interval_share": f},
            est.proven,
            whole_mechanism=est.whole_mechanism,
            whole_mechanism_why=why,
        )


def split(privacy: Privacy, n: int, share: float = SHARE) -> Split:
    """The estimator's (ε_est, δ_est) for the interval's share f (module docstring)."""
    p = privacy.at(n)
    f = check_share(share)
    if p.calibration == "tight":
        # smallest ε at which μ√(1 − f)-GDP holds at δ: its μ is μ√(1 − f) up to gaussian_epsilon's relative 1e-12
        # step up, far inside the grid's margin (every grid scale is raised by a relative 1e-6)
        est = dataclasses.replace(p, epsilon=gaussian_epsilon(gdp_mu(p.epsilon, p.delta) * math.sqrt(1 - f), p.delta))
    else:
        est = dataclasses.replace(p, epsilon=(1 - f) * p.epsilon, delta=(1 - f) * p.delta)
    return Split(est, p, f)


def residual_sum_of_squares(
    X: np.ndarray, y: np.ndarray, theta: np.ndarray, R: float, release: Release, rng: np.random.Generator, sampler: str
) -> float:
    """S̃ = Σ clip_R(y_i − x_i'θ)² + N(0, σ²), θ public (released before). Each term lies in [0, R²], so replacing
    one record moves the sum by at most R² (adding or removing one, by R² too): the release's sensitivity. A
    residual that overflows is clipped to ±R, one that is NaN (inf − inf) counts as R², inside [0, R²]."""
    with np.errstate(over="ignore", invalid="ignore"):
        r = y - X @ theta
    r = np.clip(np.where(np.isnan(r), R, r), -R, R)
    return float(add_noise(float(r @ r), "gaussian", release.noise_scale, rng, sampler))


def residual_release(split_: Split, R: float) -> tuple[float, Release]:
    """R checked, and the plan entry of the residual sum of squares (sensitivity R²:
    :func:`residual_sum_of_squares`)."""
    R = check_positive("R", R)
    if not math.isfinite(R * R):
        raise PrivacyError(f"R = {R!r}: R^2 overflows")
    rel = split_.gaussian_release(
        f"sum of squared residuals clipped to [-{R:.6g}, {R:.6g}] at the released estimate", R * R
    )
    return R, rel


def sigma2_from(S: float, sigma_S: float, n: int, d: int) -> float:
    """σ̂² = max(S̃, σ_S)/(n − d): post-processing, floored at the release's noise so σ̂² > 0."""
    return max(S, sigma_S) / (n - d)
