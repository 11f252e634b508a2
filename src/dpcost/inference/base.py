"""What every interval procedure shares: the :class:`Interval` it returns, the level check, and the identity-derived
generator of an interval's own releases."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field

import numpy as np

from ..dp.plan import PrivacyPlan
from ..errors import PrivacyError

# what a procedure puts out when an endpoint would not be finite (a near-singular noisy solve): the largest float,
# so a release is total (finite for every finite input) and the interval is as wide as a float can say
FLOAT_MAX = float(np.finfo(float).max)


@dataclass(frozen=True)
class Interval:
    """Confidence intervals for every coordinate of β at ``level``: [lower, upper] around ``centre``.

    ``plan`` is the privacy plan of the whole release (the estimate and every extra release an interval needs), None
    for the non-private reference. ``method`` the estimator, ``route`` the procedure (``bootstrap``, ``delta``,
    ``blocks``, ``classical``, ``hc3``), ``quantile`` the reference distribution in words (e.g. ``t(9)``), and
    ``details`` the public by-products (σ̂², standard errors, block count)."""

    lower: np.ndarray
    upper: np.ndarray
    centre: np.ndarray
    level: float
    method: str
    route: str
    quantile: str
    plan: PrivacyPlan | None
    details: dict = field(default_factory=dict)

    @property
    def width(self) -> np.ndarray:
        return self.upper - self.lower

    def covers(self, beta) -> np.ndarray:
        """Which coordinates of ``beta`` lie in their interval (closed)."""
        beta = np.asarray(beta, dtype=float)
        return (self.lower <= beta) & (beta <= self.upper)


def check_level(level: float) -> float:
    """A confidence level strictly between 0 and 1."""
    if not (isinstance(level, (int, float)) and not isinstance(level, bool) and 0 < level < 1):
        raise PrivacyError(f"level must lie strictly between 0 and 1, got {level!r}")
    return float(level)


def finite(a: np.ndarray) -> np.ndarray:
    """``a`` with ±inf and NaN mapped into [−FLOAT_MAX, FLOAT_MAX] (NaN to the widest side: callers pass lower
    endpoints negated)."""
    return np.clip(np.nan_to_num(np.asarray(a, dtype=float), nan=FLOAT_MAX), -FLOAT_MAX, FLOAT_MAX)


def make_interval(lower, upper, centre, **kw) -> Interval:
    """An :class:`Interval` with finite endpoints (a NaN endpoint becomes the widest float) and lower ≤ upper."""
    lo = -finite(-np.asarray(lower, dtype=float))
    hi = finite(upper)
    return Interval(np.minimum(lo, hi), np.maximum(lo, hi), finite(np.nan_to_num(centre, nan=0.0)), **kw)


def derived_rng(rng: np.random.Generator, *identity: str | int) -> np.random.Generator:
    """A generator for one of an interval's own releases, named by ``identity`` (method, release, constants), derived
    from ``rng``'s seed sequence and its current state WITHOUT drawing from it: the estimate's draws from ``rng`` stay
    exactly the estimator's, and two releases never share noise (the rule of :func:`dpcost.analysis.streams.
    noise_rng`). A second call with the same, advanced, generator derives a different stream."""
    ss = rng.bit_generator.seed_seq
    state = json.dumps(rng.bit_generator.state, sort_keys=True, default=str)
    text = "\x1f".join([state, *(str(part) for part in identity)]).encode()
    key = tuple(int(k) for k in np.frombuffer(hashlib.sha256(text).digest(), dtype=np.uint32))
    return np.random.default_rng(np.random.SeedSequence(entropy=ss.entropy, spawn_key=tuple(ss.spawn_key) + key))


def check_rows(n: int, d: int, at_least: int = 2) -> None:
    """An interval needs n ≥ d + ``at_least`` rows (residual degrees of freedom)."""
    if n < d + at_least or not math.isfinite(n):
        raise PrivacyError(f"an interval needs at least d + {at_least} = {d + at_least} rows, got {n}")
