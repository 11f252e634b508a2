"""Exact Bernoulli(exp(−num/den)) and geometric draws at table speed: the coin flips of the exact samplers.

Canonne, Kamath & Steinke (2020) flip Bernoulli(exp(−γ)) by a chain of Bernoulli(γ/k) trials, several numpy rounds
a coin. Here a coin is one comparison. Let V be a uniform real in [0, 1) and u = ⌊2^53 V⌋ its first 53 bits, the top
bits of one raw 64-bit word of the generator. For a target p and integers L ≤ 2^53 p ≤ H:

* u + 1 ≤ L means V < (u + 1)/2^53 ≤ p: heads;
* u ≥ H means V ≥ u/2^53 ≥ p: tails;
* otherwise (L ≤ u < H: one value of u in 2^53 when H = L + 1) the next 62 bits of V are drawn and compared with
  bounds of 2^115 p, and so on until decided (:class:`Prefix`).

So heads is exactly the event {V < p}, of probability p, as long as the bounds hold — whatever their width, which only
decides how often the slow path runs. They hold because :func:`exp_bounds` computes them with Python's ``decimal``
module, whose division, ``exp`` and multiplication are correctly rounded, at 25 digits beyond the bits compared, with
a margin (10⁻²⁰) four orders of magnitude above the accumulated rounding error. No float transcendental is involved.

exp(−num/den) is a product of factors read from small tables: e^{−q} for the integer part q = ⌊num/den⌋ (in steps of
at most :data:`Q_MAX`) and exp(−c_j 2^{11j}/den) for the 11-bit pieces c_j of the remainder. Independent coins, one
per factor, are all heads with probability the product: Bernoulli(exp(−num/den)), exactly.
"""

from __future__ import annotations

import decimal
import functools

import numpy as np

BITS = 53  # bits of V read first: every bound fits an int64
MORE = 62  # bits drawn per refinement of an undecided comparison
PIECE = 11  # bits of the remainder per table (2,048 entries)
Q_MAX = 36  # largest integer exponent of one table factor (2^53 e^{−36} ≈ 2.1: its bounds still tell u's apart)
_MARGIN = decimal.Decimal("1e-20")
_SHIFT = np.uint64(64 - BITS)


def exp_bounds(num: int, den: int, bits: int) -> tuple[int, int]:
    """Integers L ≤ 2^bits·exp(−num/den) ≤ H, H − L ≤ 2 (1 unless 2^bits p lies within 10⁻²⁰ of an integer).

    At prec = ⌊0.302 bits⌋ + 26 digits (2^bits < 10^{prec − 25}): x̃ = num/den is correctly rounded, |x̃ − x| ≤
    10^{1−prec} x, which moves e^{−x} by at most e^{−x}·x·10^{1−prec}·(1 + 10⁻²⁰) ≤ 10^{1−prec}/e; ``exp`` and the
    product by 2^bits add relative errors of 10^{1−prec} each. Scaled by 2^bits the total is below 3·10⁻²⁴.
    """
    if num < 0 or den < 1 or bits < 1:
        raise ValueError(f"exp_bounds needs num >= 0, den >= 1, bits >= 1, got {num}, {den}, {bits}")
    if num == 0:
        return 1 << bits, 1 << bits  # p = 1: every u < 2^bits is heads
    ctx = decimal.Context(prec=int(0.302 * bits) + 26, rounding=decimal.ROUND_HALF_EVEN, Emin=-(10**9))
    x = ctx.divide(decimal.Decimal(num), decimal.Decimal(den))
    s = ctx.multiply(ctx.exp(ctx.minus(x)), decimal.Decimal(1 << bits))
    low = int(ctx.subtract(s, _MARGIN).to_integral_value(rounding=decimal.ROUND_FLOOR, context=ctx))
    high = int(ctx.add(s, _MARGIN).to_integral_value(rounding=decimal.ROUND_CEILING, context=ctx))
    return max(low, 0), high


def uniform53(rng: np.random.Generator, n: int) -> np.ndarray:
    """n uniform integers in [0, 2^53): the top 53 bits of raw 64-bit words (int64)."""
    return top53(rng.bit_generator.random_raw(n))


