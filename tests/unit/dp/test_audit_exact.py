"""Exact privacy curves of one-dimensional outputs (dpcost.dp.audit): the hockey-stick divergence
δ(ε) = ∫ max(0, p − e^ε q) of the two output laws of a neighbouring pair, in both orders, and the smallest ε with
δ(ε) ≤ δ. No sampling error: checked against closed forms, and a planted bug (noise ÷ 1.5) is seen exactly."""

import math

import numpy as np
import pytest
from scipy import stats

from dpcost.dp.audit import (
    exact_epsilon,
    exact_epsilon_sum,
    hockey_stick,
    hockey_stick_sum,
    privacy_curve,
    smallest_epsilon,
)
from dpcost.dp.mechanisms import gaussian_delta, gaussian_sigma
from dpcost.dp.privacy import Privacy
from dpcost.estimators import truncated_ols


def _gauss(mu, sigma):
    return lambda x: -0.5 * ((x - mu) / sigma) ** 2 - math.log(sigma * math.sqrt(2 * math.pi))


def _laplace(mu, b):
    return lambda x: -np.abs(x - mu) / b - math.log(2 * b)


def _gaussian_pair(sigma, sens=1.0):
    return _gauss(sens, sigma), _gauss(0.0, sigma), dict(window=(-40 * sigma, sens + 40 * sigma))


# ---- closed forms ------------------------------------------------------------------------------------------------


def test_laplace_curve_is_the_closed_form_and_zero_from_sensitivity_over_scale():
    # Laplace(b) at f(D) = Δ against f(D′) = 0: δ(ε) = 1 − e^{(ε − Δ/b)/2} for ε < Δ/b, and 0 from ε = Δ/b on
    b, sens = 2.0, 1.0
    kw = dict(window=(-80.0, 80.0), breakpoints=(0.0, sens))
    for eps in (0.0, 0.1, 0.3, 0.49):
        pq, qp = privacy_curve(_laplace(sens, b), _laplace(0.0, b), [eps], **kw)
        assert pq[0] == pytest.approx(1 - math.exp((eps - sens / b) / 2), rel=1e-9)
        assert qp[0] == pytest.approx(pq[0], rel=1e-9)  # symmetric pair
    assert hockey_stick(_laplace(sens, b), _laplace(0.0, b), sens / b, **kw) == 0.0
    assert exact_epsilon(_laplace(sens, b), _laplace(0.0, b), 0.0, **kw) == pytest.approx(sens / b, rel=1e-9)
    # with δ > 0 the smallest ε solves the closed form: Δ/b + 2 log(1 − δ)
    assert exact_epsilon(_laplace(sens, b), _laplace(0.0, b), 1e-3, **kw) == pytest.approx(
        sens / b + 2 * math.log(1 - 1e-3), rel=1e-9
    )


@pytest.mark.parametrize("sigma", [0.3, 1.0, 3.0, 7.4])
def test_gaussian_curve_matches_balle_wang(sigma):
    p, q, kw = _gaussian_pair(sigma)
    for eps in (0.0, 0.1, 0.5, 1.0, 3.0, 10.0):
        ref = gaussian_delta(sigma, 1.0, eps)
        pq, qp = privacy_curve(p, q, [eps], **kw)
        assert pq[0] == pytest.approx(ref, rel=1e-9, abs=1e-300)  # measured: ≤ 2e-12 relative, down to δ ~ 1e-198
        assert qp[0] == pytest.approx(ref, rel=1e-9, abs=1e-300)


def test_the_analytic_gaussian_spends_exactly_its_claim():
    eps, delta = 0.5, 1e-5
    sigma = gaussian_sigma(1.0, eps, delta, "analytic")
    p, q, kw = _gaussian_pair(sigma)
    exact = exact_epsilon(p, q, delta, **kw)
    assert exact == pytest.approx(eps, abs=1e-9)  # to the accuracy of σ's root and of the quadrature: ≤ 1e-12
    # the classic σ is larger: it spends less than it claims
    p, q, kw = _gaussian_pair(gaussian_sigma(1.0, eps, delta, "classic"))
    assert exact_epsilon(p, q, delta, **kw) < 0.4


