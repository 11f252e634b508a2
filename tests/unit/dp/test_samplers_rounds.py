"""The samplers' rounds (dpcost.dp.samplers._round, _small_round) and the lean coins they use: each lean decision
equals the reference decision on the same uniform, and the draws fit the exact pmf at several scales, on the path of
few proposals (13–32 draws a call) and of many, tails and low bits included."""

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpcost.dp import exact_bernoulli as EB
from dpcost.dp import samplers as S

from support import chi2_lumped


def _pmf(kind, t, support):
    s = support.astype(float)
    return np.exp(-np.abs(s) / t) if kind == "laplace" else np.exp(-(s**2) / (2 * t * t))


def _sampler(kind):
    return S.discrete_laplace if kind == "laplace" else S.discrete_gaussian


@pytest.mark.parametrize("size", [13, 32])
@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_calls_of_13_to_32_draws_take_the_small_round(kind, size):
    assert S.SMALL < size and S._proposals(size, S.RATE[kind == "gaussian"]) <= S.SMALL_ROUND


@pytest.mark.parametrize("t", [2, 8, 64])
@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_small_rounds_draw_the_exact_pmf(kind, t):
    """Calls of 32 draws (one small round each) against the exact pmf; the same test rejects a 5 % wider scale."""
    rng = np.random.default_rng(100 + t)
    z = np.concatenate([_sampler(kind)(t, 32, rng) for _ in range(200_000 // 32)])
    support = np.arange(-8 * t, 8 * t + 1)
    counts = np.bincount(np.clip(z, -8 * t, 8 * t) + 8 * t, minlength=support.size)
    full = _pmf(kind, t, np.arange(-40 * t, 40 * t + 1))
    expected = _pmf(kind, t, support) / full.sum()
    expected[0] += full[: 32 * t].sum() / full.sum()  # the clipped tails
    expected[-1] += full[-32 * t :].sum() / full.sum()
    assert chi2_lumped(counts, expected) > 1e-3
    assert chi2_lumped(counts, _pmf(kind, 1.05 * t, support)) < 1e-6


@pytest.mark.parametrize("size", [32, 200_000])
@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_the_production_grid_tails_and_low_bits_on_both_rounds(kind, size):
    """t = 2^20, calls of 32 draws (small rounds) and of 200,000 (rounds of CHUNK proposals): mass in bins of z/t
    (tails to ±6t and beyond) and the low bits (uniform mod 16 and mod 2^12)."""
    t, rng = S.T, np.random.default_rng(7 + size)
    z = np.concatenate([_sampler(kind)(t, size, rng) for _ in range(200_000 // size)])
    edges = np.array([-np.inf, -6, -4, -3, -2, -1.5, -1, -0.5, -0.25, 0, 0.25, 0.5, 1, 1.5, 2, 3, 4, 6, np.inf]) * t
    grid = np.arange(-30 * t, 30 * t + 1)
    w = _pmf(kind, t, grid)
    cdf = np.concatenate([[0.0], np.cumsum(w) / w.sum()])
    expected = np.diff(cdf[np.clip(np.searchsorted(grid, edges, side="left"), 0, grid.size)])
    observed = np.histogram(z, bins=np.where(np.isinf(edges), np.sign(edges) * 1e18, edges - 0.5))[0]
    assert chi2_lumped(observed, expected) > 1e-3
    assert stats.chisquare(np.bincount(z & 15, minlength=16)).pvalue > 1e-3
    assert stats.chisquare(np.bincount(z & 4095, minlength=4096)).pvalue > 1e-3


@pytest.mark.parametrize("b", [20, 41])
def test_the_lean_coin_decides_as_the_reference_on_the_same_uniforms(b):
    """dyadic_coins (filter table of 2^LEAN bins) equals _dyadic_coins (the reference) coin for coin on the same u,
    for random u and for u placed in each filter band, and both agree with e^{−r/2^b} computed in rationals."""
    rng = np.random.default_rng(b)
    low1, m, w, _ = EB._dyadic_lean(b)
    r = rng.integers(0, 1 << b, 4000)
    band = low1[r[2000:] >> m] + rng.integers(0, int(w), 2000)  # second half: u inside the filter band
    u = np.concatenate([rng.integers(0, 1 << 53, 2000), band])
    lean = EB.dyadic_coins(r, b, u, np.random.default_rng(1))
    assert np.array_equal(lean, EB._dyadic_coins(r, b, np.random.default_rng(1), u))
    for i in range(0, 4000, 37):  # exact check on a sample: heads iff V < p, decided unless u is within 1 of 2^53 p
        lo, hi = (x * 2**53 for x in _exp_bracket_fraction(r[i], b))
        if u[i] + 1 <= lo or u[i] >= hi:
            assert lean[i] == (u[i] + 1 <= lo)


def _exp_bracket_fraction(r: int, b: int) -> tuple[Fraction, Fraction]:
    """e^{−r/2^b} bracketed by consecutive Taylor partial sums (r < 2^b: the argument is below 1)."""
    x, term, total, k = Fraction(int(r), 1 << b), Fraction(1), Fraction(1), 0
    while True:
        k += 1
        term = term * -x / k
        previous, total = total, total + term
        if abs(term) < Fraction(1, 2**70):
            return min(previous, total), max(previous, total)


@pytest.mark.parametrize("pre_drawn", [False, True])
def test_the_gaussian_coin_has_the_exact_probability_with_its_integer_part(pre_drawn):
    """bernoulli_exp_dyadic: heads rate exp(−num/2^41) for num with integer parts 0, 1, 3, 36 and 40 (beyond the
    one-coin table: fresh coins), the integer part's uniform pre-drawn or not (z within 4.5 of 0)."""
    den_bits, n = 41, 20_000
    nums = np.array([0, 2**40, 2**41 + 5, 3 * 2**41 + 2**39, 36 * 2**41, 40 * 2**41 + 7], dtype=np.int64)
    num = np.repeat(nums, n)
    rng = np.random.default_rng(3 + pre_drawn)
    u = EB.uniform53(rng, num.size)
    u_int = EB.uniform53(rng, num.size) if pre_drawn else None
    heads = EB.bernoulli_exp_dyadic(num, den_bits, u, rng, u_int).reshape(len(nums), n).sum(axis=1)
    p = np.exp(-nums / 2.0**den_bits)
    z = (heads - n * p) / np.sqrt(n * p * (1 - p) + 1e-300)
    assert heads[0] == n and np.all(np.abs(z[1:]) < 4.5)
    assert heads[-1] == 0  # e^{−40}: no heads in 20,000


def test_the_integer_coin_on_its_bound_takes_the_exact_slow_path(monkeypatch):
    """u_int = L_q (the one undecided value) goes to Prefix with the true q: planted, Prefix answers are recorded."""
    low = EB._table(1, 1, EB.Q_MAX + 1)[0]
    calls = []
    monkeypatch.setattr(EB.Prefix, "below_exp", lambda self, num, den: calls.append((self.u, num, den)) or True)
    num = np.array([2**41, 3 * 2**41], dtype=np.int64)  # q = 1, 3; remainder 0: its coin is heads
    u = np.zeros(2, dtype=np.int64)
    heads = EB.bernoulli_exp_dyadic(num, 41, u, np.random.default_rng(0), np.array([low[1], low[3] + 1]))
    assert calls == [(int(low[1]), 1, 1)] and heads.tolist() == [True, False]


@pytest.mark.parametrize("size", [40, 300])  # the few path (binary search) and the many path (comparisons)
def test_the_geometric_from_given_uniforms_is_geometric_e(size):
    """add_geometric equals t·geometric_e on the same uniforms, with some of them placed on thresholds (undecided)
    and below e^{−36}: those draw from the generator, identically in both."""
    rng = np.random.default_rng(size)
    u = rng.integers(0, 1 << 53, size)
    low = EB._thresholds()[0]
    u[:3] = [low[-1], low[-3], 1]  # on L_1, on L_3, below L_36
    x = np.zeros(size, dtype=np.int64)
    EB.add_geometric(x, 8, u, np.random.default_rng(9))
    assert np.array_equal(x, 8 * EB.geometric_e(size, np.random.default_rng(9), u))
    few = u[3:40]  # and without undecided values the few path reads the table alone
    x = np.zeros(few.size, dtype=np.int64)
    EB.add_geometric(x, 1, few, np.random.default_rng(0))
    assert np.array_equal(x, EB.geometric_e(few.size, np.random.default_rng(0), few))