def top53(words: np.ndarray) -> np.ndarray:
    """The top 53 bits of raw 64-bit words (uint64), as int64: uniform integers in [0, 2^53)."""
    return (words >> _SHIFT).view(np.int64)


class Prefix:
    """The known leading bits of a uniform real V ∈ [u/2^bits, (u + 1)/2^bits). A comparison with exp(−num/den) draws
    further bits until the interval lies on one side (the rare, exact slow path)."""

    def __init__(self, u: int, bits: int, rng: np.random.Generator):
        self.u, self.bits, self.rng = int(u), bits, rng

    def below_exp(self, num: int, den: int) -> bool:
        """Whether V < exp(−num/den)."""
        while True:
            low, high = exp_bounds(num, den, self.bits)
            if self.u + 1 <= low:
                return True
            if self.u >= high:
                return False
            self.u = (self.u << MORE) | int(self.rng.bit_generator.random_raw() >> (64 - MORE))
            self.bits += MORE


@functools.lru_cache(maxsize=64)
def _table(step: int, den: int, size: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """Bounds (L, H) of 2^53·exp(−c·step/den), c = 0 … size − 1, read-only int64; and whether H − L ≤ 1 throughout
    (then L ≤ u < H is u = L: one comparison finds the undecided coins)."""
    pairs = [exp_bounds(c * step, den, BITS) for c in range(size)]
    low = np.array([p[0] for p in pairs], dtype=np.int64)
    high = np.array([p[1] for p in pairs], dtype=np.int64)
    low.flags.writeable = high.flags.writeable = False
    return low, high, bool(np.all(high - low <= 1))


def _coins(c: np.ndarray, step: int, den: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """One coin per element, heads with probability exp(−c·step/den), c an int64 array of indices below ``size``."""
    low, high, narrow = _table(step, den, size)
    u = uniform53(rng, c.size)
    lc = low[c]
    heads = u < lc
    undecided = (u == lc) if narrow else (~heads & (u < high[c]))
    if np.count_nonzero(undecided):  # probability about 2^-53 per coin
        for i in np.flatnonzero(undecided):
            heads[i] = Prefix(u[i], BITS, rng).below_exp(int(c[i]) * step, den)
    return heads


def _dyadic_coins(r: np.ndarray, b: int, rng: np.random.Generator, u: np.ndarray | None = None) -> np.ndarray:
    """One coin per element, heads with probability p = exp(−r/2^b) for 0 ≤ r < 2^b, from one uniform each.

    With r = h·2^m + l (m = b − 8 low bits, h < 256) and the table bounds L_j ≤ 2^53 exp(−j 2^m/2^b) ≤ H_j:
    p ≥ exp(−(h + 1)2^m/2^b), so u < L_{h+1} is heads; p ≤ exp(−h 2^m/2^b), so u ≥ H_h is tails. The rest (u in a
    band of relative width 1 − e^{−2^{-8}}: 0.4 % of coins) is decided by p = p_h·e^{−x}, x = l/2^b ≤ 2^{-8}, and
    1 − x ≤ e^{−x} ≤ 1 − x + x²/2: 2^53 p ≥ L_h − L_h x and ≤ H_h − H_h x + 2^52 x². Those products are taken in
    float64, below 2^46 with relative error 2^{-52}, so each is widened by two units; a coin still undecided
    (probability below 2^{-17} of the band) goes to :class:`Prefix`. ``u``: the coins' 53-bit uniforms, if drawn.
    """
    m = max(b - 8, 0)
    low, high, _ = _table(1 << m, 1 << b, (1 << (b - m)) + 1)
    h = r >> m
    u = uniform53(rng, r.size) if u is None else u
    heads = u < low[h + 1]
    band = np.flatnonzero(~heads & (u < high[h]))
    if band.size:
        hb, ub = h[band], u[band]
        x = (r[band] & ((1 << m) - 1)).astype(float) * 2.0**-b
        lo_h, hi_h = low[hb], high[hb]
        lower = lo_h - np.floor(lo_h.astype(float) * x).astype(np.int64) - 2
        upper = hi_h - np.floor(hi_h.astype(float) * x).astype(np.int64) + np.floor(x * x * 2.0**52).astype(np.int64)
        upper += 3
        heads[band] = ub < lower
        undecided = band[(ub >= lower) & (ub < upper)]
        for i in undecided:
            heads[i] = Prefix(u[i], BITS, rng).below_exp(int(r[i]), 1 << b)
    return heads


def bernoulli_exp(num, den: int, rng: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(−num/den)) elementwise, exactly, for integers num ≥ 0 (int64) and den ≥ 1 (module docstring).
    For den = 2^b the remainder takes one coin (:func:`_dyadic_coins`); otherwise every 11-bit piece of it takes one."""
    num = np.asarray(num, dtype=np.int64).ravel()
    den = int(den)
    b = den.bit_length() - 1
    if den == 1 << b:
        q = num >> b
        heads = _dyadic_coins(num & (den - 1), b, rng)
    else:
        q, r = np.divmod(num, den)
        heads = np.ones(num.size, dtype=bool)
        for j in range(0, den.bit_length(), PIECE):  # the remainder: one coin per 11-bit piece
            width = min(PIECE, den.bit_length() - j)
            heads &= _coins((r >> j) & ((1 << width) - 1), 1 << j, den, 1 << width, rng)
    return _integer_part(heads, q, rng)


def _integer_part(heads: np.ndarray, q: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``heads`` and, where q > 0, fresh coins of e^{−q} in factors of at most e^{−Q_MAX} (q is consumed)."""
    idx = np.flatnonzero(q)
    while idx.size:
        step = np.minimum(q[idx], Q_MAX)
        heads[idx] &= _coins(step, 1, 1, Q_MAX + 1, rng)
        q[idx] -= step
        idx = idx[q[idx] > 0]
    return heads


# ---- the same coins with their uniforms drawn by the caller, in few numpy calls (dpcost.dp.samplers' rounds) ----

LEAN = 10  # bits of h in the filter table of :func:`dyadic_coins`: 1,025 bounds a scale, a band of 0.1 % of coins


_ZERO = np.int64(0)  # numpy scalars: a Python int in a ufunc call costs a conversion (0.3 µs on 100 elements)


@functools.lru_cache(maxsize=16)
def _dyadic_lean(b: int) -> tuple[np.ndarray, np.int64, np.uint64, np.int64]:
    """Per-scale constants of :func:`dyadic_coins`: L_{h+1} of 2^53·exp(−h·2^m/2^b) for h = 0 … 2^{b−m} − 1,
    m = max(b − LEAN, 0), read-only; m; the widest band w = max_h (H_h − L_{h+1}); and the mask 2^b − 1."""
    m = max(b - LEAN, 0)
    low, high, _ = _table(1 << m, 1 << b, (1 << (b - m)) + 1)
    return low[1:], np.int64(m), np.uint64(np.max(high[:-1] - low[1:])), np.int64((1 << b) - 1)


def dyadic_coins(r: np.ndarray, b: int, u: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Coins exp(−r/2^b), 0 ≤ r < 2^b, for given 53-bit uniforms u, by a finer filter table (h = r >> m):
    p ≥ exp(−(h + 1)2^m/2^b) ≥ L_{h+1}/2^53, so d = u − L_{h+1} < 0 is heads; p ≤ H_h/2^53 ≤ (L_{h+1} + w)/2^53,
    so d ≥ w is tails (one unsigned comparison sends d < 0 and d ≥ w to the same side); only 0 ≤ d < w (≈ 0.1 %)
    goes to :func:`_dyadic_coins`, which decides it exactly with the same u."""
    low1, m, w, _ = _dyadic_lean(b)
    d = u - low1[r >> m]
    heads = d < _ZERO
    band = (d.view(np.uint64) < w).nonzero()[0]
    if band.size:
        heads[band] = _dyadic_coins(r[band], b, rng, u[band])
    return heads


def bernoulli_exp_dyadic(num: np.ndarray, b: int, u: np.ndarray, rng: np.random.Generator, u_int=None) -> np.ndarray:
    """Bernoulli(exp(−num/2^b)) for int64 num ≥ 0: the remainder's coin takes the given uniforms u
    (:func:`dyadic_coins`); the integer part q = ⌊num/2^b⌋ (> 0 for a few coins) fresh coins, or, given ``u_int``
    and q ≤ Q_MAX throughout, one table coin e^{−q} on u_int (heads iff u_int < L_q; u_int = L_q, one integer in
    2^53, by :class:`Prefix`; q = 0 gives L_0 = 2^53: heads). Independent coins: the product is exact."""
    heads = dyadic_coins(num & _dyadic_lean(b)[3], b, u, rng)
    q = num >> np.int64(b)
    low, _, narrow = _table(1, 1, Q_MAX + 1)
    # a narrow table: u_int = L_q is the only undecided value
    if u_int is None or not narrow or not q.size or np.maximum.reduce(q) > Q_MAX:
        return _integer_part(heads, q, rng)
    low = low[q]
    integer = u_int < low
    if np.count_nonzero(u_int == low):
        for i in (u_int == low).nonzero()[0]:
            integer[i] = Prefix(u_int[i], BITS, rng).below_exp(int(q[i]), 1)
    heads &= integer
    return heads


_A_TOP = 36  # thresholds e^{−1} … e^{−36} tabulated; 2^53 e^{−36} ≈ 2.1, so each is a distinct integer bound


@functools.lru_cache(maxsize=1)
def _thresholds() -> tuple[np.ndarray, np.ndarray]:
    """Bounds of 2^53·e^{−a} for a = A_TOP … 1 (ascending values) and whether every band is one integer wide."""
    low, high = zip(*(exp_bounds(a, 1, BITS) for a in range(_A_TOP, 0, -1)), strict=True)
    low, high = np.array(low, dtype=np.int64), np.array(high, dtype=np.int64)
    if not np.all(high - low == 1):  # not the case for these constants (checked in the tests); would need a rewrite
        raise AssertionError("a threshold of the geometric table is not one integer wide")
    low.flags.writeable = False
    return low, high


def geometric_e(k: int, rng: np.random.Generator, u: np.ndarray | None = None) -> np.ndarray:
    """k i.i.d. draws of A with P(A ≥ a) = e^{−a} (the successes of Bernoulli(e^{−1}) before the first failure):
    A = #{a ≥ 1 : V < e^{−a}} for one uniform V, read off the table of thresholds (the first four by comparison,
    the rest, 1.8 % of draws, by binary search). V within a threshold's band (u = L_a), or below the table
    (V < e^{−36}, probability 2·10⁻¹⁶), is counted exactly by :class:`Prefix`. ``u``: V's first 53 bits, if drawn."""
    low, _ = _thresholds()  # ascending: low[-a] is L_a
    u = uniform53(rng, k) if u is None else u
    a = (u < low[-1]).astype(np.int64)
    for j in (2, 3, 4):
        a += u < low[-j]
    deep = np.flatnonzero(a == 4)
    if deep.size:
        a[deep] = _A_TOP - np.searchsorted(low, u[deep], side="right")
    # u ≥ L_{a+1} holds; the comparison with e^{−(a+1)} is undecided iff u = L_{a+1} (bands are one integer wide)
    unsure = low[(_A_TOP - 1) - a] == u  # a = A_TOP reads low[−1] here: it is flagged below
    if deep.size:
        unsure[deep] |= a[deep] == _A_TOP
    if np.count_nonzero(unsure):
        for i in np.flatnonzero(unsure):
            v, count = Prefix(u[i], BITS, rng), 0
            while v.below_exp(count + 1, 1):
                count += 1
            a[i] = count
    return a


@functools.lru_cache(maxsize=16)
def _geometric_lean(t: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-scale constants of :func:`add_geometric` for few draws: edges 2L_a ∓ 1, sorted, so that the number c of
    edges ≤ 2u is 2·#{L_a < u} + [u = some L_a]; for each c, t·A = t·(A_TOP − c/2) and whether c is undecided
    (odd: u on a threshold; 0: u < L_{A_TOP})."""
    low = _thresholds()[0]
    if not np.all(np.diff(low) >= 2):  # not the case (2^53 e^{−36} ≈ 2.1, 2^53 e^{−35} ≈ 5.7): edges would tie
        raise AssertionError("geometric thresholds closer than 2")
    c = np.arange(2 * _A_TOP + 1)
    edges = np.sort(np.concatenate([2 * low - 1, 2 * low + 1]))
    return edges, t * (_A_TOP - c // 2), (c % 2 == 1) | (c == 0)


def add_geometric(x: np.ndarray, t: int, u: np.ndarray, rng: np.random.Generator) -> None:
    """x += t·A in place, A drawn as by :func:`geometric_e` from the given 53-bit uniforms u (one per element). Many:
    where u > L_1, u ≥ H_1 = L_1 + 1 proves V ≥ e^{−1}, A = 0; the rest (37 %) are counted by :func:`geometric_e`.
    Few: A = #{a : L_a > u} (each such a has V < (u + 1)/2^53 ≤ e^{−a}; each L_a < u has V ≥ H_a/2^53 ≥ e^{−a}),
    unless some L_a = u or u < L_{A_TOP}: then :func:`geometric_e` (:func:`_geometric_lean`)."""
    if u.size <= 256:  # few: one binary search and two table reads (few numpy calls)
        edges, add, unsure = _geometric_lean(t)
        c = edges.searchsorted(u + u, side="right")
        if np.count_nonzero(unsure[c]):
            x += t * geometric_e(u.size, rng, u)
        else:
            x += add[c]
        return
    sub = (u <= _thresholds()[0][-1]).nonzero()[0]
    if sub.size:
        x[sub] += t * geometric_e(sub.size, rng, u[sub])


# ---- the same coins one at a time, in Python integers: small requests, where numpy's per-call cost dominates -------


class Words:
    """Raw 64-bit words of ``rng``, fetched 64 at a time and handed out one by one as Python ints."""

    def __init__(self, rng: np.random.Generator):
        self.rng, self.buffer, self.next = rng, [], 0

    def word(self) -> int:
        if self.next == len(self.buffer):
            self.buffer, self.next = self.rng.bit_generator.random_raw(64).tolist(), 0
        self.next += 1
        return self.buffer[self.next - 1]

    def u53(self) -> int:
        return self.word() >> (64 - BITS)


@functools.lru_cache(maxsize=64)
def _table_lists(step: int, den: int, size: int) -> tuple[list[int], list[int]]:
    low, high, _ = _table(step, den, size)
    return low.tolist(), high.tolist()


def coin_exp(num: int, b: int, words: Words) -> bool:
    """One coin, heads with probability exp(−num/2^b), num ≥ 0: as :func:`bernoulli_exp` for den = 2^b, each coin
    decided by the table bounds alone (u < L_{h+1}: heads; u ≥ H_h: tails) or, in the band, exactly by :class:`Prefix`
    (0.4 % of coins; its cost is the Decimal evaluation)."""
    q, r = num >> b, num & ((1 << b) - 1)
    m = max(b - 8, 0)
    low, high = _table_lists(1 << m, 1 << b, (1 << (b - m)) + 1)
    h, u = r >> m, words.u53()
    if not (u < low[h + 1] or (u < high[h] and Prefix(u, BITS, words.rng).below_exp(r, 1 << b))):
        return False
    low_q, high_q = _table_lists(1, 1, Q_MAX + 1)
    while q:
        step, u = min(q, Q_MAX), words.u53()
        if not (u < low_q[step] or (u < high_q[step] and Prefix(u, BITS, words.rng).below_exp(step, 1))):
            return False
        q -= step
    return True


@functools.lru_cache(maxsize=1)
def _threshold_list() -> list[int]:
    return _thresholds()[0].tolist()[::-1]


def geometric_one(words: Words) -> int:
    """One draw of :func:`geometric_e`."""
    low = _threshold_list()  # low[a − 1] is L_a
    u, a = words.u53(), 0
    while a < _A_TOP and u < low[a]:
        a += 1
    if a < _A_TOP and u != low[a]:
        return a
    v, a = Prefix(u, BITS, words.rng), 0
    while v.below_exp(a + 1, 1):
        a += 1
    return a