def test_a_planted_bug_is_seen_exactly():
    # noise ÷ 1.5: the Gaussian at a claimed (0.5, 1e-5) spends 0.7785, the Laplace at a claimed 1 spends 1.5
    sigma = gaussian_sigma(1.0, 0.5, 1e-5) / 1.5
    p, q, kw = _gaussian_pair(sigma)
    assert exact_epsilon(p, q, 1e-5, **kw) == pytest.approx(0.7785228697, abs=1e-8)
    kw = dict(window=(-80.0, 80.0), breakpoints=(0.0, 1.0))
    assert exact_epsilon(_laplace(1.0, 1 / 1.5), _laplace(0.0, 1 / 1.5), 0.0, **kw) == pytest.approx(1.5, rel=1e-9)


def test_smallest_epsilon_edge_cases():
    assert smallest_epsilon(lambda e: 0.0, 0.0) == 0.0  # no loss at all
    assert smallest_epsilon(lambda e: 0.5, 1e-5) == math.inf  # never reaches δ: not (ε, δ)-DP for any ε
    assert smallest_epsilon(lambda e: math.exp(-e), 0.01) == pytest.approx(math.log(100), rel=1e-10)


# ---- discrete outputs --------------------------------------------------------------------------------------------


def _discrete_gaussian_pair(sigma, sens, scale=None):
    """log-pmfs of sens + Z and Z, Z the discrete Gaussian P(k) ∝ exp(−k²/(2 scale²)) (scale = σ unless given)."""
    s = scale or sigma
    k = np.arange(-60 * sigma, sens + 60 * sigma + 1).astype(float)
    log_z = math.log(math.fsum(np.exp(-(k**2) / (2.0 * s**2))))
    return -((k - sens) ** 2) / (2.0 * s**2) - log_z, -(k**2) / (2.0 * s**2) - log_z


def test_discrete_gaussian_on_the_integers_against_the_continuous():
    # σ = 1024 grid steps, sensitivity 300 steps, both laws summed exactly over ±60σ (the normaliser is σ√(2π) to
    # 1e-15, by Poisson summation). The ratio discrete δ / continuous δ − 1 oscillates with the lattice's phase at the
    # crossing L = ε, which moves one step when ε moves by Δ/σ². Measured: +1.53e-7 at ε = 1 (δ = 3.9e-5); over one
    # period near ε = 1 it spans [−1.11e-6, +5.7e-7], near ε = 0.5 (δ = 6.7e-3) [−4.1e-7, +2.1e-7]; the envelope
    # grows as δ shrinks (near ε = 2, δ = 5e-13: [−3.8e-6, +2.0e-6]).
    sigma, sens = 1024, 300
    log_p, log_q = _discrete_gaussian_pair(sigma, sens)
    assert hockey_stick_sum(log_q, log_p, 0.7) == pytest.approx(hockey_stick_sum(log_p, log_q, 0.7), rel=1e-12)
    assert 1.0e-7 < hockey_stick_sum(log_p, log_q, 1.0) / gaussian_delta(sigma, sens, 1.0) - 1 < 2.0e-7
    period = sens / sigma**2
    for e0, (lo, hi) in ((0.5, (-4.5e-7, 2.5e-7)), (1.0, (-1.2e-6, 6.2e-7))):
        eps = e0 + np.linspace(0, period, 25)
        rel = [hockey_stick_sum(log_p, log_q, e) / gaussian_delta(sigma, sens, e) - 1 for e in eps]
        assert lo < min(rel) < 0.6 * lo and 0.6 * hi < max(rel) < hi
        # the samplers raise every σ by a relative 1e-6 (dpcost.dp.samplers.MARGIN): that covers the excess
        log_p2, log_q2 = _discrete_gaussian_pair(sigma, sens, sigma * (1 + 1e-6))
        assert all(hockey_stick_sum(log_p2, log_q2, e) <= gaussian_delta(sigma, sens, e) for e in eps)
    # in ε at a given δ the two differ by 7e-8
    eps_c = smallest_epsilon(lambda e: gaussian_delta(sigma, sens, e), 1e-5)
    assert exact_epsilon_sum(log_p, log_q, 1e-5) == pytest.approx(eps_c, abs=1e-7)


