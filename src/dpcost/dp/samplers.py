"""Floating-point-safe additive noise: exact discrete Laplace and discrete Gaussian samplers on a grid.

Why: ``value + rng.laplace(...)`` is not ε-DP on a computer. numpy maps a 53-bit uniform through ``log``, so the
floats reachable from f and from f′ differ, and an attacker who sees one output can often tell which it came from
(Mironov 2012; measured here: ε ≥ 10.7 at a claimed 1). The fix (Canonne, Kamath & Steinke 2020):

* the noise is an integer Z drawn *exactly* — only uniform integers from ``Generator.integers`` (exact, by
  rejection), never a float transcendental — from the discrete Laplace, P(z) ∝ exp(−|z|/t), or the discrete
  Gaussian, P(z) ∝ exp(−z²/(2t²)), with t = 2**GRID_BITS (CKS Algorithms 1–3);
* a release is g·(round(f/g) + Z) with grid step g = scale/t, so its support is the whole grid whatever f is;
  multiplying the integer by g afterwards is post-processing.

Range: a value beyond ±2^51 grid steps (±2^31 noise scales), or ±inf (a sum that overflowed), is released as that
end of the grid, not refused (:meth:`GridNoise.add`): clamping to a public box is 1-Lipschitz, so the sensitivities
hold, and whether a release is made never depends on the data. Scales outside [2^-1000, 2^990] are refused where
they are drawn (public: the same on both neighbours).

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
an argmin, a peer library's samplers) is described by :func:`describe_float` and typed ``noise="float"`` in its
release (:class:`dpcost.dp.plan.Release`): its guarantee is NOT PROVEN (floating point), and the ledger leaves such
a method out of the table's composition (:mod:`dpcost.analysis.ledger`).

``sampler="float-unsafe"`` keeps the old ``rng.laplace`` / ``rng.normal`` path, at the continuous scale, for speed
comparisons only: its guarantee does not hold on a computer.
"""

from __future__ import annotations

import contextlib
import functools
import math
from dataclasses import dataclass

import numpy as np

from ..errors import PrivacyError
from . import exact_bernoulli

SAMPLERS = ("exact", "float-unsafe")
GRID_BITS = 20
T = 1 << GRID_BITS  # the noise scale in grid steps
MARGIN = 1e-6  # relative increase of every grid noise scale covering the discrete curves' excess (module docstring)
# A value beyond 2^51 grid steps (2^31 noise scales) is released as ±2^51 steps (|f/g| below 2^52 rounds to the right
# integer in float64): every value has a place on the grid, so every release is total and no pair of neighbours
# splits into "released" / "refused" (GridNoise.add)
_BOX = float(2**51)
# noise scales whose grid step g = scale/T is a normal float and whose releases, at most (2^51 + |Z|)·g, stay finite
SCALE_MIN, SCALE_MAX = 2.0**-1000, 2.0**990


def check_sampler(sampler: str) -> None:
    if sampler not in SAMPLERS:
        raise PrivacyError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")


# ---- exact integer samplers (Canonne, Kamath & Steinke 2020) --------------------------------------------------
# The coins come from :mod:`dpcost.dp.exact_bernoulli` (one 53-bit comparison each, exact); the order and shapes of
# the generator calls below fix every draw, and results computed from them are pinned by digests: a change here must
# keep that sequence exactly, or re-pin them and say why.

CHUNK = 1 << 15  # proposals per round: the working arrays stay in the CPU's L2 cache (2× faster than 2^16 at 10^5)
RATE = {False: 0.62, True: 0.47}  # acceptance per proposal, large t: 1 − 1/e (Laplace); × e^{−1/2}√(π/2) (Gaussian)


def _proposals(need: int, rate: float) -> int:
    """Proposals for one round: the expected number plus three standard deviations, so that a second round is rare."""
    mean = need / rate
    return min(int(mean + 3 * math.sqrt(mean)) + 8, CHUNK)


