"""RDP of the Gaussian mechanism applied to a batch drawn without replacement (replace-one neighbours), at every
order of dp-accounting's default list: dp-accounting's own computation (Wang, Balle & Kasiviswanathan 2019, Thm 27,
with Cor. 10 between integer orders), reproduced bit for bit in a few milliseconds instead of ~0.2 s.

Why it is faster and still the same float:

* dp-accounting (0.6) recomputes the forward differences of the Gaussian's cumulant generating function for every
  integer order α (O(α²) scalar Python steps each), and both integer neighbours of every fractional order again. The
  k-th difference at 0 reads the function at 0..k only, and every step that produces it is the same whatever α it is
  computed for, so one table up to order 256 (the largest order that uses the differences) serves every order.
* Each differencing pass is vectorised over the table; every elementary operation is the one dp-accounting performs,
  with libm's ``math.exp``/``math.log1p`` where it calls ``math`` and numpy's where it calls numpy (numpy's SIMD exp
  and log1p differ from libm's in the last bit for about 1 input in 20 on AVX-512 machines).
* The sum over i of each order's terms stays a sequential log-add in dp-accounting's order.

Checked: the tests compare this with dp-accounting for exact equality over a property-based search of (n, b, σ) and at
points where the rare branch decides the last bit; at first use in a process it is compared with dp-accounting's
accountant at two (q, σ), and if the two differ (another dp-accounting version) every call goes to dp-accounting
instead, with a warning.
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np

_MAX_EXACT = 256  # dp-accounting's max_alpha: above it, its terms drop the forward differences (Stirling branch)
_LOG2, _LOG4 = np.log(2), np.log(4)
_exp = np.frompyfunc(math.exp, 1, 1)
_log1p = np.frompyfunc(math.log1p, 1, 1)


def _m(fn, x: np.ndarray) -> np.ndarray:
    """libm's ``fn`` element by element (as dp-accounting's scalar ``math`` calls), as float64."""
    return fn(x).astype(float) if x.size else x.astype(float)


def _forward_diffs(sigma: float) -> np.ndarray:
    """log |Δ^k cgf|(0) for k = 0..257, as dp-accounting's ``_get_forward_diffs(cgf, 256)`` computes them."""
    n = _MAX_EXACT
    vec = np.zeros(n + 3)
    signs = np.ones(n + 3, dtype=bool)
    x = np.arange(n + 2) * 1.0
    vec[1:] = x * 1.0 * (x + 1) / (2.0 * sigma**2)
    deltas = np.zeros(n + 2)
    for i in range(n + 2):
        cnt = n + 2 - i  # entries 0..cnt-1 become differences of (old) neighbours j, j + 1
        lo, hi, s_lo, s_hi = vec[:cnt].copy(), vec[1 : cnt + 1], signs[:cnt].copy(), signs[1 : cnt + 1]
        new, new_s = np.empty(cnt), np.empty(cnt, dtype=bool)
        same = s_lo == s_hi
        # same signs: log |e^hi - e^lo| with its sign (dp-accounting's _log_sub_sign(hi, lo)), flipped when negative
        gt, lt = same & (hi > lo), same & (hi < lo)
        new[gt] = hi[gt] + _m(_log1p, -np.exp(lo[gt] - hi[gt]))
        new[lt] = lo[lt] + np.log1p(-np.exp(hi[lt] - lo[lt]))
        eq = same & ~gt & ~lt
        new[eq] = -np.inf
        new_s[same] = gt[same] | eq[same]
        new_s[same & ~s_hi] = ~new_s[same & ~s_hi]
        # different signs: log(e^lo + e^hi) (dp-accounting's _log_add)
        diff = ~same
        a, b = np.minimum(lo[diff], hi[diff]), np.maximum(lo[diff], hi[diff])
        add = np.where(a == -np.inf, b, 0.0)
        fin = a != -np.inf
        add[fin] = _m(_log1p, _m(_exp, a[fin] - b[fin])) + b[fin]
        new[diff], new_s[diff] = add, s_hi[diff]
        vec[:cnt], signs[:cnt] = new, new_s
        deltas[i] = vec[0]
    return deltas


def _log_add(logx: float, logy: float) -> float:
    a, b = min(logx, logy), max(logx, logy)
    if a == -np.inf:
        return b
    return math.log1p(math.exp(a - b)) + b


