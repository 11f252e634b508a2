"""Designs: what one repetition draws from an analysis's data and how its estimate is scored.

A design holds the preprocessed data and the truth; ``subsample(m, rep)`` picks the rows of (m, rep) (from the
subsample stream, shared by every method), ``draw_at(rows)`` returns the estimator's positional arguments for them
(``draw(m, rep)``: both) and ``score(estimate, support, rows)`` the row's columns (:attr:`columns`).
``candidates(m, rep)`` gives the score attack's candidates on that subsample (:mod:`dpcost.analysis.attack`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from ..attacks.score import gaussian_mean_score, linear_score, logistic_score
from ..errors import ConfigError, DataError
from ..estimators.base import take_rows
from ..estimators.sums import ClippedRows
from .streams import rng_for, subsample_indices


def top_support(mu: np.ndarray, s: int) -> np.ndarray:
    """Indices of the s largest |μ_j| (ties: lowest index): the support a sparse estimate should find."""
    return np.argsort(-np.abs(mu), kind="stable")[:s]


@dataclass(frozen=True)
class Candidates:
    """The score attack's candidates of one (m, rep): the scores S_θ(z) (k, d) of k members and of k non-members,
    taken at the reference θ (d,), which is estimated from further records outside the subsample."""

    members: np.ndarray
    nonmembers: np.ndarray
    theta: np.ndarray


# The attacker's reference θ is fitted on at most this many rows: its own error (of order √(d/20,000)) is far below
# what a member moves a score by, and the attack's cost stops growing with the table (a fit on every other row of a
# 5,000,000-row table costs seconds per repetition). Every table up to 20,000 + 2k rows uses all its other rows.
REFERENCE_CAP = 20_000


def split_candidates(n_total: int, inside: np.ndarray, rng: np.random.Generator, cap: int, what: str):
    """(members, non-members, reference) row indices: k members drawn from ``inside`` (the subsample) and the rows
    outside it split into k non-members and a reference of the next ≥ k rows (at most :data:`REFERENCE_CAP`),
    k = min(|inside|, ⌊outside/2⌋, cap). Equal counts make AUC and TPR at a fixed FPR read alike for every m; the
    reference is disjoint from both. The outside rows are a uniformly random order of them, cut to the rows used:
    on a table far larger than those (:func:`_some_outside`) only those are drawn, so the cost stays O(rows used),
    not O(n) — 0.15–0.3 s per repetition on 5,000,000 rows before."""
    n_out = n_total - inside.size
    k = min(inside.size, n_out // 2, cap)
    if k < 2:
        raise ConfigError(
            f"the score attack needs at least 2 {what} outside the subsample as non-members and 2 more for the "
            f"reference; m = {inside.size} leaves {n_out} of {n_total}"
        )
    outside = _some_outside(n_total, inside, rng, k + max(k, REFERENCE_CAP))
    if outside is None:
        rest = np.ones(n_total, dtype=bool)
        rest[inside] = False
        outside = rng.permutation(np.flatnonzero(rest))  # the rows outside, sorted then shuffled (as setdiff1d's)
    return rng.choice(inside, size=k, replace=False), outside[:k], outside[k : k + max(k, REFERENCE_CAP)]


def _some_outside(n_total: int, inside: np.ndarray, rng: np.random.Generator, need: int) -> np.ndarray | None:
    """``need`` rows outside ``inside`` in uniformly random order, drawn in O(need) work: a uniform draw without
    replacement from all rows, those inside dropped (what is left is a uniform draw from the rows outside, in
    random order). None where that is no cheaper than shuffling every outside row — the draw would exceed 1/50 of
    the table, where numpy's choice shuffles the whole table anyway — or fell short (then the caller shuffles)."""
    size = int(need * n_total / (n_total - inside.size) * 1.1) + 64  # inside rows are dropped: draw that many more
    if size > n_total // 50:
        return None
    drawn = rng.choice(n_total, size=size, replace=False)
    mask = np.zeros(n_total, dtype=bool)
    mask[inside] = True
    kept = drawn[~mask[drawn]]
    return kept[:need] if kept.size >= need else None


# Prediction is scored on the outside rows among every k-th row of the table, k = ⌈n / PREDICTION_ROWS⌉: all of them
# up to 200,000 rows (every table here but flights), a systematic sample of at most 200,000 beyond (R²'s standard
# error from 200,000 rows is below 0.002), so that a repetition's cost does not grow with n.
PREDICTION_ROWS = 200_000