def _round(t: int, m: int, rng: np.random.Generator, gaussian: bool) -> np.ndarray:
    """The accepted values, in order, of m independent proposals of CKS Algorithm 2 (Laplace) or 3 (Gaussian).

    Each proposal reads its own raw words, drawn in two generator calls: w0 (U = its top bits, the sign its lowest bit)
    and w1 (the coin exp(−U/t)) for every proposal; then for each proposal whose coin is heads the geometric's
    uniform and, for the Gaussian, the first uniform of the coin exp(−(|Y| − t)²/(2t²)), taken on |Y| before the
    sign. A rarely undecided coin, or a coin's integer part, draws further fresh words. No word serves two coins, so
    the proposals are i.i.d. and each is accepted (coins heads, not −0) with the law of CKS's sampler: the accepted
    values, kept in proposal order, are i.i.d. draws of the target whatever the round's size."""
    bits = t.bit_length() - 1
    power = t == 1 << bits and bits <= 62
    if power and m <= SMALL_ROUND and 2 * bits + 1 <= 62:
        return _small_round(t, bits, m, rng, gaussian)
    w = rng.bit_generator.random_raw(2 * m)
    w0 = w[:m]
    if power:
        U = (w0 >> np.uint64(64 - bits)).view(np.int64) if bits else np.zeros(m, dtype=np.int64)
        keep = exact_bernoulli.dyadic_coins(U, bits, exact_bernoulli.top53(w[m:]), rng).nonzero()[0]
    else:
        U = rng.integers(0, t, size=m)
        keep = exact_bernoulli.bernoulli_exp(U, t, rng).nonzero()[0]
    k = keep.size
    v = exact_bernoulli.top53(rng.bit_generator.random_raw(2 * k if gaussian else k))
    X = U[keep]  # |Y| = U + t·A
    exact_bernoulli.add_geometric(X, t, v[:k], rng)
    _no_wrap(X)
    sign = (w0[keep] & np.uint64(1)).view(np.int64)
    if gaussian:
        a = _excess(X, np.int64(t))
        if power and 2 * bits + 1 <= 62:
            heads = exact_bernoulli.bernoulli_exp_dyadic(a, 2 * bits + 1, v[k:], rng)
        else:
            heads = exact_bernoulli.bernoulli_exp(a, 2 * t * t, rng)
        accepted = heads.nonzero()[0]
        X, sign = X[accepted], sign[accepted]
    return _signed(X, sign)


_ONE = np.int64(1)
SMALL_ROUND = 256  # rounds of at most this many proposals take :func:`_small_round`


def _small_round(t: int, bits: int, m: int, rng: np.random.Generator, gaussian: bool) -> np.ndarray:
    """:func:`_round` for few proposals and t = 2^bits, in fewer numpy calls: every word in one generator call (rows:
    U and sign, the coin exp(−U/t), the geometric, and for the Gaussian its coin's remainder and integer part), every
    coin decided for every proposal, the accepted ones selected once. The same per-proposal argument holds."""
    shift, t64 = _scalars(t)
    v = exact_bernoulli.top53(rng.bit_generator.random_raw((5 if gaussian else 3) * m)).reshape(-1, m)
    X = v[0] >> shift  # U, the top bits of w0
    heads = exact_bernoulli.dyadic_coins(X, bits, v[1], rng)
    exact_bernoulli.add_geometric(X, t, v[2], rng)  # |Y| = U + t·A
    _no_wrap(X)
    if gaussian:
        heads &= exact_bernoulli.bernoulli_exp_dyadic(_excess(X, t64), 2 * bits + 1, v[3], rng, v[4])
    accepted = heads.nonzero()[0]
    return _signed(X[accepted], v[0][accepted] & _ONE)  # the sign: bit 11 of w0, not among U's bits (bits ≤ 30)


@functools.lru_cache(maxsize=16)
def _scalars(t: int) -> tuple[np.int64, np.int64]:
    """Per-scale numpy scalars of :func:`_small_round` (a Python int in a ufunc call costs a conversion)."""
    return np.int64(54 - t.bit_length()), np.int64(t)


def _no_wrap(X: np.ndarray) -> None:
    """|Y| = U + t·A is ≥ 0 unless the int64 sum wrapped (A ≥ 2^63/t: probability below exp(−2^31) at t ≤ 2^32)."""
    if np.count_nonzero(X < 0):
        raise RuntimeError("discrete Laplace: a geometric draw beyond 2^63/t (probability < exp(-2^31))")


