"""The score attack (Cai, Wang & Zhang, "Score Attack", Section 2.2) as an empirical membership-inference audit.

For a parametric family f_θ with score S_θ(z) = ∇_θ log f_θ(z), the attack on a release M(X) scores a candidate z by
(2.3)  A_θ(z, M(X)) = ⟨M(X) − θ, S_θ(z)⟩; large values say "z was in X". Theorem 2.1: a candidate independent of X
has E A = 0 (soundness) and Σ_{i∈[n]} E A_θ(x_i, M(X)) = Σ_j ∂E M(X)_j/∂θ_j over the members (completeness), which
is d for an unbiased M. Proposition 2.1: an (ε, δ)-DP release caps E A_θ(x_i, M(X)) at
2ε·√(E‖M(X) − θ‖²)·√λ_max(I(θ)) + 2δT + ∫_T^∞ P(|A| > t) dt, so a DP release cannot be traced well.

In the paper θ is the true parameter. §7 ("Practical membership inference attacks") suggests replacing it by an
estimate from an independent public sample; for the Gaussian mean that is the SNP tracing attack of Homer et al.
(2008). Soundness then holds only approximately: E A for a non-member is ⟨E M − θ̂, E S_θ̂(z)⟩, small but not 0.

Contents: the scores of three families (vectorised over records, an (N, d) array) and the item scores of the
Bradley–Terry–Luce model (§4; one row per item), the attack statistic, and the metrics of the member / non-member
statistics (AUC, TPR at a fixed FPR, a Clopper–Pearson ε lower bound), with a summary of repeated runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import pandas as pd

from ..errors import ConfigError, DataError

# ---------------------------------------------------------------------------------------------------------------
# Input checks
# ---------------------------------------------------------------------------------------------------------------


def _records(x, name: str = "x") -> np.ndarray:
    """An (N, d) float array of N ≥ 1 records with d ≥ 1 finite coordinates."""
    a = np.asarray(x, dtype=float)
    if a.ndim != 2 or a.shape[0] == 0 or a.shape[1] == 0:
        raise DataError(f"{name} must be a non-empty (N, d) array of records, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise DataError(f"{name} has {int(np.count_nonzero(~np.isfinite(a)))} non-finite entries")
    return a


def _vector(v, name: str, length: int | None = None) -> np.ndarray:
    """A non-empty finite 1-D float array, of the given length if one is given."""
    a = np.asarray(v, dtype=float)
    if a.ndim != 1 or a.size == 0 or (length is not None and a.size != length):
        want = f"length {length}" if length is not None else "a non-empty 1-D array"
        raise DataError(f"{name} must be {want}, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise DataError(f"{name} has {int(np.count_nonzero(~np.isfinite(a)))} non-finite entries")
    return a


def _sigma2(sigma, d: int, *, per_coordinate: bool) -> float | np.ndarray:
    """σ² from a positive finite σ (a scalar, or for ``per_coordinate`` also a length-d vector)."""
    s = np.asarray(sigma, dtype=float)
    ok_shape = s.ndim == 0 or (per_coordinate and s.shape == (d,))
    if not ok_shape or not np.all(np.isfinite(s)) or not np.all(s > 0):
        shape = "a positive scalar" + (f" or a length-{d} vector of positive values" if per_coordinate else "")
        raise ConfigError(f"sigma must be {shape}, got {sigma!r}")
    return s**2 if s.ndim else float(s) ** 2


def _probability(p, name: str, *, closed: bool) -> float:
    v = float(p)
    if not (0.0 <= v <= 1.0 if closed else 0.0 < v < 1.0):
        raise ConfigError(f"{name} must be in {'[0, 1]' if closed else '(0, 1)'}, got {p!r}")
    return v


# ---------------------------------------------------------------------------------------------------------------
# Scores S_θ(z) = ∇_θ log f_θ(z), one row per record
# ---------------------------------------------------------------------------------------------------------------


def gaussian_mean_score(x, theta, *, sigma=1.0) -> np.ndarray:
    """S_θ(x) = (x − θ)/σ² for x ~ N(θ, diag(σ²)), σ known: the score of §2.2 (for σ = 1, the Gaussian tracing attack
    the paper says (2.3) reduces to). ``x``: (N, d) records; ``theta``: (d,); ``sigma``: a scalar or a (d,) vector of
    per-coordinate standard deviations. Returns the (N, d) array of scores."""
    X = _records(x)
    th = _vector(theta, "theta", X.shape[1])
    return (X - th) / _sigma2(sigma, X.shape[1], per_coordinate=True)


def _design(x, y) -> tuple[np.ndarray, np.ndarray]:
    X = _records(x)
    yy = _vector(y, "y")
    if yy.size != X.shape[0]:
        raise DataError(f"y has {yy.size} responses for {X.shape[0]} records of x")
    return X, yy


def linear_score(x, y, theta, *, sigma=1.0) -> np.ndarray:
    """S_β(x, y) = (y − x'β)·x/σ² for y | x ~ N(x'β, σ²), σ known: the GLM score of (3.2) with ψ(u) = u²/2 and
    c(σ) = σ² (§3.1). ``x``: (N, d); ``y``: (N,); ``theta`` = β: (d,). Returns the (N, d) array of scores."""
    X, yy = _design(x, y)
    th = _vector(theta, "theta", X.shape[1])
    return ((yy - X @ th) / _sigma2(sigma, X.shape[1], per_coordinate=False))[:, None] * X


def logistic_score(x, y, theta) -> np.ndarray:
    """S_β(x, y) = (y − sigmoid(x'β))·x for y | x ~ Bernoulli(sigmoid(x'β)), y ∈ {0, 1}: the GLM score of (3.2) with
    ψ(u) = log(1 + eᵘ), ψ' = sigmoid and c(σ) = 1 (§3.1). Returns the (N, d) array of scores."""
    X, yy = _design(x, y)
    if not np.all((yy == 0) | (yy == 1)):
        raise DataError(f"logistic y must be 0 or 1, got the values {np.unique(yy[(yy != 0) & (yy != 1)])[:5]}")
    th = _vector(theta, "theta", X.shape[1])
    from scipy import special  # here: slow to import

    return (yy - special.expit(X @ th))[:, None] * X


