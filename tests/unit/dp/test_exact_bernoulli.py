"""The exact coins behind the samplers: bounds that hold, an undecided band resolved exactly, and the distributions
they make — checked against exact probabilities, with the slow path forced, on both the vectorised and the scalar
path, at the production grid (t = 2^20) as well as at small scales."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpcost.dp import exact_bernoulli as EB
from dpcost.dp import samplers as S

from support import chi2_lumped


def _exp_bracket(x: Fraction, bits: int) -> tuple[Fraction, Fraction]:
    """An independent bracket of e^{−x}, 0 ≤ x ≤ 1, by the alternating Taylor series (partial sums alternate around
    the limit), narrower than 2^{-bits-8}; x > 1 is reduced by e^{−x} = (e^{−x/2})²."""
    if x > 1:
        lo, hi = _exp_bracket(x / 2, bits + 8)
        return lo * lo, hi * hi
    term, total, k = Fraction(1), Fraction(1), 0
    partial = [total]
    while True:
        k += 1
        term = term * -x / k
        total += term
        partial.append(total)
        if abs(term) < Fraction(1, 2 ** (bits + 8)) and k % 2 == 0:
            return min(partial[-2:]), max(partial[-2:])


@pytest.mark.parametrize(
    "num,den,bits",
    [(1, 1, 53), (1, 2**20, 53), (2**20 - 1, 2**20, 53), (12345, 777, 53), (40, 1, 53), (3, 2, 200),
     (2**33 - 1, 2**41, 53), (5 * 2**33, 2**41, 115), (7, 3, 300)],
)  # fmt: skip
def test_exp_bounds_hold_and_are_tight(num, den, bits):
    low, high = EB.exp_bounds(num, den, bits)
    lo, hi = _exp_bracket(Fraction(num, den), bits)
    assert low <= lo * 2**bits and hi * 2**bits <= high
    assert high - low <= 2
    assert EB.exp_bounds(0, 5, 53) == (2**53, 2**53)


def test_every_table_band_is_at_most_two_integers_wide():
    for step, den, size in [(1 << 12, 1 << 20, 257), (1 << 33, 1 << 41, 257), (1, 1, EB.Q_MAX + 1), (1, 50, 64)]:
        low, high, _ = EB._table(step, den, size)
        assert np.all(high - low <= 2) and np.all(low <= high)
    low, high = EB._thresholds()
    assert np.all(high - low == 1) and np.all(np.diff(low) > 0)


class ScriptedBits:
    """A stand-in generator whose raw words are given (then a seeded stream): puts V exactly on a band."""

    def __init__(self, words, seed=0):
        self.words, self.rest = list(words), np.random.default_rng(seed).bit_generator
        self.bit_generator = self

    def random_raw(self, size=None):
        if size is None:
            return np.uint64(self.words.pop(0)) if self.words else self.rest.random_raw()
        return np.array([self.random_raw() for _ in range(size)], dtype=np.uint64)


def _decided_side(prefix: EB.Prefix, num: int, den: int) -> bool | None:
    """Which side of e^{−num/den} the whole interval of V's known bits lies on, by the independent bracket."""
    lo, hi = _exp_bracket(Fraction(num, den), prefix.bits + 8)
    v_lo, v_hi = Fraction(prefix.u, 2**prefix.bits), Fraction(prefix.u + 1, 2**prefix.bits)
    return True if v_hi <= lo else False if v_lo >= hi else None


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("num,den", [(1, 1), (3, 2**20), (777, 1000)])
def test_an_undecided_coin_is_resolved_by_more_bits_of_the_same_uniform(num, den, seed):
    low, _ = EB.exp_bounds(num, den, 53)
    prefix = EB.Prefix(low, 53, ScriptedBits([], seed))  # u = L: the band
    heads = prefix.below_exp(num, den)
    assert prefix.bits > 53  # it had to draw more bits
    assert _decided_side(prefix, num, den) is heads


def test_the_geometric_slow_path_counts_exactly():
    low = EB._threshold_list()
    for a in (0, 1, 5):  # V's first 53 bits on the band of e^{−(a+1)}
        for seed in range(4):
            u = low[a]
            rng = ScriptedBits([u << 11], seed)
            (got,) = EB.geometric_e(1, rng).tolist()
            prefix = EB.Prefix(u, 53, ScriptedBits([], seed))
            want = 0
            while prefix.below_exp(want + 1, 1):
                want += 1
            assert got == want and want in (a, a + 1)
            assert EB.geometric_one(EB.Words(ScriptedBits([u << 11], seed))) == want


