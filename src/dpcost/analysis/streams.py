"""Identity-derived random streams: a result depends only on its identity, never on job order, core count or
executor. The subsample of (dataset, m, rep) does not depend on the method, so every method is scored on exactly the
same subsamples (paired comparisons)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

import numpy as np

from ..errors import ConfigError


def rng_for(seed: int, *identity: str | int) -> np.random.Generator:
    """A generator for one identity, e.g. ``rng_for(seed, "housing", "noise", "noisy_gd", 2000, 7)``."""
    text = "\x1f".join(str(part) for part in identity).encode()
    key = np.frombuffer(hashlib.sha256(text).digest(), dtype=np.uint32)
    return np.random.default_rng(np.random.SeedSequence(entropy=int(seed), spawn_key=tuple(int(k) for k in key)))


def noise_rng(
    seed: int, dataset: str, method: str, m: int, rep: int, *, privacy, tuning: Mapping, params: Mapping
) -> np.random.Generator:
    """The noise stream of one release. Its identity holds everything that makes the release different — ε, the δ
    specification, calibration, neighbours, sampler, the tuning constants and analysis parameters — so two releases
    never share noise: with a shared stream, a paper and a tight run of the same estimator give
    (σ_p β̂_t − σ_t β̂_p)/(σ_p − σ_t) = the non-private fit. The subsample stream stays shared across methods."""
    release = {
        "epsilon": privacy.epsilon,
        "delta": privacy.delta,  # the number or the formula in n, as specified
        "calibration": privacy.calibration,
        "neighbours": privacy.neighbours,
        "sampler": privacy.sampler,
        "tuning": dict(tuning),
        "params": dict(params),
    }
    text = json.dumps(release, sort_keys=True, default=repr)
    return rng_for(seed, dataset, "noise", method, m, rep, text)


def subsample_indices(n_total: int, m: int, *, seed: int, dataset: str, rep: int, group: str = "") -> np.ndarray:
    """m distinct row indices out of n_total, the same for every method."""
    if not 2 <= m <= n_total:
        raise ConfigError(f"sample size m={m} must lie between 2 and the {n_total} rows available")
    return rng_for(seed, dataset, "subsample", group, m, rep).choice(n_total, size=m, replace=False)