def btl_item_score(edges, y, theta) -> np.ndarray:
    """The item scores of the Bradley–Terry–Luce model (§4): row i is
    S_i = Σ_{j:(i,j)∈G} (Y_ij − σ((e_i − e_j)'θ))(e_i − e_j), the gradient in θ of the log-likelihood of item i's
    comparisons, so that ⟨M − θ, S_i⟩ is the paper's item-level attack A(M, i). ``edges``: (m, 2) rows (a, b) of
    item indices, a ≠ b; ``y``: (m,) outcomes, 1 if a beats b; ``theta``: (n_items,). A comparison
    enters the rows of both its items, so Σ_i S_i is twice the score of the whole data. Returns (n_items, n_items)."""
    th = _vector(theta, "theta")
    e = np.asarray(edges)
    if e.ndim != 2 or e.shape[1] != 2 or e.shape[0] == 0 or e.dtype.kind not in "iu":
        raise DataError(f"edges must be a non-empty integer (m, 2) array of item pairs, got {e.dtype} {e.shape}")
    a, b = e[:, 0], e[:, 1]
    if e.min() < 0 or e.max() >= th.size or np.any(a == b):
        raise DataError(f"edges must pair two different items among 0 … {th.size - 1}")
    yy = _vector(y, "y", len(e))
    if not np.all((yy == 0) | (yy == 1)):
        raise DataError("comparison outcomes y must be 0 or 1")
    from scipy import special  # here: slow to import

    r = yy - special.expit(th[a] - th[b])  # the residual of comparison (a, b), the coefficient of e_a − e_b
    S = np.zeros((th.size, th.size))
    for row in (a, b):  # the comparison is in item a's and in item b's outcomes
        np.add.at(S, (row, a), r)
        np.add.at(S, (row, b), -r)
    return S


@dataclass(frozen=True)
class ScoreFamily:
    """A family's score function and its call: ``needs_y`` (z = (x, y) rather than z = x) and its keyword
    parameters."""

    name: str
    function: Callable[..., np.ndarray]
    needs_y: bool
    params: tuple[str, ...]


SCORES: Mapping[str, ScoreFamily] = MappingProxyType(
    {
        "gaussian_mean": ScoreFamily("gaussian_mean", gaussian_mean_score, False, ("sigma",)),
        "linear": ScoreFamily("linear", linear_score, True, ("sigma",)),
        "logistic": ScoreFamily("logistic", logistic_score, True, ()),
    }
)


def score(name: str, x, theta, y=None, **params) -> np.ndarray:
    """S_θ(z) of the family ``name`` in :data:`SCORES` for the records z = x (``gaussian_mean``) or z = (x, y)
    (``linear``, ``logistic``): an (N, d) array."""
    family = SCORES.get(name)
    if family is None:
        raise ConfigError(f"unknown score family {name!r}; known: {', '.join(SCORES)}")
    unknown = sorted(set(params) - set(family.params))
    if unknown:
        raise ConfigError(f"score family {name!r} takes no parameter {', '.join(unknown)} (takes: {family.params})")
    if family.needs_y != (y is not None):
        raise DataError(f"score family {name!r} {'needs' if family.needs_y else 'takes no'} responses y")
    return family.function(x, y, theta, **params) if family.needs_y else family.function(x, theta, **params)


