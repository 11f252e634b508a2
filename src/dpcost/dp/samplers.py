"""Floating-point-safe additive noise: exact discrete Laplace and discrete Gaussian samplers on a grid.

Why: ``value + rng.laplace(...)`` is not ε-DP on a computer. numpy maps a 53-bit uniform through ``log``, so the
floats reachable from f and from f′ differ, and an attacker who sees one output can often tell which it came from
(Mironov 2012; measured here: ε ≥ 10.7 at a claimed 1). The fix (Canonne, Kamath & Steinke 2020):

* the noise is an integer Z drawn *exactly* — only uniform integers from ``Generator.integers`` (exact, by
  rejection), never a float transcendental — from the discrete Laplace, P(z) ∝ exp(−|z|/t), or the discrete
  Gaussian, P(z) ∝ exp(−z²/(2t²)), with t = 2**GRID_BITS (CKS Algorithms 1–3);
* a release is g·(round(f/g) + Z) with grid step g = scale/t, so its support is the whole grid whatever f is;
  multiplying the integer by g afterwards is post-processing.

Cost, paid in the plans (:func:`grid_scale`): rounding moves each of k coordinates by at most g/2, so between
neighbours the integer vectors differ by at most Δ/g + r, with r = k (ℓ1) or √k (ℓ2, and r = 1 for the per-score
sup norm of a selection). Every calibration in the package is linear in Δ (scale = c·Δ), so the scale for the
inflated sensitivity Δ + r·g solves scale = c(Δ + r·scale/t): scale = c·Δ / (1 − c·r/t). Laplace: the discrete
Laplace with integer sensitivity Δ_Z and scale t is exactly (Δ_Z/t)-DP, so the guarantee is exact. Gaussian: the
discrete Gaussian has the same Rényi divergences as the continuous one (CKS Prop. 5), so RDP accounting carries over
exactly; its (ε, δ) curve can exceed the continuous one by a relative ~1.5e-7 (at σ = 1024 grid steps, measured
by exact summation in tests/unit/dp/test_samplers.py). The discrete Laplace is exactly pure-DP, but its Rényi
divergences (used by the tight Peeling calibration) exceed the continuous ones by a relative ≈ 0.3/(t·Δ_Z) for an
integer sensitivity of Δ_Z steps (measured; ~1e-10 on our grid). Every grid scale is therefore raised by a relative
10⁻⁶ (:data:`MARGIN`), which lowers δ and the Rényi divergences by far more. The margin rests on these measurements,
not on a proof.

``sampler="float-unsafe"`` keeps the old ``rng.laplace`` / ``rng.normal`` path, at the continuous scale, for speed
comparisons only: its guarantee does not hold on a computer.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ..errors import PrivacyError

SAMPLERS = ("exact", "float-unsafe")
GRID_BITS = 20
T = 1 << GRID_BITS  # the noise scale in grid steps
MARGIN = 1e-6  # relative increase of every grid noise scale covering the discrete curves' excess (module docstring)
_SAFE = float(2**52)  # |f/g| below this rounds to the right integer in float64


def check_sampler(sampler: str) -> None:
    if sampler not in SAMPLERS:
        raise PrivacyError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")


# ---- exact integer samplers (Canonne, Kamath & Steinke 2020) --------------------------------------------------
# The order, arguments and shapes of the ``rng.integers`` calls below fix every draw, and results computed from them
# are pinned by digests: a change here must keep that sequence (and the generator's final state) exactly.

# Constants that spare small batches numpy calls (about a microsecond each, most of the cost of a small batch besides
# the ``rng.integers`` calls): lookup tables indexed by a count 0 … 8 of trials, and read-only arrays that are sliced
# instead of built on every call.
_EVEN = np.arange(9) % 2 == 0  # _EVEN[count]: count is even
_ALL = {width: np.arange(9) == width for width in (1, 2, 8)}  # _ALL[width][count]: count == width
_ROWS = 1024  # rows of trial bounds kept per (den, k0, width)
_ONES = np.ones(8 * _ROWS, dtype=np.int64)
_ONES.flags.writeable = False


@functools.lru_cache(maxsize=256)
def _bound_rows(den, k0: int, width: int) -> np.ndarray:
    """``_ROWS`` identical rows of den·k, k = k0 … k0 + width − 1, as int64 (read-only: shared between calls)."""
    row = np.asarray(den, dtype=np.int64) * np.arange(k0, k0 + width, dtype=np.int64)
    rows = np.tile(row, (_ROWS, 1))
    rows.flags.writeable = False
    return rows


def _bounds(den, k0: int, width: int, n: int) -> np.ndarray:
    """The exclusive upper bounds den·k of n rows of trials Bernoulli(num/(den·k)), k = k0 … k0 + width − 1."""
    if n <= _ROWS:
        return _bound_rows(den, k0, width)[:n]
    return np.tile(_bound_rows(den, k0, width)[0], (n, 1))


def _bernoulli_exp_frac(num: np.ndarray, den, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(−num/den)) elementwise for integers 0 ≤ num ≤ den and a scalar den (CKS Algorithm 1, γ ≤ 1).

    K is the index of the first failure of Bernoulli(γ/k), k = 1, 2, …: P(K > k) = γ^k/k!, so P(K odd) = e^{−γ}.
    The trials are drawn ``width`` at a time, 8 (2 from 1,000 elements on): one numpy round instead of one per k;
    trials after the first failure are drawn and ignored, which does not change the distribution.
    """
    num = np.asarray(num, dtype=np.int64).ravel()
    if not num.size:
        return np.zeros(0, dtype=bool)
    return _frac_rounds(num, den, 1, 8 if num.size < 1000 else 2, rng)


