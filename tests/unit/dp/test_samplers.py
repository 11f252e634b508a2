"""The exact discrete samplers (Canonne, Kamath & Steinke 2020) and the grid releases built on them."""

import math

import numpy as np
import pytest
from scipy import stats

from dpcost.dp import samplers as S
from dpcost.dp.mechanisms import gaussian_delta, gaussian_sigma, laplace_mechanism
from dpcost.dp.plan import grid_release, grid_rounding
from dpcost.errors import PrivacyError


def _chi2_pvalue(z, log_weight, support):
    """Goodness of fit of integer draws to P(k) ∝ exp(log_weight(k)) over ``support`` (tail lumped in one cell)."""
    full = np.arange(-2000, 2001)
    W = np.exp(log_weight(full)).sum()
    p = np.exp(log_weight(support)) / W
    obs = np.array([np.sum(z == k) for k in support])
    N = len(z)
    chi = ((obs - N * p) ** 2 / (N * p)).sum()
    rest, p_rest = N - obs.sum(), 1 - p.sum()
    if p_rest > 1e-9:
        chi += (rest - N * p_rest) ** 2 / (N * p_rest)
    return stats.chi2.sf(chi, len(support))


@pytest.mark.parametrize("t", [1, 2, 5])
def test_discrete_laplace_has_the_exact_distribution(t):
    z = S.discrete_laplace(t, 300_000, np.random.default_rng(t))
    assert z.dtype == np.int64
    assert _chi2_pvalue(z, lambda k: -np.abs(k) / t, np.arange(-6 * t, 6 * t + 1)) > 1e-3
    # the test has power: the same draws against a 10 % wider scale are rejected
    assert _chi2_pvalue(z, lambda k: -np.abs(k) / (1.1 * t), np.arange(-6 * t, 6 * t + 1)) < 1e-6


@pytest.mark.parametrize("t", [1, 2, 5])
def test_discrete_gaussian_has_the_exact_distribution(t):
    z = S.discrete_gaussian(t, 300_000, np.random.default_rng(10 + t))
    assert _chi2_pvalue(z, lambda k: -(k**2) / (2 * t * t), np.arange(-4 * t, 4 * t + 1)) > 1e-3
    assert _chi2_pvalue(z, lambda k: -(k**2) / (2 * (1.1 * t) ** 2), np.arange(-4 * t, 4 * t + 1)) < 1e-6


@pytest.mark.parametrize("law, limit", [("laplace", S.LAPLACE_T_MAX), ("gaussian", S.GAUSSIAN_T_MAX)])
def test_a_scale_outside_the_exact_range_is_refused(law, limit):
    draw = S.discrete_laplace if law == "laplace" else S.discrete_gaussian
    for t in (0, -4, limit + 1, 2**62, 1.5, 2.0, True):
        with pytest.raises(PrivacyError, match="integer scale t in"):
            draw(t, 10, np.random.default_rng(0))
    assert draw(np.int64(limit), 3, np.random.default_rng(0)).shape == (3,)


@pytest.mark.parametrize("law", ["laplace", "gaussian"])
def test_the_law_holds_at_the_top_of_the_range(law):
    # at t = 2^62 the Laplace sampler's t·A wrapped int64 and no draw lay beyond 2t (13.5 % expected); at the largest
    # scale allowed the tail beyond 2t has its mass: 2e^{-2}/(1 + e^{-1/t}) -> e^{-2} (Laplace), 2(1 - Φ(2)) (Gaussian)
    t = S.LAPLACE_T_MAX if law == "laplace" else S.GAUSSIAN_T_MAX
    n = 40_000
    z = (S.discrete_laplace if law == "laplace" else S.discrete_gaussian)(t, n, np.random.default_rng(35))
    p = math.exp(-2) if law == "laplace" else 2 * stats.norm.sf(2)
    share = np.mean(np.abs(z) > 2 * t)
    assert abs(share - p) < 4 * math.sqrt(p * (1 - p) / n)  # four standard errors: ±0.007 (Laplace)
    assert abs(np.mean(z < 0) - 0.5) < 4 * math.sqrt(0.25 / n)


def test_small_and_large_batches_agree():
    # the batching (8 trials a round under 1,000 draws, 1 above) must not change the distribution
    rng = np.random.default_rng(5)
    small = np.concatenate([S.discrete_gaussian(3, 50, rng) for _ in range(4000)])
    large = S.discrete_gaussian(3, 200_000, rng)
    assert stats.ks_2samp(small, large).pvalue > 1e-3