def _excess(X: np.ndarray, t: np.int64) -> np.ndarray:
    """(|Y| − t)², the numerator of the Gaussian's acceptance exponent over 2t², for |Y| = X."""
    # it must fit in int64: |Y| ≥ 2^31 has probability below exp(−2^11) at t = 2^20
    if np.count_nonzero(X >= t + 2**31):
        raise RuntimeError("discrete Gaussian: a Laplace proposal beyond 2^31 (probability < exp(-2048))")
    a = X - t
    a *= a
    return a


def _signed(X: np.ndarray, sign: np.ndarray) -> np.ndarray:
    """X with the sign bits (0/1) applied, −0 (X = 0, sign 1) rejected so that 0 is not counted twice."""
    if np.count_nonzero(X) < X.size:
        kept = (X != 0) | (sign == 0)
        X, sign = X[kept], sign[kept]
    X ^= -sign  # two's complement: (x ^ −1) + 1 = −x where the sign bit is set
    X += sign
    return X


def _rounds(t: int, size: int, rng: np.random.Generator, gaussian: bool) -> np.ndarray:
    """The first ``size`` accepted values of successive rounds of :func:`_round`."""
    parts, have = [], 0
    while have < size:
        values = _round(t, _proposals(size - have, RATE[gaussian]), rng, gaussian)[: size - have]
        parts.append(values)
        have += values.size
    if len(parts) == 1:  # the usual case: one round was enough
        return parts[0]
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)


SMALL = 5  # requests of at most this many draws (t a power of two) take the scalar path: ≈ 3 µs a Gaussian draw,
# against ≈ 17 µs for one small round of numpy calls (measured: docs/performance.md)


def _laplace_one(t: int, bits: int, words: exact_bernoulli.Words) -> int:
    """One draw of :func:`discrete_laplace` for t = 2^bits, in Python integers (the same algorithm; its own words)."""
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


# The scales at which the int64 samplers are exact. Laplace: |Y| = U + t·A fits while A < 2^63/t − 1; at t ≤ 2^32 a
# larger A has probability below exp(−2^31), and is refused, not wrapped. Gaussian: its coin needs (|Y| − t)² < 2^62,
# i.e. |Y| < t + 2^31; at t ≤ 2^24 a Laplace proposal beyond that has probability below exp(−2^7) ≈ 3e-56 (refused).
LAPLACE_T_MAX, GAUSSIAN_T_MAX = 1 << 32, 1 << 24


def _check_t(t, limit: int, law: str) -> int:
    """t as an int in [1, limit]: outside it the sampler's integers would wrap or its refusals be likely."""
    if not (isinstance(t, (int, np.integer)) and not isinstance(t, bool) and 1 <= t <= limit):
        top = limit.bit_length() - 1
        raise PrivacyError(f"the exact discrete {law} sampler takes an integer scale t in [1, 2^{top}], got {t!r}")
    return int(t)