def _frac_rounds(num: np.ndarray, den, k0: int, width: int, rng: np.random.Generator) -> np.ndarray:
    """Whether K is odd (:func:`_bernoulli_exp_frac`), from the trials k = k0 … k0 + width − 1 of every element and,
    for the elements without a failure among them, from further rounds of ``width`` trials."""
    success = np.zeros((num.size, width + 1), dtype=bool)  # the last column, never set, ends every row with a failure
    bounds = _bounds(den, k0, width, num.size)
    np.less(rng.integers(0, bounds), num[:, None], out=success[:, :width])  # Bernoulli(γ/k), exact
    first = success.argmin(axis=1)  # the first failure is trial k0 + first; first = width: none yet
    odd = _EVEN[first]  # K = k0 + first is odd, as k0 is (the width is even)
    more = _ALL[width][first]
    if np.count_nonzero(more):
        odd[more] = _frac_rounds(num[more], den, k0 + width, width, rng)
    return odd


def _bernoulli_exp_one(n: int, rng: np.random.Generator) -> np.ndarray:
    """n i.i.d. Bernoulli(e^{−1})."""
    return _bernoulli_exp_frac(_ONES[:n] if n <= _ONES.size else np.ones(n, dtype=np.int64), 1, rng)


def bernoulli_exp(num: np.ndarray, den, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(−num/den)) for integers num ≥ 0, den > 0: ⌊γ⌋ Bernoulli(e^{−1}) trials must all succeed, and one
    Bernoulli(exp(−(γ − ⌊γ⌋)))."""
    num = np.asarray(num, dtype=np.int64).ravel()
    whole, rest = np.divmod(num, den)
    ok = _bernoulli_exp_frac(rest, den, rng)
    m = int(np.add.reduce(whole))
    if m:  # all the e^{-1} trials at once; an element with a failed one is rejected
        trials = _bernoulli_exp_one(m, rng)
        ok[np.repeat(np.arange(num.size), whole)[~trials]] = False
    return ok


def _geometric(k: int, rng: np.random.Generator) -> np.ndarray:
    """k draws of the number of successes of Bernoulli(e^{−1}) before the first failure. Small batches draw 8 trials
    a round (fewer numpy calls), large ones 1 (fewer wasted trials)."""
    return _geometric_rounds(k, 8 if k < 1000 else 1, rng)


def _geometric_rounds(k: int, width: int, rng: np.random.Generator) -> np.ndarray:
    """:func:`_geometric` with ``width`` trials a round: the successes among the first ``width`` trials of each draw,
    plus those of further rounds for the draws without a failure yet."""
    if not k:
        return np.zeros(0, dtype=np.int64)
    trials = np.zeros((k, width + 1), dtype=bool)  # the last column, never set, ends every row with a failure
    trials[:, :width] = _bernoulli_exp_one(k * width, rng).reshape(k, width)
    lead = trials.argmin(axis=1)  # leading successes
    more = _ALL[width][lead]
    if again := np.count_nonzero(more):
        lead[more] += _geometric_rounds(again, width, rng)
    return lead


def _batch(need: int, rate: float) -> int:
    """Attempts to make at once so that one round usually yields ``need`` accepted draws (fewer numpy rounds)."""
    return int(need / rate) + 16


def _collect(need: int, rate: float, attempt) -> np.ndarray:
    """The first ``need`` accepted values of i.i.d. rejection-sampling attempts, made in oversized batches."""
    parts, have = [], 0
    while have < need:
        values = attempt(_batch(need - have, rate))[: need - have]
        parts.append(values)
        have += len(values)
    if len(parts) == 1:  # the usual case: one batch was enough
        return parts[0]
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)


def discrete_laplace(t: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` exact draws of the discrete Laplace P(z) ∝ exp(−|z|/t) on the integers (CKS Algorithm 2, s = 1)."""

    def attempt(k: int) -> np.ndarray:
        U = rng.integers(0, t, size=k)
        keep = _bernoulli_exp_frac(U, t, rng)  # accept U with probability exp(−U/t)
        X = U[keep] + t * _geometric(np.count_nonzero(keep), rng)
        negative = rng.integers(0, 2, size=k)[keep].astype(bool)
        np.negative(X, out=X, where=negative)
        if np.count_nonzero(U) == k:  # no U = 0, so no X = 0
            return X
        return X[~negative | (X != 0)]  # −0 is rejected so that 0 is not counted twice

    return _collect(size, 0.6, attempt)  # acceptance ≈ 1 − 1/e