def score_attack(estimate, theta, S) -> np.ndarray:
    """A_i = ⟨M(X) − θ, S_θ(z_i)⟩ for each row S_θ(z_i) of ``S`` (N, d): the score attack (2.3) of §2.2, with
    ``estimate`` = M(X) (d,) and ``theta`` = θ (d,), the true parameter or (§7) an independent reference estimate.
    Returns the (N,) statistics; Theorem 2.1 gives E A_i = 0 for candidates independent of X."""
    S = _records(S, "S")
    d = S.shape[1]
    return S @ (_vector(estimate, "estimate", d) - _vector(theta, "theta", d))


# ---------------------------------------------------------------------------------------------------------------
# Metrics of member and non-member statistics (larger = "member")
# ---------------------------------------------------------------------------------------------------------------


def _samples(members, nonmembers) -> tuple[np.ndarray, np.ndarray]:
    return _vector(members, "members"), _vector(nonmembers, "nonmembers")


def attack_auc(members, nonmembers) -> float:
    """Area under the ROC curve, P(A_member > A_non-member) + ½·P(A_member = A_non-member), over all member /
    non-member pairs: the Mann–Whitney U / (m·n), U = Σ_i (#{b < a_i} + ½·#{b = a_i}), the counts found by binary
    search in the sorted non-members (O(N log N)). U is a sum of integers and halves, exact in floats up to 2⁵³
    pairs, so it equals the mid-rank formula's U to the bit."""
    a, b = _samples(members, nonmembers)
    s = np.sort(b)
    below = int(np.searchsorted(s, a, side="left").sum(dtype=np.int64))
    up_to = int(np.searchsorted(s, a, side="right").sum(dtype=np.int64))
    return (below + up_to) / 2.0 / (a.size * b.size)


def tpr_at_fpr(members, nonmembers, fpr: float) -> float:
    """TPR of the rule "member iff A > t" at the most permissive t whose empirical FPR on the non-members is ≤ ``fpr``.

    With k = ⌊fpr·n⌋ (n non-members; ``fpr·n`` rounded down after a relative tolerance of 10⁻⁹, so 0.29·100 gives
    29, not 28), t is the (k + 1)-th largest non-member statistic (t = −∞ if k = n): at most k non-members exceed it,
    while every t below it lets k + 1 through. Ties at t count as non-members, so with ties the empirical FPR can be
    below ``fpr``. The threshold is chosen on the non-members that measure the FPR (the usual convention), so the
    FPR of t on fresh non-members may exceed ``fpr`` by the sampling error of an upper quantile.
    """
    a, b = _samples(members, nonmembers)
    n = b.size
    k = int(np.floor(_probability(fpr, "fpr", closed=True) * n * (1 + 1e-9)))
    if k >= n:
        return 1.0
    t = np.sort(b)[n - 1 - k]
    return float(np.count_nonzero(a > t)) / a.size


def attack_epsilon_lower_bound(
    members, nonmembers, delta: float, *, alpha: float = 0.05, select_fraction: float = 0.5, seed: int = 0
) -> float:
    """An empirical ε lower bound for the best threshold event on the attack statistic, confidence 1 − α.

    Honest split: both samples are shuffled (``seed``), so the split does not follow the caller's row order; the first
    ``select_fraction`` of each chooses the event — a threshold in either direction, favouring either sample — by
    the bound the remaining draws are predicted to give; the remaining draws alone bound it with two-sided
    Clopper–Pearson intervals, ε_lb = log((TPR_lo − δ)/FPR_hi), floored at 0. This is
    ``dpcost.dp.audit.epsilon_lower_bound(..., select="bound", select_fraction=...)``, i.e. ``choose_event`` then
    ``event_epsilon`` on held-out draws. (Choosing the threshold on the draws that bound it would bias ε_lb upward.)

    Validity: the bound covers the ε of replace-one neighbours (Theorem 2.1's X vs X'_i; θ must not depend on X) if
    the statistics are independent draws, one candidate per release (a fresh data set, release and reference each
    time). Candidates
    scored against one shared release are dependent through it, and the Clopper–Pearson coverage is then not
    guaranteed: read the result as descriptive.
    """
    from ..dp.audit import epsilon_lower_bound  # imported here: it needs scipy.stats (~0.3 s to import)

    a, b = _samples(members, nonmembers)
    d = float(delta)
    if not 0.0 <= d < 1.0:
        raise ConfigError(f"delta must be in [0, 1), got {delta!r}")
    al = _probability(alpha, "alpha", closed=False)
    frac = _probability(select_fraction, "select_fraction", closed=False)
    for name, s in (("members", a), ("nonmembers", b)):
        if not 1 <= int(s.size * frac) <= s.size - 1:
            raise DataError(f"{name}: {s.size} statistics leave no draw to choose or to bound the event with")
    rng = np.random.default_rng(seed)
    return float(
        epsilon_lower_bound(rng.permutation(a), rng.permutation(b), d, alpha=al, select="bound", select_fraction=frac)
    )


