"""Batches of the SSP family for :attr:`Method.batch <dpcost.estimators.method.Method.batch>`: many sets of
constants on one subsample (the decoy search's candidates), the separate calls' estimates bit for bit. The
estimators and their releases are :mod:`.ssp`'s (each release computes its own plan there, so ``plans`` is not
read); a batch only shares what is deterministic: the clipped sums (:func:`sums`)."""

from __future__ import annotations

import numpy as np

from ..dp.mechanisms import check_positive
from ..dp.privacy import Privacy
from .base import check_design, clip_rows
from .ssp import adassp_from_sums, joint_ssp_from_sums, solve_statistics, ssp_from_sums


def sums(X, y, B_X: float, B_Y: float, memo: dict) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~.ssp.clipped_sums` (X'X, X'y) of a checked design, its bounds checked in the same order, with the
    clipped X and X'X formed once per B_X and X'y once per (B_X, B_Y) in ``memo``: the same operations as
    :func:`~.base.clip_design`'s on the same arrays, so the same bits."""
    B_X, B_Y = check_positive("B_X", B_X), check_positive("B_Y", B_Y)
    if B_X not in memo:
        Xc = clip_rows(X, B_X)
        memo[B_X] = Xc, Xc.T @ Xc, {}
    Xc, G, products = memo[B_X]
    if B_Y not in products:
        products[B_Y] = Xc.T @ np.clip(y, -B_Y, B_Y)
    return G, products[B_Y]


def _batch(release, X, y, privacy: Privacy, rngs: list, tunings: list[dict]) -> list:
    """``release`` (an ``*_from_sums``) of every run, in order (the first refusal is the separate calls' first), run
    i with ``rngs[i]`` and ``tunings[i]`` on the sums of :func:`sums`."""
    X, y = check_design(X, y)
    memo: dict = {}
    return [
        release(*sums(X, y, t["B_X"], t["B_Y"], memo), len(y), privacy=privacy, rng=rng, **t)
        for t, rng in zip(tunings, rngs, strict=True)
    ]


def ssp_batch(X, y, *, privacy: Privacy, rngs: list, tunings: list[dict], plans: dict) -> list[np.ndarray]:
    """:func:`~.ssp.ssp` with every set of constants in ``tunings``, run i with its own ``rngs[i]`` (its draws)."""
    return [solve_statistics(s) for s in _batch(ssp_from_sums, X, y, privacy, rngs, tunings)]


def adassp_batch(X, y, *, privacy: Privacy, rngs: list, tunings: list[dict], plans: dict) -> list[np.ndarray]:
    """:func:`~.ssp.adassp` with every set of constants in ``tunings``, run i with its own ``rngs[i]`` (its draws)."""
    return [_ridge_solve(s) for s in _batch(adassp_from_sums, X, y, privacy, rngs, tunings)]


def joint_ssp_batch(X, y, *, privacy: Privacy, rngs: list, tunings: list[dict], plans: dict) -> list[np.ndarray]:
    """:func:`~.ssp.joint_ssp` with every set of constants in ``tunings``, run i with its own ``rngs[i]`` (its one
    draw); the search's ratios share the sums of a (B_X, B_Y), its B_Y the clipped X and X'X of a B_X."""
    return [_ridge_solve(s) for s in _batch(joint_ssp_from_sums, X, y, privacy, rngs, tunings)]


def _ridge_solve(s) -> np.ndarray:
    """(G̃ + λI)⁻¹b̃ as :func:`~.ssp.adassp` and :func:`~.ssp.joint_ssp` solve it (λI added even when λ = 0)."""
    return np.linalg.lstsq(s.G + s.lam * np.eye(len(s.b)), s.b, rcond=None)[0]
