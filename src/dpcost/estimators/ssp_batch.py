"""Batches of the SSP family for :attr:`Method.batch <dpcost.estimators.method.Method.batch>`: many sets of
constants on one subsample (the decoy search's candidates), the separate calls' estimates bit for bit. The
estimators and their releases are :mod:`.ssp`'s; a batch only shares what is deterministic."""

from __future__ import annotations

import numpy as np

from ..dp.privacy import Privacy
from .base import check_design
from .ssp import clipped_sums, joint_ssp_from_sums


def joint_ssp_batch(
    X, y, *, privacy: Privacy, rngs: list[np.random.Generator], tunings: list[dict], plans: dict
) -> list[np.ndarray]:
    """:func:`~.ssp.joint_ssp` with every set of constants in ``tunings`` (each complete), run i with its own
    ``rngs[i]``: the separate calls' estimates bit for bit, each the same (ε, δ)-DP release (its one draw from its
    own generator). Shared, because deterministic: the clipped sums X'X, X'y (:func:`~.ssp.clipped_sums`), formed
    once per (B_X, B_Y) rather than once per candidate (the search's ratios share them). Each release computes its
    own plan (:func:`~.ssp.joint_ssp_from_sums`), so ``plans`` is not read."""
    X, y = check_design(X, y)
    sums: dict = {}
    out = []
    for t, rng in zip(tunings, rngs, strict=True):  # in order: the first refusal is the separate calls' first
        if (t["B_X"], t["B_Y"]) not in sums:
            sums[t["B_X"], t["B_Y"]] = clipped_sums(X, y, t["B_X"], t["B_Y"])
        s = joint_ssp_from_sums(*sums[t["B_X"], t["B_Y"]], len(y), privacy=privacy, rng=rng, **t)
        out.append(np.linalg.lstsq(s.G + s.lam * np.eye(len(s.b)), s.b, rcond=None)[0])  # joint_ssp's solve
    return out
