"""Designs: what one repetition draws from an analysis's data and how its estimate is scored.

A design holds the preprocessed data and the truth; ``draw(m, rep)`` returns the estimator's positional arguments
for the subsample of (m, rep) (from the subsample stream, shared by every method) and ``score`` the row's columns.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import DataError
from .streams import subsample_indices


def top_support(mu: np.ndarray, s: int) -> np.ndarray:
    """Indices of the s largest |μ_j| (ties: lowest index): the support a sparse estimate should find."""
    return np.argsort(-np.abs(mu), kind="stable")[:s]


@dataclass(frozen=True)
class RegressionDesign:
    """Cai, Wang & Zhang (2021) §6.2: m rows (y_i, x_i) without replacement; error ‖β̂ − β‖₂."""

    X: np.ndarray
    y: np.ndarray
    truth: np.ndarray
    columns = ("error",)

    def __post_init__(self):
        if not (np.isfinite(self.X).all() and np.isfinite(self.y).all()):
            raise DataError("the design or response holds NaN or infinite values")

    @property
    def d(self) -> int:
        return self.X.shape[1]

    def draw(self, m: int, rep: int, *, seed: int, dataset: str) -> tuple:
        idx = subsample_indices(len(self.y), m, seed=seed, dataset=dataset, rep=rep)
        return self.X[idx], self.y[idx]

    def score(self, estimate, support) -> tuple:
        return (float(np.linalg.norm(estimate - self.truth)),)


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

    def draw(self, m: int, rep: int, *, seed: int, dataset: str) -> tuple:
        ia = subsample_indices(len(self.A), m, seed=seed, dataset=dataset, rep=rep, group="A")
        ib = subsample_indices(len(self.B), m, seed=seed, dataset=dataset, rep=rep, group="B")
        return (self.A[ia].astype(float) - self.B[ib],)

    def score(self, estimate, support) -> tuple:
        found = np.nan if support is None else len(self._support.intersection(np.asarray(support).tolist()))
        return float(np.linalg.norm(estimate - self.truth)), found