def discrete_gaussian(t: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` exact draws of the discrete Gaussian P(z) ∝ exp(−z²/(2t²)) (CKS Algorithm 3 with its Laplace scale
    equal to σ = t: a discrete Laplace(t) draw Y is kept with probability exp(−(|Y| − t)²/(2t²)))."""

    def attempt(k: int) -> np.ndarray:
        Y = discrete_laplace(t, k, rng)
        a = np.abs(Y) - t
        # (|Y| − t)² must fit in int64: |Y| ≥ 2^31 has probability below exp(−2^11) at t = 2^20.
        if np.maximum.reduce(np.abs(a)) >= 2**31:
            raise RuntimeError("discrete Gaussian: a Laplace proposal beyond 2^31 (probability < exp(-2048))")
        return Y[bernoulli_exp(a * a, 2 * t * t, rng)]

    return _collect(size, 0.72, attempt)  # acceptance ≈ e^{-1/2} sqrt(pi/2) = 0.76


# ---- releases on the grid ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GridNoise:
    """Noise in grid steps (integers when exact) and the step g = scale / T; :meth:`add` makes the release."""

    steps: np.ndarray
    step: float
    exact: bool

    def __getitem__(self, index) -> GridNoise:
        return GridNoise(self.steps[index], self.step, self.exact)

    def add(self, value) -> np.ndarray:
        """The released value: g·(round(f/g) + Z) (exact), or f + g·Z (float-unsafe)."""
        value = np.asarray(value, dtype=float)
        if not self.exact:
            return value + self.step * self.steps
        k = value / self.step
        if np.count_nonzero(np.abs(k) < _SAFE) < k.size:  # not all below (NaN included)
            raise PrivacyError(
                "a value to be released is not finite or exceeds 2^52 grid steps of its noise: "
                "its true value is not bounded as its sensitivity assumes"
            )
        return self.step * (np.rint(k) + self.steps)


def draw(kind: str, scale: float, shape, rng: np.random.Generator, sampler: str = "exact") -> GridNoise:
    """Noise of ``kind`` (``"laplace"``: scale b; ``"gaussian"``: standard deviation σ) for values of ``shape``."""
    check_sampler(sampler)
    if not (math.isfinite(scale) and scale > 0):
        raise PrivacyError(f"noise scale must be a finite number > 0, got {scale!r}")
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)
    size = math.prod(shape)
    if kind not in ("laplace", "gaussian"):
        raise ValueError(f"unknown noise kind {kind!r}")
    if sampler == "float-unsafe":
        z = rng.laplace(0.0, T, size) if kind == "laplace" else rng.normal(0.0, T, size)
        return GridNoise(z.reshape(shape), scale / T, False)
    z = discrete_laplace(T, size, rng) if kind == "laplace" else discrete_gaussian(T, size, rng)
    return GridNoise(z.reshape(shape).astype(float), scale / T, True)


def add_noise(value, kind: str, scale: float, rng: np.random.Generator, sampler: str = "exact") -> np.ndarray:
    """``value`` released with fresh noise of ``kind`` and ``scale`` (see :func:`draw`)."""
    value = np.asarray(value, dtype=float)
    return draw(kind, scale, value.shape, rng, sampler).add(value)


def rounding_steps(k: int, norm: str) -> float:
    """How far rounding k coordinates to the grid can move the integer vectors of two neighbours apart, in steps."""
    if norm == "l1":
        return float(k)
    if norm == "l2":
        return math.sqrt(k)
    if norm == "linf":
        return 1.0
    raise ValueError(f"unknown norm {norm!r}")


def grid_scale(scale: float, sensitivity: float, k: int, norm: str, kind: str, sampler: str = "exact") -> float:
    """The noise scale to use for a release of k coordinates whose continuous calibration gives ``scale`` for
    ``sensitivity``: c·Δ / (1 − c·r/T) with c = (scale/Δ)·(1 + MARGIN), which is c·(Δ + r·g): the same calibration
    applied to the sensitivity inflated by rounding (module docstring). Unchanged under ``float-unsafe``."""
    check_sampler(sampler)
    if sampler == "float-unsafe":
        return scale
    c = (scale / sensitivity) * (1 + MARGIN)  # scale per unit of Δ
    inflation = c * rounding_steps(k, norm) / T
    if not inflation < 0.5:
        raise PrivacyError(
            f"noise of {scale / sensitivity:.3g} times the sensitivity over {k} coordinates is too coarse for the "
            f"grid of 2^{GRID_BITS} steps per noise scale"
        )
    return c * sensitivity / (1 - inflation)  # = c (Δ + r g) with g = scale / T


def describe(kind: str, k: int, norm: str, sampler: str) -> str:
    """How a release's noise was drawn, for its plan and the ledger (k = 0: a release without a sensitivity)."""
    if sampler == "float-unsafe":
        return f"float-unsafe numpy {kind} (NOT private on a computer: Mironov 2012)"
    if k == 0:  # a release with no sensitivity (a paper's printed noise): nothing to pay for
        return f"exact discrete {kind} on a grid of scale/2^{GRID_BITS}; no sensitivity, so no rounding cost"
    r = rounding_steps(k, norm)
    return (
        f"exact discrete {kind} on a grid of scale/2^{GRID_BITS}; sensitivity inflated by {r:.3g} grid steps "
        f"for rounding {k} coordinate(s); scale raised by a relative {MARGIN:g} for the discrete curve"
    )
