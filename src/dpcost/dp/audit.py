"""Empirical privacy audits: a statistical lower bound on the ε a mechanism really spends.

Run the mechanism many times on two neighbouring data sets D and D′ and look for an event S whose probabilities
violate (ε, δ)-DP, P[M(D) ∈ S] ≤ e^ε P[M(D′) ∈ S] + δ. With S chosen on one half of the draws and its two
probabilities bounded by Clopper–Pearson intervals on the other half, ε_lb = log((TPR_lo − δ) / FPR_hi) is a lower
bound on the true ε with confidence 1 − α. A mechanism whose ε_lb exceeds its claimed ε is not private as claimed
(Jagielski, Ullman & Oprea 2020; Nasr et al. 2021). Passing is necessary, not sufficient.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """Exact two-sided 1 − α interval for a binomial proportion k/n."""
    lo = 0.0 if k == 0 else stats.beta.ppf(alpha / 2, k, n - k + 1)
    hi = 1.0 if k == n else stats.beta.ppf(1 - alpha / 2, k + 1, n - k)
    return float(lo), float(hi)


def _candidates(a: np.ndarray, b: np.ndarray, n_thresholds: int) -> np.ndarray:
    pooled = np.concatenate([a, b])
    return np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, n_thresholds)))


def _best_event(a: np.ndarray, b: np.ndarray, delta: float, n_thresholds: int, min_count: int):
    """On the selection half: the threshold event {x > t} or {x < t}, and the order (D vs D′), of largest ε̂."""
    best = (-np.inf, None)
    for t in _candidates(a, b, n_thresholds):
        for side in (1, -1):
            pa = np.mean(side * a > side * t)
            pb = np.mean(side * b > side * t)
            for hi, lo, order in ((pa, pb, 0), (pb, pa, 1)):
                if lo * len(a) >= min_count and hi - delta > 0:
                    e = math.log((hi - delta) / lo)
                    if e > best[0]:
                        best = (e, (t, side, order))
    return best[1]


def epsilon_lower_bound(
    out_d: np.ndarray,
    out_d2: np.ndarray,
    delta: float,
    *,
    alpha: float = 0.05,
    n_thresholds: int = 400,
    min_count: int = 100,
) -> float:
    """Clopper–Pearson (1 − α) lower bound on ε from scalar outputs of M(D) and M(D′) (equal numbers of draws).

    The first half of each sample chooses a threshold event (and its direction); the second half bounds its
    probabilities, α split between the two intervals. Events seen fewer than ``min_count`` times in the first half
    are not candidates: thin tails make the choice overfit (measured: with 30 the bound for one mechanism ranged
    0.40–0.86 over seeds, with 100 0.66–0.86). Returns 0 if no event shows any privacy loss.
    """
    a, b = np.asarray(out_d, dtype=float), np.asarray(out_d2, dtype=float)
    h = min(len(a), len(b)) // 2
    choice = _best_event(a[:h], b[:h], delta, n_thresholds, min_count)
    if choice is None:
        return 0.0
    t, side, order = choice
    ea, eb = a[h : 2 * h], b[h : 2 * h]
    k_a, k_b = int(np.sum(side * ea > side * t)), int(np.sum(side * eb > side * t))
    k_hi, k_lo = (k_a, k_b) if order == 0 else (k_b, k_a)
    tpr_lo = clopper_pearson(k_hi, h, alpha)[0]  # each interval two-sided at level α, so each side errs ≤ α/2
    fpr_hi = clopper_pearson(k_lo, h, alpha)[1]
    if tpr_lo - delta <= 0:
        return 0.0
    return max(0.0, math.log((tpr_lo - delta) / fpr_hi))
