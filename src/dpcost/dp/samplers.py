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

Noise this module does not draw (a posterior sample or a sketch whose covariance depends on the data, noise inside
an argmin, a peer library's samplers) is labelled by :func:`describe_float`: its plan says how it is drawn and
that its guarantee is NOT PROVEN (floating point), and the ledger leaves such a method out of the table's
composition (:mod:`dpcost.analysis.ledger`).

``sampler="float-unsafe"`` keeps the old ``rng.laplace`` / ``rng.normal`` path, at the continuous scale, for speed
comparisons only: its guarantee does not hold on a computer.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from ..errors import PrivacyError
from . import exact_bernoulli

SAMPLERS = ("exact", "float-unsafe")
GRID_BITS = 20
T = 1 << GRID_BITS  # the noise scale in grid steps
MARGIN = 1e-6  # relative increase of every grid noise scale covering the discrete curves' excess (module docstring)
_SAFE = float(2**52)  # |f/g| below this rounds to the right integer in float64


def check_sampler(sampler: str) -> None:
    if sampler not in SAMPLERS:
        raise PrivacyError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")


# ---- exact integer samplers (Canonne, Kamath & Steinke 2020) --------------------------------------------------
# The coins come from :mod:`dpcost.dp.exact_bernoulli` (one 53-bit comparison each, exact); the order and shapes of
# the generator calls below fix every draw, and results computed from them are pinned by digests: a change here must
# keep that sequence exactly, or re-pin them and say why.

CHUNK = 1 << 16  # draws per pass of a large request: the working arrays stay in cache


def _batch(need: int, rate: float) -> int:
    """Attempts to make at once so that one round usually yields ``need`` accepted draws (fewer numpy rounds)."""
    return int(need / rate) + 16


def _collect(need: int, rate: float, attempt) -> np.ndarray:
    """The first ``need`` accepted values of i.i.d. rejection-sampling attempts, made in oversized batches."""
    parts, have = [], 0
    while have < need:
        values = attempt(_batch(min(need - have, CHUNK), rate))[: need - have]
        parts.append(values)
        have += len(values)
    if len(parts) == 1:  # the usual case: one batch was enough
        return parts[0]
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)


SMALL = 12  # requests of at most this many draws (t a power of two) take the scalar path: no numpy call per step


def _laplace_one(t: int, bits: int, words: exact_bernoulli.Words) -> int:
    """One draw of :func:`discrete_laplace` for t = 2^bits, in Python integers (the same algorithm and bit layout)."""
    while True:
        w = words.word()
        U = w >> (64 - bits) if bits else 0
        if not exact_bernoulli.coin_exp(U, bits, words):
            continue
        X = U + t * exact_bernoulli.geometric_one(words)
        if not w & 1:
            return X
        if X:
            return -X


def _gaussian_one(t: int, bits: int, words: exact_bernoulli.Words) -> int:
    """One draw of :func:`discrete_gaussian` for t = 2^bits, in Python integers."""
    while True:
        Y = _laplace_one(t, bits, words)
        a = abs(Y) - t
        if exact_bernoulli.coin_exp(a * a, 2 * bits + 1, words):
            return Y


def _scalar(one, t: int, size: int, rng: np.random.Generator) -> np.ndarray | None:
    """``size`` draws by ``one`` if the request is small and t a power of two; None otherwise."""
    bits = t.bit_length() - 1
    if size > SMALL or t != 1 << bits or bits > 62:
        return None
    words = exact_bernoulli.Words(rng)
    return np.array([one(t, bits, words) for _ in range(size)], dtype=np.int64)


