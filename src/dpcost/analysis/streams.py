"""Identity-derived random streams: a result depends only on its identity, never on job order, core count or
executor. The subsample of (dataset, m, rep) does not depend on the method, so every method is scored on exactly the
same subsamples (paired comparisons)."""

from __future__ import annotations

import hashlib

import numpy as np

from ..errors import ConfigError


def rng_for(seed: int, *identity: str | int) -> np.random.Generator:
    """A generator for one identity, e.g. ``rng_for(seed, "housing", "noise", "noisy_gd", 2000, 7)``."""
    text = "\x1f".join(str(part) for part in identity).encode()
    key = np.frombuffer(hashlib.sha256(text).digest(), dtype=np.uint32)
    return np.random.default_rng(np.random.SeedSequence(entropy=int(seed), spawn_key=tuple(int(k) for k in key)))


def subsample_indices(n_total: int, m: int, *, seed: int, dataset: str, rep: int, group: str = "") -> np.ndarray:
    """m distinct row indices out of n_total, the same for every method."""
    if not 2 <= m <= n_total:
        raise ConfigError(f"sample size m={m} must lie between 2 and the {n_total} rows available")
    return rng_for(seed, dataset, "subsample", group, m, rep).choice(n_total, size=m, replace=False)