def dp_roc_ceiling(fpr, epsilon: float, delta: float) -> np.ndarray:
    """The largest TPR at each FPR that any membership test can reach against an (ε, δ)-DP release under
    replace-one neighbours (Kairouz, Oh & Viswanath 2015): min(1, e^ε·FPR + δ, 1 − e^{−ε}(1 − δ − FPR))."""
    f = np.asarray(fpr, dtype=float)
    e = float(epsilon)
    return np.clip(
        np.minimum.reduce([np.ones_like(f), np.exp(e) * f + delta, 1 - np.exp(-e) * (1 - delta - f)]), 0.0, 1.0
    )


def dp_auc_ceiling(epsilon: float, delta: float) -> float:
    """The largest AUC a membership test can reach against an (ε, δ)-DP release: the area under
    :func:`dp_roc_ceiling`, by the trapezoid rule on a 2¹⁶-point grid. The curve is concave and piecewise linear,
    so the rule is below the exact area, by at most 7.6·10⁻⁶ (at ε = 40, δ = 0; the kinks then fall between grid
    points): the safe side for a ceiling an attack is compared with. 0.5 at ε = δ = 0; e.g. 0.62 at (0.5, 0)."""
    if not (np.isfinite(epsilon) and epsilon >= 0 and 0 <= delta < 1):
        raise ConfigError(f"need epsilon >= 0 and delta in [0, 1), got {epsilon!r}, {delta!r}")
    f = np.linspace(0.0, 1.0, 2**16 + 1)
    return float(np.trapezoid(dp_roc_ceiling(f, epsilon, delta), f))


METRICS = ("auc", "tpr_fpr01", "tpr_fpr05", "epsilon_lb")


def attack_metrics(members, nonmembers, *, delta: float, alpha: float = 0.05, seed: int = 0) -> dict[str, float]:
    """One repetition's metrics, keyed as :data:`METRICS`: AUC, TPR at FPR 0.01 and 0.05, and ε_lb at (δ, α)."""
    return {
        "auc": attack_auc(members, nonmembers),
        "tpr_fpr01": tpr_at_fpr(members, nonmembers, 0.01),
        "tpr_fpr05": tpr_at_fpr(members, nonmembers, 0.05),
        "epsilon_lb": attack_epsilon_lower_bound(members, nonmembers, delta, alpha=alpha, seed=seed),
    }


def summarise_attack_metrics(per_rep: pd.DataFrame, by: str | Iterable[str] = ()) -> pd.DataFrame:
    """Mean and standard error over repetitions, per group of the ``by`` columns (none: one overall row).

    ``per_rep``: one row per repetition, with the :data:`METRICS` columns. Returns a tidy frame: the ``by`` columns,
    ``n_reps``, then each metric and its ``_se`` = sample sd (ddof 1)/√n_reps (NaN for a single repetition). ε_lb is
    floored at 0 per repetition and each value is a 1 − α bound; their mean is a descriptive average, not a bound.
    """
    keys = [by] if isinstance(by, str) else list(by)
    if not isinstance(per_rep, pd.DataFrame) or per_rep.empty:
        raise DataError("per_rep must be a non-empty DataFrame of per-repetition metrics")
    missing = [c for c in (*keys, *METRICS) if c not in per_rep.columns]
    if missing:
        raise DataError(f"per_rep lacks the columns {missing}")
    values = per_rep[list(METRICS)].apply(pd.to_numeric, errors="coerce")
    if not np.all(np.isfinite(values.to_numpy(dtype=float))):
        raise DataError("per_rep has missing or non-numeric metric values")
    frame = pd.concat([per_rep[keys], values], axis=1)
    if keys:
        grouped = frame.groupby(keys, sort=True, dropna=False)[list(METRICS)]
        mean, sd, n = grouped.mean(), grouped.std(ddof=1), grouped.size()
    else:
        mean, sd = values.mean().to_frame().T, values.std(ddof=1).to_frame().T
        n = pd.Series([len(values)], index=mean.index)
    out = pd.DataFrame({"n_reps": n.astype(int)}, index=mean.index)
    for m in METRICS:
        out[m] = mean[m]
        out[f"{m}_se"] = sd[m] / np.sqrt(n)
    return out.reset_index(drop=not keys)