def test_a_lattice_sum_is_exact_for_a_two_point_law():
    # randomised response on {0, 1}: p = (e^ε₀, 1)/(1 + e^ε₀), q reversed; δ(ε) = (e^ε₀ − e^ε)/(1 + e^ε₀) for ε < ε₀
    e0 = 1.3
    log_p = np.array([e0, 0.0]) - math.log1p(math.exp(e0))
    log_q = log_p[::-1]
    assert hockey_stick_sum(log_p, log_q, 0.4) == pytest.approx((math.exp(e0) - math.exp(0.4)) / (1 + math.exp(e0)))
    assert exact_epsilon_sum(log_p, log_q, 0.0) == pytest.approx(e0, rel=1e-9)


# ---- an estimator whose output law is known: noisy truncated OLS in d = 1 -----------------------------------------

TOLS = dict(R=1.0, C=0.005, c_x=1.0, kappa=1.0)
N = 200
X = np.zeros((N, 1))
X[-1] = 1.0
Y, Y2 = np.zeros(N), np.zeros(N)
Y[-1], Y2[-1] = 1.0, -1.0  # the worst pair of tests/unit/dp/test_audit.py: the fit moves by 99 % of the sensitivity


def _law(y, privacy, factor=1.0):
    """The estimator's output law: the clipped, truncated ridge fit plus N(0, sd²), sd the scale its plan records."""
    center = truncated_ols.truncated_ridge_fit(X, y, **TOLS)[0]
    sd = truncated_ols.noisy_truncated_ols_plan(privacy, N, 1, **TOLS, noise="derived").releases[0].noise_scale
    return center, sd * factor


def test_truncated_ols_output_has_the_law_its_plan_states():
    privacy = Privacy(0.9, 0.03, "tight")
    center, sd = _law(Y, privacy)
    assert center == pytest.approx(1 / 201, rel=1e-12)
    rng = np.random.default_rng(0)
    out = np.array([truncated_ols.noisy_truncated_ols(X, Y, privacy=privacy, rng=rng, **TOLS)[0] for _ in range(2000)])
    assert stats.kstest(out, stats.norm(center, sd).cdf).pvalue > 1e-3
    assert stats.kstest(out, stats.norm(center, sd / 1.5).cdf).pvalue < 1e-6  # the check would see ÷ 1.5


@pytest.mark.parametrize("calibration", ["paper", "tight"])
@pytest.mark.parametrize("eps, delta", [(0.9, 0.03), (0.5, 1e-5)])
def test_truncated_ols_spends_at_most_its_claim_and_a_planted_bug_is_caught(calibration, eps, delta):
    privacy = Privacy(eps, delta, calibration)
    (c1, sd), (c2, _) = _law(Y, privacy), _law(Y2, privacy)
    kw = dict(window=(min(c1, c2) - 40 * sd, max(c1, c2) + 40 * sd))
    exact = exact_epsilon(_gauss(c1, sd), _gauss(c2, sd), delta, **kw)
    assert exact <= eps
    if calibration == "tight":  # the pair's shift is 99 % of the sensitivity: the claim is nearly spent
        assert exact > 0.98 * eps
        (c1, sd), (c2, _) = _law(Y, privacy, 1 / 1.5), _law(Y2, privacy, 1 / 1.5)
        assert exact_epsilon(_gauss(c1, sd), _gauss(c2, sd), delta, **kw) > 1.4 * eps