@pytest.mark.parametrize("den", [2**20, 2**41, 1000])
def test_coins_have_the_exact_probability_even_when_every_coin_takes_the_slow_path(den, monkeypatch):
    """Widened table bounds (L − 2^52, H + 2^52) send most coins through the refinement and Prefix: the heads rate
    must still be exp(−num/den) for each num, within sampling error (chi-square over 8 values of num)."""
    table = EB._table.__wrapped__

    def wide(step, d, size):
        low, high, _ = table(step, d, size)
        return np.maximum(low - 2**52, 0), high + 2**52, False

    monkeypatch.setattr(EB, "_table", wide)
    nums = np.array([0, 1, den // 7, den // 2, den - 1, den, 3 * den + den // 3, 41 * den + 5], dtype=np.int64)
    num = np.repeat(nums, 4000)
    heads = EB.bernoulli_exp(num, den, np.random.default_rng(den % 97)).reshape(len(nums), -1).sum(axis=1)
    p = np.exp(-nums / den)
    z = (heads - 4000 * p) / np.sqrt(4000 * p * (1 - p) + 1e-12)
    assert np.all(np.abs(z[p < 1]) < 4.5) and heads[0] == 4000


def test_the_slow_path_check_catches_a_biased_resolution(monkeypatch):
    """Planted: an undecided coin always resolved to heads. The check above must fail on it."""
    monkeypatch.setattr(EB.Prefix, "below_exp", lambda self, num, den: True)
    with pytest.raises(AssertionError):
        test_coins_have_the_exact_probability_even_when_every_coin_takes_the_slow_path(2**20, monkeypatch)


def test_geometric_has_the_exact_distribution():
    a = EB.geometric_e(400_000, np.random.default_rng(3))
    k = np.arange(12)
    expected = np.exp(-k) * (1 - math.exp(-1))
    observed = np.array([np.sum(a == j) for j in k])
    assert chi2_lumped(observed, expected) > 1e-3
    words = EB.Words(np.random.default_rng(4))
    one = np.array([EB.geometric_one(words) for _ in range(40_000)])
    assert chi2_lumped(np.array([np.sum(one == j) for j in k]), expected) > 1e-3


def _laplace_pmf(t, support):
    return np.exp(-np.abs(support) / t)


def _gaussian_pmf(t, support):
    return np.exp(-(support.astype(float) ** 2) / (2 * t * t))


@pytest.mark.parametrize("t", [8, 64])
@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_both_paths_draw_the_exact_pmf(kind, t):
    """The vectorised path (large requests) and the scalar one (≤ SMALL draws) against the exact pmf; and the same
    test rejects a 5 % wider scale (power)."""
    sampler, pmf = (S.discrete_laplace, _laplace_pmf) if kind == "laplace" else (S.discrete_gaussian, _gaussian_pmf)
    support = np.arange(-8 * t, 8 * t + 1)
    rng = np.random.default_rng(t)
    large = sampler(t, 200_000, rng)
    small = np.concatenate([sampler(t, S.SMALL, rng) for _ in range(60_000 // S.SMALL)])
    for z in (large, small):
        counts = np.bincount(np.clip(z, -8 * t, 8 * t) + 8 * t, minlength=support.size)
        full = pmf(t, np.arange(-40 * t, 40 * t + 1))
        expected = pmf(t, support) / full.sum()
        expected[0] += full[: 32 * t].sum() / full.sum()  # the clipped tails
        expected[-1] += full[-32 * t :].sum() / full.sum()
        assert chi2_lumped(counts, expected) > 1e-3
        assert chi2_lumped(counts, pmf(1.05 * t, support)) < 1e-6 or len(z) < 100_000


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_the_production_grid_tails_and_low_bits(kind):
    """t = 2^20: the mass in bins of z/t matches the exact pmf (tails included), and the low bits are uniform."""
    t = S.T
    z = (S.discrete_laplace if kind == "laplace" else S.discrete_gaussian)(t, 300_000, np.random.default_rng(11))
    edges = np.array([-np.inf, -6, -4, -3, -2, -1.5, -1, -0.5, -0.25, 0, 0.25, 0.5, 1, 1.5, 2, 3, 4, 6, np.inf]) * t
    grid = np.arange(-30 * t, 30 * t + 1)
    w = _laplace_pmf(t, grid) if kind == "laplace" else _gaussian_pmf(t, grid)
    cdf = np.concatenate([[0.0], np.cumsum(w) / w.sum()])
    expected = np.diff(cdf[np.clip(np.searchsorted(grid, edges, side="left"), 0, grid.size)])
    observed = np.histogram(z, bins=np.where(np.isinf(edges), np.sign(edges) * 1e18, edges - 0.5))[0]
    assert chi2_lumped(observed, expected) > 1e-3
    low_bits = np.bincount(z & 15, minlength=16)
    assert stats.chisquare(low_bits).pvalue > 1e-3


def test_scalar_and_vectorised_paths_agree_in_law():
    rng = np.random.default_rng(12)
    small = np.concatenate([S.discrete_gaussian(S.T, 3, rng) for _ in range(20_000)])
    large = S.discrete_gaussian(S.T, 60_000, rng)
    assert stats.ks_2samp(small, large).pvalue > 1e-3