@dataclass(frozen=True)
class RegressionDesign:
    """Cai, Wang & Zhang (2021) §6.2: m rows (y_i, x_i) without replacement; error ‖β̂ − β‖₂. Prediction is scored
    on the rows outside the subsample (none at m = n: NaN; of a table over :data:`PREDICTION_ROWS` rows, those among
    every k-th row), which the estimate never saw: the out-of-sample
    R² = 1 − Σ(y − x'β̂)² / Σ(y − ȳ)² (ȳ their mean; R² ≤ 0: no better than predicting the mean) and the root mean
    squared prediction error, in the response's units."""

    X: np.ndarray
    y: np.ndarray
    truth: np.ndarray
    columns = ("error", "r2", "rmse")

    def __post_init__(self):
        if not (np.isfinite(self.X).all() and np.isfinite(self.y).all()):
            raise DataError("the design or response holds NaN or infinite values")

    @property
    def d(self) -> int:
        return self.X.shape[1]

    def subsample(self, m: int, rep: int, *, seed: int, dataset: str) -> np.ndarray:
        return subsample_indices(len(self.y), m, seed=seed, dataset=dataset, rep=rep)

    def draw_at(self, rows) -> tuple:
        return take_rows(self.X, rows), take_rows(self.y, rows)

    def draw(self, m: int, rep: int, *, seed: int, dataset: str) -> tuple:
        return self.draw_at(self.subsample(m, rep, seed=seed, dataset=dataset))

    def clipped_rows(self) -> ClippedRows:
        """The rows :meth:`draw_at` gathers, from which a sums method's subsamples are formed clipped
        (:meth:`~dpcost.estimators.method.Method.estimate_rows`)."""
        return ClippedRows(self.X, self.y)

    def score(self, estimate, support, rows=None) -> tuple:
        return float(np.linalg.norm(estimate - self.truth)), *self.prediction(estimate, rows)

    def prediction(self, estimate, rows) -> tuple[float, float]:
        """(R², RMSE) on the rows outside ``rows``; NaN when none are left or ``rows`` is not given."""
        n = len(self.y)
        if rows is None or len(rows) >= n:
            return np.nan, np.nan
        outside = np.ones(n, dtype=bool)
        outside[rows] = False
        step = -(-n // PREDICTION_ROWS)
        # every k-th row (k = 1 up to PREDICTION_ROWS rows), its fit, then the outside ones: no copy of the outside
        # rows, and a cost per repetition that does not grow with the table
        return r2_rmse(self.y[::step][outside[::step]], (self.X[::step] @ estimate)[outside[::step]])

    def candidates(self, rows, m: int, rep: int, *, seed: int, dataset: str, cap: int) -> Candidates:
        """Members: k rows of the subsample ``rows`` (that of (m, rep): :meth:`subsample`); non-members: k rows
        outside it; the reference θ: the OLS fit of the remaining rows (disjoint from both). Scores: the
        linear-model score (y − x'θ)x (σ = 1: a common scale)."""
        rng = rng_for(seed, dataset, "attack", m, rep)
        inside, outside, ref = split_candidates(len(self.y), rows, rng, cap, "rows")
        theta = np.linalg.lstsq(take_rows(self.X, ref), take_rows(self.y, ref), rcond=None)[0]
        return Candidates(
            linear_score(take_rows(self.X, inside), take_rows(self.y, inside), theta),
            linear_score(take_rows(self.X, outside), take_rows(self.y, outside), theta),
            theta,
        )


@dataclass(frozen=True)
class HeldOutRegressionDesign(RegressionDesign):
    """A regression design whose prediction is scored on a held-out split (X_test, y_test) that no subsample draws
    from, the same rows at every m (as the private-regression benchmarks report R²)."""

    X_test: np.ndarray = None
    y_test: np.ndarray = None

    def __post_init__(self):
        super().__post_init__()
        if self.X_test is None or len(self.y_test) < 2:
            raise DataError("a held-out design needs at least 2 test rows")

    def prediction(self, estimate, rows) -> tuple[float, float]:
        return r2_rmse(self.y_test, self.X_test @ estimate)


def r2_rmse(y: np.ndarray, fitted: np.ndarray) -> tuple[float, float]:
    """Out-of-sample R² = 1 − Σ(y − ŷ)²/Σ(y − ȳ)² and the root mean squared error √(Σ(y − ŷ)²/n); NaN for fewer than
    2 rows or a constant y."""
    if len(y) < 2:
        return np.nan, np.nan
    sse = float(np.sum((y - fitted) ** 2))
    tss = float(np.sum((y - y.mean()) ** 2))
    return (1.0 - sse / tss if tss > 0 else np.nan), float(np.sqrt(sse / len(y)))


@dataclass(frozen=True)
class SparseLogisticDesign(RegressionDesign):
    """A sparse logistic regression on records (y_i ∈ {0, 1}, x_i): m records without replacement; error
    ‖β̂ − β‖₂ against the full-sample fit β, and how many of β's s largest |coefficients| the estimate selected."""

    s: int = 1
    columns = ("error", "support_recovered")

    @functools.cached_property  # read on every repetition
    def _support(self) -> frozenset:
        return frozenset(top_support(self.truth, self.s).tolist())

    def score(self, estimate, support, rows=None) -> tuple:
        found = np.nan if support is None else len(self._support.intersection(np.asarray(support).tolist()))
        return float(np.linalg.norm(estimate - self.truth)), found

    def candidates(self, rows, m: int, rep: int, *, seed: int, dataset: str, cap: int) -> Candidates:
        """Members: k records of the subsample ``rows``; non-members: k records outside it. The attacker's reference
        is the null model fitted on the remaining records — the intercept logit(ȳ_ref), every other coefficient 0
        (no association; a sparse fit on the few records left would be noise). Scores: (y − sigmoid(x'θ))x."""
        rng = rng_for(seed, dataset, "attack", m, rep)
        inside, outside, ref = split_candidates(len(self.y), rows, rng, cap, "records")
        rate = np.clip(self.y[ref].mean(), 0.5 / len(ref), 1 - 0.5 / len(ref))
        theta = np.zeros(self.d)
        theta[0] = np.log(rate / (1 - rate))  # the first column is the intercept
        return Candidates(
            logistic_score(take_rows(self.X, inside), take_rows(self.y, inside), theta),
            logistic_score(take_rows(self.X, outside), take_rows(self.y, outside), theta),
            theta,
        )


@dataclass(frozen=True)
class TwoGroupMeanDesign:
    """Cai, Wang & Zhang (2021) §6.1: m rows of A and m rows of B without replacement, paired and differenced;
    error ‖μ̂ − μ‖₂ and how many of the true top-s coordinates the estimate selected."""

    A: np.ndarray
    B: np.ndarray
    truth: np.ndarray
    s: int
    columns = ("error", "support_recovered")
    _support: frozenset = field(init=False, repr=False)

    def __post_init__(self):
        if not (np.isfinite(self.A).all() and np.isfinite(self.B).all()):
            raise DataError("the genotype matrices hold NaN or infinite values")
        object.__setattr__(self, "_support", frozenset(top_support(self.truth, self.s).tolist()))

    @property
    def d(self) -> int:
        return self.A.shape[1]

    def subsample(self, m: int, rep: int, *, seed: int, dataset: str) -> tuple[np.ndarray, np.ndarray]:
        return (
            subsample_indices(len(self.A), m, seed=seed, dataset=dataset, rep=rep, group="A"),
            subsample_indices(len(self.B), m, seed=seed, dataset=dataset, rep=rep, group="B"),
        )

    def draw_at(self, rows) -> tuple:
        ia, ib = rows
        return (self.A[ia].astype(float) - self.B[ib],)

    def draw(self, m: int, rep: int, *, seed: int, dataset: str) -> tuple:
        return self.draw_at(self.subsample(m, rep, seed=seed, dataset=dataset))

    def score(self, estimate, support, rows=None) -> tuple:
        found = np.nan if support is None else len(self._support.intersection(np.asarray(support).tolist()))
        return float(np.linalg.norm(estimate - self.truth)), found

    def candidates(self, rows, m: int, rep: int, *, seed: int, dataset: str, cap: int) -> Candidates:
        """The Homer et al. (2008) setting: the candidates are people. In each group, k of its m subsampled people
        (``rows``: the (A, B) indices of :meth:`subsample`) are members and k people outside the subsample non-members;
        the people left in both groups form the reference panel, whose allele means p̂ stand for the population's
        (Homer's HapMap). The two groups are strata of one population, so the attacker's reference for μ = E a − E b is
        θ = 0: a difference of the two small reference means would add more noise (variance v(1/k_A + 1/k_B) per SNP)
        than the group differences it estimates. A person of A enters μ̂ with weight +1/m, one of B with −1/m: scores
        z − p̂ and −(z − p̂)."""
        picks, panel = [], []
        for group, G, idx in (("A", self.A, rows[0]), ("B", self.B, rows[1])):
            rng = rng_for(seed, dataset, "attack", group, m, rep)
            inside, outside, ref = split_candidates(len(G), idx, rng, cap, f"people of group {group}")
            picks.append((G, inside, outside))
            panel.append(G[ref])
        p_hat = np.vstack(panel).mean(axis=0)
        score = [
            (
                sign * gaussian_mean_score(G[inside].astype(float), p_hat),
                sign * gaussian_mean_score(G[outside].astype(float), p_hat),
            )
            for sign, (G, inside, outside) in zip((1.0, -1.0), picks, strict=True)
        ]
        return Candidates(np.vstack([a for a, _ in score]), np.vstack([b for _, b in score]), np.zeros(self.d))