def test_releases_lie_on_the_grid_whatever_the_true_value():
    # Mironov's attack needs outputs reachable from f and not from f': on the grid both reach the same set
    rng = np.random.default_rng(6)
    for f in (0.0, 1.0, math.pi):
        noise = S.draw("laplace", 0.75, (1000,), rng)
        out = noise.add(np.full(1000, f))
        steps = out / noise.step
        assert np.array_equal(steps, np.rint(steps))
    unsafe = S.draw("laplace", 0.75, (1000,), rng, "float-unsafe").add(np.full(1000, math.pi))
    assert not np.array_equal(unsafe / (0.75 / S.T), np.rint(unsafe / (0.75 / S.T)))


def test_grid_scale_pays_exactly_for_rounding():
    # Laplace: the integer sensitivity Δ/g + k over the scale T is ε, less only the margin (pure DP, no slack lost)
    for eps, sens, k in [(0.5, 2.0, 1), (0.05, 1.0, 20), (3.0, 0.1, 2000)]:
        b = S.grid_scale(sens / eps, sens, k, "l1", "laplace")
        g = b / S.T
        assert (sens / g + k) / S.T == pytest.approx(eps / (1 + S.MARGIN), rel=1e-12)
    # Gaussian: σ is the continuous σ for the inflated ℓ2 sensitivity Δ + √k g, times the margin
    sigma0 = gaussian_sigma(1.0, 0.5, 1e-5, "analytic")
    sigma = S.grid_scale(sigma0, 1.0, 45, "l2", "gaussian")
    g = sigma / S.T
    assert sigma == pytest.approx(sigma0 * (1 + math.sqrt(45) * g) * (1 + S.MARGIN), rel=1e-12)
    assert S.grid_scale(sigma0, 1.0, 45, "l2", "gaussian", "float-unsafe") == sigma0
    with pytest.raises(PrivacyError, match="too coarse"):
        S.grid_scale(1e6, 1.0, 10**4, "l1", "laplace")


def test_rounding_keeps_neighbours_within_the_inflated_sensitivity():
    rng = np.random.default_rng(7)
    b, sens, k = 0.3, 1.0, 50
    g = b / S.T
    f = rng.normal(0, 100, size=(2000, k))
    d = rng.normal(size=(2000, k))
    f2 = f + d / np.abs(d).sum(axis=1, keepdims=True) * sens  # ‖f − f′‖₁ = Δ exactly
    gap = np.abs(np.rint(f / g) - np.rint(f2 / g)).sum(axis=1)
    assert gap.max() <= sens / g + k


def test_values_off_the_grid_range_are_clamped_to_its_ends_and_nan_is_refused():
    """A value beyond ±2^51 grid steps (or ±inf: a sum that overflowed) is released as that end of the grid, not
    refused, so whether a release is made never depends on the data; values inside are released as before."""
    rng = np.random.default_rng(8)
    noise = S.draw("gaussian", 1e-6, (4,), rng)
    g = noise.step
    out = noise.add([1e20, -np.inf, np.inf, 3.0])
    end = g * 2.0**51
    assert np.all(np.isfinite(out))
    np.testing.assert_array_equal(out[:3], g * (np.array([2.0**51, -(2.0**51), 2.0**51]) + noise.steps[:3]))
    assert out[3] == g * (np.rint(3.0 / g) + noise.steps[3])
    assert abs(out[0] - end) < 100 * 1e-6 and abs(out[1] + end) < 100 * 1e-6
    with pytest.raises(PrivacyError, match="NaN"):
        noise.add([np.nan, 0.0, 0.0, 0.0])


def test_a_clamped_pair_of_neighbours_is_never_farther_apart_than_before():
    """The clamp is a projection on a public box, 1-Lipschitz coordinate by coordinate: two values at most Δ apart
    give grid integers at most Δ/g + 1 apart, the rounding the plans pay for."""
    noise = S.draw("gaussian", 1.0, (3,), np.random.default_rng(9))
    g = noise.step
    a = np.array([2.0**51 * g - 0.4, 1e300, -np.inf])
    b = a + np.array([0.9, -0.9, 0.9])  # within Δ = 0.9 (inf stays inf)
    ka, kb = (noise.add(v) / g - noise.steps for v in (a, b))
    assert np.all(np.abs(ka - kb) <= 0.9 / g + 1)


