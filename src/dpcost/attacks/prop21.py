"""A necessary privacy check: Proposition 2.1 of Cai, Wang & Zhang, "Score Attack" (§2.2.1; proof in §8.1.1),
evaluated on simulated score-attack statistics.

For an (ε, δ)-DP M, 0 < ε < 1, every T > 0, a member x_i with A_i = ⟨M(X) − θ, S_θ(x_i)⟩ and A'_i the same statistic
on M(X'_i), X'_i the data with x_i replaced by an independent copy — by symmetry, the statistic of M(X) on a fresh
non-member — the proof of Prop. 2.1 gives (8.1):

    E A_i ≤ E A'_i + 2ε E|A'_i| + 2δT + tail(T).

Tail, as the proof needs it: ∫_T^∞ P(A_i⁺ > t) dt + ∫_T^∞ P(A'_i⁻ > t) dt = E(A_i − T)₊ + E(−A'_i − T)₊. The printed
(8.1) has ∫_T^∞ P(|A_i| > t) dt instead (and E|A_i| for E|A'_i|, a misprint): its last step on the negative part
replaces ∫_T^∞ P(A_i⁻ > t) dt by ∫_T^∞ P(A'_i⁻ > t) dt, which DP does not justify when δ > 0. At a high quantile T
both tails are negligible; the form used here is the one the argument proves.

Completeness (Theorem 2.1) makes Σ_i E A_i = Σ_j ∂E M_j/∂θ_j, = d for an unbiased M, while the right side is of
order ε√(E‖M − θ‖²·λ_max(I(θ))): a non-private estimator with d comparable to n can violate the inequality (the
Gaussian sample mean when d/n > (1.6ε)²; OLS only when ε < 0.4, see tests/unit/attacks/test_prop21.py), so a
violation in simulation signals a privacy bug. Passing is necessary, not sufficient, for (ε, δ)-DP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..errors import ConfigError, DataError


@dataclass(frozen=True)
class Prop21Result:
    """Both sides of (8.1), estimated from ``n_reps`` independent repetitions.

    lhs      the mean member statistic, an estimate of E A_i.
    rhs      E A' + 2ε E|A'| + 2δT + E(A − T)₊ + E(−A' − T)₊, each term a mean over the repetitions.
    margin   z_level × the standard error of lhs − rhs (CLT over the repetitions): the one-sided sampling margin.
    violated lhs − rhs > margin, i.e. the lower confidence bound of E[lhs − rhs] at ``level`` is above 0.
    T        the truncation point used; ``level`` the one-sided confidence level of the margin.
    """

    lhs: float
    rhs: float
    margin: float
    violated: bool
    n_reps: int
    T: float
    level: float

    def __str__(self) -> str:
        verdict = "VIOLATED" if self.violated else "holds"
        return (
            f"Prop. 2.1 {verdict}: lhs = {self.lhs:.4g}, rhs = {self.rhs:.4g}, lhs - rhs = {self.lhs - self.rhs:.4g}, "
            f"margin = {self.margin:.3g} (level {self.level}), T = {self.T:.4g}, {self.n_reps} reps"
        )


def _per_rep(values, name: str) -> np.ndarray:
    """A (reps, k) float array: one row per repetition (a 1-D input is one statistic per repetition)."""
    a = np.asarray(values, dtype=float)
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2 or a.shape[0] < 2 or a.shape[1] < 1:
        raise DataError(f"{name} must be a (reps, k) array with reps >= 2 and k >= 1, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise DataError(f"{name} has {int(np.count_nonzero(~np.isfinite(a)))} non-finite values")
    return a


def prop21_check(
    members,
    nonmembers,
    *,
    epsilon: float,
    delta: float,
    T: float | None = None,
    T_quantile: float = 0.999,
    level: float = 0.999,
) -> Prop21Result:
    """Check (8.1) of Cai, Wang & Zhang (Prop. 2.1's proof) on simulated attack statistics.

    members     (reps, k) statistics A_i = ⟨M(X) − θ, S_θ(x_i)⟩ of k members of each repetition's data set.
    nonmembers  (reps, m) statistics of the same release on m fresh records drawn independently of X (= A'_i).
    Rows must be independent repetitions (fresh data and release); the columns of a row share one release and are
    dependent, so each row is reduced to its means first and the sampling error is taken across rows (CLT).
    Averaging over members is valid for any M: (8.1) holds for every i, hence for the average.

    T: if None, the ``T_quantile`` quantile of the pooled |A| (members and non-members) — chosen on the simulation's
    own draws. (8.1) holds for every fixed T; a high quantile of thousands of draws barely moves between runs, and
    that dependence is not counted in the margin. Choosing T by minimising the estimated right side would bias it
    down, so it is not done.
    """
    if not 0 < epsilon < 1:
        raise ConfigError(f"Prop. 2.1 needs 0 < epsilon < 1, got {epsilon!r}")
    if not 0 <= delta < 1:
        raise ConfigError(f"delta must lie in [0, 1), got {delta!r}")
    if not 0 < T_quantile < 1 or not 0.5 < level < 1:
        raise ConfigError(f"T_quantile must lie in (0, 1) and level in (0.5, 1), got {T_quantile!r}, {level!r}")
    A, B = _per_rep(members, "members"), _per_rep(nonmembers, "nonmembers")
    if A.shape[0] != B.shape[0]:
        raise DataError(f"members and nonmembers have {A.shape[0]} and {B.shape[0]} repetitions")
    if T is None:
        T = float(np.quantile(np.abs(np.concatenate([A.ravel(), B.ravel()])), T_quantile))
    if not (math.isfinite(T) and T > 0):
        raise ConfigError(f"T must be finite and > 0, got {T!r}")
    lhs_r = A.mean(axis=1)
    # per repetition: E A' + 2ε E|A'| + E(A − T)₊ + E(−A' − T)₊, each estimated within the row
    rhs_r = (
        B.mean(axis=1)
        + 2 * epsilon * np.abs(B).mean(axis=1)
        + np.maximum(A - T, 0.0).mean(axis=1)
        + np.maximum(-B - T, 0.0).mean(axis=1)
    )
    diff = lhs_r - rhs_r - 2 * delta * T
    reps = A.shape[0]
    margin = float(stats.norm.ppf(level) * diff.std(ddof=1) / math.sqrt(reps))
    lhs, rhs = float(lhs_r.mean()), float(rhs_r.mean() + 2 * delta * T)
    return Prop21Result(lhs, rhs, margin, bool(lhs - rhs > margin), reps, T, level)