def discrete_laplace(t: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` exact draws of the discrete Laplace P(z) ∝ exp(−|z|/t) on the integers (CKS Algorithm 2, s = 1):
    U uniform on {0, …, t − 1} kept with probability exp(−U/t), plus t·A with P(A ≥ a) = e^{−a}, a uniform sign,
    −0 rejected. For t a power of two, U is the top bits and the sign the lowest bit of one raw 64-bit word."""
    t = int(t)
    if (small := _scalar(_laplace_one, t, size, rng)) is not None:
        return small
    bits = t.bit_length() - 1
    power = t == 1 << bits and bits <= 62

    def attempt(k: int) -> np.ndarray:
        raw = rng.bit_generator.random_raw(k)
        if not power:
            U = rng.integers(0, t, size=k)
        elif bits:
            U = (raw >> np.uint64(64 - bits)).view(np.int64)
        else:
            U = np.zeros(k, dtype=np.int64)
        keep = np.flatnonzero(exact_bernoulli.bernoulli_exp(U, t, rng))
        X = U[keep] + t * exact_bernoulli.geometric_e(keep.size, rng)
        negative = (raw[keep] & np.uint64(1)) == 1
        np.negative(X, out=X, where=negative)
        zero = negative & (X == 0)
        return X[~zero] if np.count_nonzero(zero) else X  # −0 is rejected so that 0 is not counted twice

    return _collect(size, 0.6, attempt)  # acceptance ≈ 1 − 1/e


def discrete_gaussian(t: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` exact draws of the discrete Gaussian P(z) ∝ exp(−z²/(2t²)) (CKS Algorithm 3 with its Laplace scale
    equal to σ = t: a discrete Laplace(t) draw Y is kept with probability exp(−(|Y| − t)²/(2t²)))."""
    t = int(t)
    if (small := _scalar(_gaussian_one, t, size, rng)) is not None:
        return small

    def attempt(k: int) -> np.ndarray:
        Y = discrete_laplace(t, k, rng)
        a = np.abs(Y) - t
        # (|Y| − t)² must fit in int64: |Y| ≥ 2^31 has probability below exp(−2^11) at t = 2^20.
        if np.maximum.reduce(np.abs(a)) >= 2**31:
            raise RuntimeError("discrete Gaussian: a Laplace proposal beyond 2^31 (probability < exp(-2048))")
        return Y[exact_bernoulli.bernoulli_exp(a * a, 2 * t * t, rng)]

    return _collect(size, 0.72, attempt)  # acceptance ≈ e^{-1/2} sqrt(pi/2) = 0.76


def bernoulli_exp(num, den, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(−num/den)) elementwise for integers num ≥ 0, den ≥ 1, exactly
    (:func:`dpcost.dp.exact_bernoulli.bernoulli_exp`)."""
    return exact_bernoulli.bernoulli_exp(num, den, rng)


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
        f"exact discrete {kind} on a grid of scale/2^{GRID_BITS}; sensitivity inflated by {r!r} grid steps "
        f"for rounding {k} coordinate(s); scale raised by a relative {MARGIN:g} for the discrete curve"
    )


_INFLATED = re.compile(r"^exact discrete \w+ on a grid of scale/2\^(\d+); sensitivity inflated by (\S+) grid steps")


def rounding_cost(sampler: str | None, scale: float) -> float:
    """What a grid release's rounding adds to its sensitivity, r·g with g = scale/2^GRID_BITS, read back from the
    ``sampler`` text :func:`describe` wrote (r in full precision); 0 for a release not on the grid. The privacy loss
    of the release is that of the inflated sensitivity: the integer vectors of neighbours differ by Δ/g + r steps."""
    match = _INFLATED.match(sampler or "")
    return float(match.group(2)) * scale / 2 ** int(match.group(1)) if match else 0.0


FLOAT_NOISE = "NOT PROVEN (floating point)"  # the marker the ledger looks for in a release's sampler


def describe_float(what: str) -> str:
    """How a release whose noise is drawn by floating-point samplers is drawn (``what``), with the marker
    :data:`FLOAT_NOISE`: such noise has no proof of privacy on a computer (Mironov 2012), whatever its guarantee in
    exact arithmetic."""
    return f"{what}; {FLOAT_NOISE}: floating-point noise, no proof of privacy on a computer (Mironov 2012)"