def _log_a(q: float, sigma: float, alpha: int, deltas: np.ndarray) -> float:
    """log A_α, dp-accounting's ``_compute_rdp_sample_wor_gaussian_int`` (their term for i = 2, then i = 3..α)."""
    if alpha == 1:
        return 0
    from scipy import special

    f2 = 2.0 / (2.0 * sigma**2)
    log_f2m1 = f2 + math.log1p(-np.exp(-f2))
    log_q = np.log(q)
    lgam = special.gammaln(alpha + 1)
    comb2 = lgam - special.gammaln(3) - special.gammaln(alpha - 1)
    first = 2 * log_q + comb2 + np.minimum(_LOG4 + log_f2m1, f2 + _LOG2)
    i = np.arange(3, alpha + 1)
    comb = lgam - special.gammaln(i + 1) - special.gammaln(alpha - i + 1)
    x = i - 1
    cgf = x * 1.0 * (x + 1) / (2.0 * sigma**2)
    if alpha <= _MAX_EXACT:
        s = _LOG4 + 0.5 * (deltas[2 * (i // 2) - 1] + deltas[2 * ((i + 1) // 2) - 1])
        s = np.minimum(s, _LOG2 + cgf)
        s += i * log_q + comb
    else:
        s = _LOG2 + cgf + i * log_q + comb
    log_a = 0
    for t in [first, *s.tolist()]:
        log_a = _log_add(log_a, t)
    return float(log_a)


def sample_wor_gaussian_rdp(q: float, sigma: float, orders) -> np.ndarray:
    """RDP at each of ``orders`` of one Gaussian step (noise multiplier ``sigma``) on a fraction ``q`` of the records
    drawn without replacement: what dp-accounting's ``_compute_rdp_sample_wor_gaussian`` returns, the same floats
    (where :func:`reproduces_dp_accounting`)."""
    if not 0 <= q <= 1 or not sigma > 0:
        raise ValueError(f"need 0 <= q <= 1 and sigma > 0, got q={q}, sigma={sigma}")
    if q == 0:
        return np.zeros(len(orders))
    if q == 1.0:
        return np.array([a / (2 * sigma**2) for a in orders])
    deltas = _forward_diffs(sigma)
    log_a = functools.lru_cache(maxsize=None)(lambda a: _log_a(q, sigma, a, deltas))
    out = []
    for alpha in orders:
        if np.isinf(alpha):
            out.append(np.inf)
        elif float(alpha).is_integer():
            out.append(log_a(int(alpha)) / (alpha - 1))
        else:  # Cor. 10: the cumulant generating function interpolated between the integer orders either side
            lo, hi = math.floor(alpha), math.ceil(alpha)
            t = alpha - lo
            out.append(((1 - t) * log_a(lo) + t * log_a(hi)) / (alpha - 1))
    return np.array(out)


def accountant_rdp(n: int, b: int, sigma: float) -> np.ndarray:
    """dp-accounting's RDP (its default orders) of one such step, through its public accountant: the reference."""
    import dp_accounting as lib
    from dp_accounting import rdp

    acc = rdp.RdpAccountant(neighboring_relation=lib.NeighboringRelation.REPLACE_ONE)
    acc.compose(lib.SampledWithoutReplacementDpEvent(n, b, lib.GaussianDpEvent(sigma)))
    return np.array(acc.rdp, dtype=float)


def default_orders() -> np.ndarray:
    """dp-accounting's default RDP orders, as its accountant holds them (a float array)."""
    from dp_accounting.rdp import rdp_privacy_accountant

    return np.array(rdp_privacy_accountant.DEFAULT_RDP_ORDERS)


@functools.lru_cache(maxsize=1)
def reproduces_dp_accounting() -> bool:
    """Whether :func:`sample_wor_gaussian_rdp` equals the installed dp-accounting's accountant at two (q, σ), every
    order; warns once if not (another dp-accounting version), and the callers use the library."""
    for n, b, sigma in ((20, 1, 0.9), (4, 2, 3.0)):
        if not np.array_equal(sample_wor_gaussian_rdp(b / n, sigma, default_orders()), accountant_rdp(n, b, sigma)):
            warnings.warn(
                "dpcost.dp.rdp_wor does not reproduce this dp-accounting version's RDP of sampling without "
                "replacement; the accounting uses dp-accounting's own (slower) computation",
                RuntimeWarning,
                stacklevel=2,
            )
            return False
    return True
