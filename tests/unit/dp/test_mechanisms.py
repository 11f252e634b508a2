import math

import numpy as np
import pytest
from scipy import stats

from dpcost.dp.mechanisms import gaussian_mechanism, gaussian_sigma, laplace_mechanism, laplace_scale
from dpcost.errors import PrivacyError

N = 200_000  # draws per variance test


def test_laplace_noise_variance_matches_scale():
    # Var Laplace(b) = 2b²; the sample variance of N draws has relative sd sqrt(20/N)/2 (excess kurtosis 3):
    # 0.50 % at N = 2e5. Tolerance: 5 sd.
    rng = np.random.default_rng(1)
    out = laplace_mechanism(np.zeros((N, 1)), sensitivity=2.0, epsilon=0.5, rng=rng)[:, 0]
    b = laplace_scale(2.0, 0.5)
    assert b == 4.0
    rel_sd = math.sqrt(20 / N) / 2
    assert abs(out.var() / (2 * b**2) - 1) < 5 * rel_sd


def test_laplace_noise_distribution_rejects_wrong_scale():
    rng = np.random.default_rng(2)
    out = laplace_mechanism(np.zeros((N, 1)), sensitivity=1.0, epsilon=1.0, rng=rng)[:, 0]
    assert stats.kstest(out, stats.laplace(scale=1.0).cdf).pvalue > 1e-3
    for wrong in (0.7, 1.3):
        assert stats.kstest(out, stats.laplace(scale=wrong).cdf).pvalue < 1e-6


def test_gaussian_classic_sigma_and_variance():
    sigma = gaussian_sigma(1.5, 0.5, 1e-5, "classic")
    assert sigma == pytest.approx(1.5 * math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5, rel=1e-15)
    rng = np.random.default_rng(3)
    out = gaussian_mechanism(
        np.zeros((N, 1)), sensitivity=1.5, epsilon=0.5, delta=1e-5, rng=rng, calibration="classic"
    )[:, 0]
    # relative sd of the sample variance of Gaussian draws: sqrt(2/N) = 0.32 %; tolerance 5 sd
    assert abs(out.var() / sigma**2 - 1) < 5 * math.sqrt(2 / N)
    assert stats.kstest(out / sigma, "norm").pvalue > 1e-3
    for wrong in (0.7, 1.3):
        assert stats.kstest(out / (sigma * wrong), "norm").pvalue < 1e-6


def _delta_of(sigma, sens, eps):
    # independent evaluation of the exact Gaussian privacy profile with scipy.stats
    a, b = sens / (2 * sigma), eps * sigma / sens
    return stats.norm.cdf(a - b) - math.exp(eps) * stats.norm.cdf(-a - b)


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-5), (0.5, 1e-6), (1.0, 1e-5), (4.0, 1e-8)])
def test_analytic_gaussian_is_the_smallest_valid_sigma(eps, delta):
    sigma = gaussian_sigma(1.0, eps, delta, "analytic")
    assert _delta_of(sigma, 1.0, eps) <= delta
    assert _delta_of(sigma * (1 - 1e-6), 1.0, eps) > delta
    if eps < 1:
        assert sigma < gaussian_sigma(1.0, eps, delta, "classic")


def test_analytic_sigma_scales_linearly_with_sensitivity():
    assert gaussian_sigma(3.0, 0.5, 1e-5) == pytest.approx(3 * gaussian_sigma(1.0, 0.5, 1e-5), rel=1e-9)


def test_classic_calibration_refused_or_warned_outside_its_range():
    with pytest.raises(PrivacyError, match="epsilon < 1"):
        gaussian_sigma(1.0, 1.0, 1e-5, "classic")
    with pytest.warns(RuntimeWarning, match="PRIVACY WARNING"):
        gaussian_sigma(1.0, 2.0, 1e-5, "classic", on_invalid="warn")


@pytest.mark.parametrize("sens", [0.0, -1.0, float("nan"), float("inf")])
def test_degenerate_sensitivity_is_refused(sens):
    # a zero sensitivity would release the value without noise (cf. diffprivlib issue #105)
    with pytest.raises(PrivacyError, match="sensitivity"):
        gaussian_sigma(sens, 0.5, 1e-5)
    with pytest.raises(PrivacyError, match="sensitivity"):
        laplace_scale(sens, 0.5)


@pytest.mark.parametrize("eps,delta", [(0, 1e-5), (-1, 1e-5), (float("nan"), 1e-5), (0.5, 0), (0.5, 1), (0.5, -0.1)])
def test_bad_privacy_parameters_are_refused(eps, delta):
    with pytest.raises(PrivacyError):
        gaussian_sigma(1.0, eps, delta)


def test_unknown_calibration_is_refused():
    with pytest.raises(PrivacyError, match="unknown Gaussian calibration"):
        gaussian_sigma(1.0, 0.5, 1e-5, "paper-ish")