def discrete_laplace(t: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` exact draws of the discrete Laplace P(z) ∝ exp(−|z|/t) on the integers (CKS Algorithm 2, s = 1):
    U uniform on {0, …, t − 1} kept with probability exp(−U/t), plus t·A with P(A ≥ a) = e^{−a}, a uniform sign,
    −0 rejected. For t a power of two, U is the top bits and the sign one low bit of one raw 64-bit word. Requests
    of ≤ SMALL draws take the scalar path, larger ones rounds of proposals (:func:`_round`). Exact for integer
    1 ≤ t ≤ :data:`LAPLACE_T_MAX`; any other t is refused."""
    t = _check_t(t, LAPLACE_T_MAX, "Laplace")
    if (small := _scalar(_laplace_one, t, size, rng)) is not None:
        return small
    return _rounds(t, size, rng, False)


def discrete_gaussian(t: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` exact draws of the discrete Gaussian P(z) ∝ exp(−z²/(2t²)) (CKS Algorithm 3 with its Laplace scale
    equal to σ = t: a discrete Laplace(t) draw Y is kept with probability exp(−(|Y| − t)²/(2t²))). Exact for integer
    1 ≤ t ≤ :data:`GAUSSIAN_T_MAX`; any other t is refused."""
    t = _check_t(t, GAUSSIAN_T_MAX, "Gaussian")
    if (small := _scalar(_gaussian_one, t, size, rng)) is not None:
        return small
    return _rounds(t, size, rng, True)


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
        """The released value: g·(round(f/g) + Z) (exact), or f + g·Z (float-unsafe).

        Exact: f is first clamped to ±2^51 grid steps (±2^31 noise scales), so a value that overflowed (±inf) or
        lies beyond what the grid can round is released, not refused. Clamping each coordinate to a public box is
        1-Lipschitz in every norm a sensitivity is stated in, so the clamped values of two neighbours are no further
        apart than the values: the guarantee holds, and whether a release is made never depends on the data. Where
        f itself overflowed (its true sum above the float maximum) the clamp gives what the true sum would: the box's
        end. A NaN value (a computation that broke, e.g. inf − inf) is refused: it has no place on the grid."""
        value = np.asarray(value, dtype=float)
        if self.exact:
            box = _BOX * self.step
            if np.count_nonzero(np.abs(value) <= box) < value.size:  # NaN, ±inf or past the box: one pass to ask
                if np.isnan(value).any():
                    raise PrivacyError(
                        "a value to be released is NaN: the computation before the noise broke (e.g. inf - inf)"
                    )
                value = np.clip(value, -box, box)
        if _tracer is not None:  # a sensitivity audit (tracing) sees the value before the noise
            return _tracer.grid(self, value, lambda: self._release(value))
        return self._release(value)

    def _release(self, value: np.ndarray) -> np.ndarray:
        if not self.exact:
            return value + self.step * self.steps
        return self.step * (np.rint(value / self.step) + self.steps)  # value inside the box (add)


# ---- tracing: the hook of a sensitivity audit (dpcost.dp.sensitivity) -------------------------------------------

_tracer = None


@contextlib.contextmanager
def tracing(tracer):
    """Within the block every grid release returns ``tracer.grid(noise, value, release)`` — ``noise`` its
    :class:`GridNoise`, ``value`` the pre-noise value, ``release()`` the release as it would be made — and every
    :func:`replayable` value returns ``tracer.other(what, value)``. For audits (:mod:`dpcost.dp.sensitivity`), which
    record a run and replay its releases into a run on a neighbouring data set; one tracer at a time."""
    global _tracer
    if _tracer is not None:
        raise RuntimeError("a tracer is already active")
    _tracer = tracer
    try:
        yield tracer
    finally:
        _tracer = None


def replayable(value, what: str):
    """``value`` unchanged: a release not made on the grid (e.g. a random sketch) that later releases depend on.
    Marking it lets an audit replay it into the run on a neighbouring data set, so that the later releases are
    compared under the same past (:func:`tracing`)."""
    return value if _tracer is None else _tracer.other(what, value)


def draw(kind: str, scale: float, shape, rng: np.random.Generator, sampler: str = "exact") -> GridNoise:
    """Noise of ``kind`` (``"laplace"``: scale b; ``"gaussian"``: standard deviation σ) for values of ``shape``."""
    check_sampler(sampler)
    if not (math.isfinite(scale) and scale > 0):
        raise PrivacyError(f"noise scale must be a finite number > 0, got {scale!r}")
    if sampler == "exact" and not SCALE_MIN <= scale <= SCALE_MAX:
        raise PrivacyError(
            f"noise scale {scale!r} is outside [2^-1000, 2^990], where the grid's step is a normal float and every "
            "release stays finite: the bounds or the budget are too extreme to release on the grid"
        )
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


FLOAT_NOISE = "NOT PROVEN (floating point)"  # how the ledger names a guarantee resting on floating-point noise


def describe_float(what: str) -> str:
    """How a release whose noise is drawn by floating-point samplers is drawn (``what``), in words, with
    :data:`FLOAT_NOISE`: such noise has no proof of privacy on a computer (Mironov 2012), whatever its guarantee in
    exact arithmetic. The release says so in its typed field (``noise="float"``, :class:`dpcost.dp.plan.Release`)."""
    return f"{what}; {FLOAT_NOISE}: floating-point noise, no proof of privacy on a computer (Mironov 2012)"