@pytest.mark.parametrize("scale", [2.0**-1001, 2.0**991, 5e-324])
def test_noise_scales_outside_the_grids_float_range_are_refused(scale):
    with pytest.raises(PrivacyError, match="outside"):
        S.draw("gaussian", scale, (2,), np.random.default_rng(0))
    S.draw("gaussian", 2.0**-1000, (2,), np.random.default_rng(0))  # the ends themselves are drawn
    S.draw("gaussian", 2.0**990, (2,), np.random.default_rng(0))


@pytest.mark.parametrize(
    "sigma,sens,eps", [(1024, 300, 1.0), (1024, 100, 0.3), (4096, 1000, 1.0), (4096, 40, 0.05), (1024, 10, 0.01)]
)
def test_discrete_gaussian_curve_is_covered_by_the_margin(sigma, sens, eps):
    """Exact δ(ε) of the discrete Gaussian (summed over the lattice) against the continuous curve: it can exceed it by
    a relative ~1.5e-7 (measured at these points); with σ raised by MARGIN = 1e-6 it is below it."""

    def delta_discrete(s):
        z = np.arange(-int(40 * s), int(40 * s) + 1, dtype=float)
        W = np.exp(-(z**2) / (2 * s * s)).sum()
        p, q = np.exp(-(z**2) / (2 * s * s)) / W, np.exp(-((z - sens) ** 2) / (2 * s * s)) / W
        return np.maximum(0.0, p - math.exp(eps) * q).sum()

    continuous = gaussian_delta(sigma, sens, eps)
    assert abs(delta_discrete(sigma) / continuous - 1) < 1e-6
    assert delta_discrete(sigma * (1 + S.MARGIN)) < continuous


def test_mechanism_rows_are_independent_releases():
    rng = np.random.default_rng(9)
    out = laplace_mechanism(np.zeros((100_000, 1)), sensitivity=1.0, epsilon=1.0, rng=rng)
    assert out.shape == (100_000, 1)
    # one release of 100,000 coordinates would pay 100,000 grid steps of rounding: refused as too coarse
    with pytest.raises(PrivacyError, match="too coarse"):
        laplace_mechanism(np.zeros(2_000_000), sensitivity=1.0, epsilon=1.0, rng=rng)


def test_unknown_sampler_is_refused():
    with pytest.raises(PrivacyError, match="sampler"):
        S.draw("laplace", 1.0, 3, np.random.default_rng(0), "fast")


def test_a_grid_release_records_what_its_rounding_adds_to_the_sensitivity():
    """The ledger composes a grid release at its sensitivity plus r·g (the neighbours' integer vectors differ by
    Δ/g + r steps): the release records r·g as a number, ``rounding``, the r of its ``describe`` text."""
    sigma0 = gaussian_sigma(1.0, 0.5, 1e-5, "analytic")
    sigma = S.grid_scale(sigma0, 1.0, 45, "l2", "gaussian")
    rel = grid_release("gaussian", "gaussian", 1.0, "l2", sigma, coordinates=45, sampler="exact")
    assert rel.rounding == grid_rounding(45, "l2", sigma, "exact") == math.sqrt(45) * sigma / S.T
    assert rel.sampler == S.describe("gaussian", 45, "l2", "exact") and rel.noise == "exact"
    # with it, Δ/σ is the continuous calibration's, less the margin: (1 + rounding)/σ = 1/(σ0 (1 + MARGIN))
    assert (1.0 + rel.rounding) / sigma == pytest.approx(1 / (sigma0 * (1 + S.MARGIN)), rel=1e-12)
    lap = grid_release("laplace", "laplace", 1.0, "l1", 2.0, coordinates=3, sampler="exact")
    assert lap.rounding == 3 * 2.0 / S.T
    # each coordinate its own release, or a selection's scores: one grid step
    assert grid_release("laplace", "laplace", 1.0, "each", 2.0, coordinates=1, sampler="exact").rounding == 2.0 / S.T
    assert grid_release("selection", "rnm", 1.0, "linf", 2.0, coordinates=None, sampler="exact").rounding == 2.0 / S.T
    unsafe = grid_release("gaussian", "gaussian", 1.0, "l2", sigma, coordinates=45, sampler="float-unsafe")
    assert unsafe.rounding == 0.0 and unsafe.noise == "float-unsafe"
    printed = grid_release("gaussian", "gaussian", None, "l2", sigma, coordinates=45, sampler="exact")
    assert printed.rounding == 0.0 and "no rounding cost" in printed.sampler  # no sensitivity: nothing to pay for
