"""Private selection from private candidates (Liu & Talwar 2019; Papernot & Steinke 2022): the law of K, the
accounting, the calibration and the selection itself."""

import math
from fractions import Fraction

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import RdpAccountant, rdp_privacy_accountant
from scipy import stats

from dpcost.dp import selection as S
from dpcost.dp.accountant import gaussian_epsilon, gaussian_noise_multiplier
from dpcost.errors import PrivacyError

USE_CASES = [(0.5, 10 / 2000**1.1), (1.0, 1e-5)]


def _pmf(k, law):
    """P[K = k] from scipy's own distributions (independent of the module): Papernot & Steinke, Definition 1."""
    if law.mu is not None:
        return stats.poisson(float(law.mu)).pmf(k)
    g = float(law.gamma)
    if law.eta == 0:
        return stats.logser(1 - g).pmf(k)
    return stats.nbinom(law.eta, g).pmf(k) / -math.expm1(law.eta * math.log(g)) * (k >= 1)


# ---- the law of K ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("eta", [0, 1, 2, S.POISSON])
@pytest.mark.parametrize("mean_K", [3, 10])
def test_repetitions_have_the_stated_law(eta, mean_K):
    law = S.repetition_law(mean_K, eta)
    support = np.arange(0 if eta == S.POISSON else 1, 3000)
    p = _pmf(support, law)
    assert p.sum() == pytest.approx(1, abs=1e-12)
    mean = (support * p).sum()
    assert mean == pytest.approx(mean_K, rel=1e-9) and mean <= mean_K * (1 + 1e-12)  # E[K] by scipy's pmf
    sd = math.sqrt((support**2 * p).sum() - mean**2)

    n = 20_000
    K = S.draw_repetitions(mean_K, eta, np.random.default_rng(17), size=n)
    assert K.dtype == np.int64 and K.min() >= support[0]
    # the sample mean within 4 standard errors (fixed seed: deterministic)
    assert abs(K.mean() - mean) < 4 * sd / math.sqrt(n)
    # chi-square over the cells with ≥ 5 expected draws, the rest lumped into one cell
    cell = n * p >= 5
    obs = np.array([np.sum(K == k) for k in support[cell]])
    obs, exp = np.append(obs, n - obs.sum()), n * np.append(p[cell], 1 - p[cell].sum())
    assert stats.chisquare(obs, exp).pvalue > 1e-3


def test_a_single_draw_is_an_int_and_mean_one_is_one_run():
    rng = np.random.default_rng(0)
    assert isinstance(S.draw_repetitions(5, 1, rng), int)
    for eta in (0, 1, 3):
        assert set(S.draw_repetitions(1, eta, rng, size=100)) == {1}


def test_the_drawn_law_is_covered_by_the_accounted_one():
    # Theorem 2's bound falls as γ rises and grows with E[K]: the sampler's γ must be ≥ the accountant's (which
    # keeps the small end of its bisection) and its E[K] ≤ the mean given to the accountant
    for eta in (0, 1, 2, 5):
        for mean_K in (1.5, 3, 3.7, 10, 123.4):
            law = S.repetition_law(mean_K, eta)
            assert isinstance(law.gamma, Fraction) and law.gamma.denominator <= 2**62
            assert law.mean <= mean_K and law.mean == pytest.approx(mean_K, rel=1e-10)
            assert law.gamma >= rdp_privacy_accountant._gamma_truncated_negative_binomial(eta, mean_K)
    assert S.repetition_law(10, 1).gamma == Fraction(0.1)  # geometric: γ = 1/E[K], as the float the accountant uses
    assert S.repetition_law(3.7, S.POISSON).mu == Fraction(3.7)


class _IntegersOnly(np.random.Generator):
    """A generator that refuses every draw except uniform integers."""

    def __getattribute__(self, name):
        if name in {"random", "uniform", "geometric", "poisson", "logseries", "negative_binomial", "exponential"}:
            raise AssertionError(f"the sampler used {name}()")
        return super().__getattribute__(name)


def test_k_is_drawn_from_uniform_integers_only():
    rng = _IntegersOnly(np.random.PCG64(3))
    for eta in (0, 1, 2, S.POISSON):
        assert S.draw_repetitions(4.5, eta, rng, size=200).mean() > 1


# ---- the accounting ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("eta", [0, 1, S.POISSON])
def test_accounting_is_monotone(eta):
    delta = 1e-5
    by_mu = [S.selection_epsilon(mu, 5, eta, delta) for mu in (0.02, 0.05, 0.1, 0.2, 0.5, 1.0)]
    assert np.all(np.diff(by_mu) > 0)
    by_mean = [S.selection_epsilon(0.1, m, eta, delta) for m in (1, 2, 3, 5, 10, 30)]
    assert np.all(np.diff(by_mean) > 0)


@pytest.mark.parametrize("mu", [0.05, 0.2, 1.0])
@pytest.mark.parametrize("eta", [0, 1, S.POISSON])
def test_selection_is_never_cheaper_than_one_run(mu, eta):
    for mean_K in (1, 3, 10):
        assert S.selection_epsilon(mu, mean_K, eta, 1e-5) >= gaussian_epsilon(mu, 1e-5)


def _closed_form_epsilon(mu, mean_K, eta, delta):
    """Theorem 2 for a μ-GDP run, ε(λ) = λμ²/2, with λ̂ optimised in closed form over [1, ∞):
    min_λ̂ (1+η)[(λ̂ − 1)μ²/2 + log(1/γ)/λ̂] = (1+η)(μ√(2 log(1/γ)) − μ²/2) at λ̂ = √(2 log(1/γ))/μ ≥ 1;
    then the RDP→DP conversion of Canonne, Kamath & Steinke (2020, Prop. 12) on a fine grid of λ."""
    L = -math.log(float(S.repetition_law(mean_K, eta).gamma))
    assert math.sqrt(2 * L) / mu >= 1
    c = (1 + eta) * (mu * math.sqrt(2 * L) - mu**2 / 2)
    lam = np.linspace(1.02, 2000, 400_000)
    rdp = lam * mu**2 / 2 + c + math.log(mean_K) / (lam - 1)
    return float(np.min(rdp + np.log1p(-1 / lam) - np.log(delta * lam) / (lam - 1)))


@pytest.mark.parametrize("eta", [0, 1, 3])
@pytest.mark.parametrize("mu,mean_K", [(0.05, 10), (0.2, 5), (0.5, 3)])
def test_accounting_matches_theorem_2_in_closed_form(eta, mu, mean_K):
    delta = 1e-5
    exact = _closed_form_epsilon(mu, mean_K, eta, delta)
    ours = S.selection_epsilon(mu, mean_K, eta, delta)
    assert exact <= ours <= exact * 1.01  # the accountant optimises λ̂ and λ on a grid: never below, barely above
    # and dp-accounting on its default orders (a subset of ours) gives no less
    acc = RdpAccountant()
    acc.compose(dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(1 / mu), mean_K, eta))
    assert ours <= acc.get_epsilon(delta)


@pytest.mark.parametrize("eta", [0, 1, 2])
def test_dp_accountings_shape_is_the_papers_eta(eta):
    # Corollary 3: ε-DP runs give a ((2 + η)ε)-DP selection (η = 1: Liu & Talwar's 3ε). An off-by-one in the shape
    # convention would show as (1 + η) or (3 + η). Read at order 10⁷, where RDP ≈ pure DP.
    eps0 = 0.5
    acc = RdpAccountant(orders=[1e7])
    acc.compose(dp_event.RepeatAndSelectDpEvent(dp_event.LaplaceDpEvent(1 / eps0), 10, eta))
    assert acc._rdp[0] == pytest.approx((2 + eta) * eps0, abs=1e-3)


@pytest.mark.parametrize("epsilon,delta", USE_CASES)
@pytest.mark.parametrize("eta", [0, 1, S.POISSON])
def test_candidate_mu_meets_the_target_and_is_near_it(epsilon, delta, eta):
    for mean_K in (3, 10) if eta != S.POISSON else (5,):
        mu = S.candidate_mu_for(epsilon, delta, mean_K, eta)
        eps = S.selection_epsilon(mu, mean_K, eta, delta)
        assert 0.99 * epsilon <= eps <= epsilon
        assert S.selection_epsilon(mu * 1.01, mean_K, eta, delta) > epsilon  # and 1 % more μ breaks it
        assert mu < 1 / gaussian_noise_multiplier(1, epsilon, delta)  # tuning costs something


def test_a_planted_mean_K_bug_is_caught():
    # The planted bug: K is drawn with E[K] = 10 but the accounting is told E[K] = 1 (i.e. "one run").
    mu, delta, eta = 0.1, 1e-5, 1
    claimed = S.selection_epsilon(mu, 1, eta, delta)  # the buggy accounting
    correct = S.selection_epsilon(mu, 10, eta, delta)

    def sound(claim: float) -> bool:
        return claim >= correct * (1 - 1e-9)

    assert sound(correct) and not sound(claimed)  # the comparison flags the bug...
    assert claimed < 0.9 * correct  # ...by a wide margin
    # and the draws themselves contradict the mean that was accounted for
    K = S.draw_repetitions(10, eta, np.random.default_rng(5), size=2000)
    assert (K.mean() - 1) / (K.std() / math.sqrt(K.size)) > 20


# ---- the selection -----------------------------------------------------------------------------------------------


def test_select_best_returns_the_best_run_and_its_record():
    scores = [0.3, 0.9, 0.1, 0.5]
    rng = np.random.default_rng(11)
    seen = []
    for _ in range(200):
        sel = S.select_best(lambda j, k: (f"model{j}", scores[j]), 4, 5, 1, rng)
        assert sel.K >= 1 and len(sel.runs) == sel.K and all(0 <= j < 4 for j in sel.runs)
        assert sel.score == max(scores[j] for j in sel.runs) and sel.output == f"model{sel.j}"
        assert sel.runs[sel.best_run] == sel.j and sel.score == scores[sel.j]
        seen.append(sel.K)
    assert abs(np.mean(seen) - 5) < 4 * math.sqrt(20 / 200)  # geometric with mean 5: variance 20


def test_runs_get_their_index_and_ties_go_to_the_earliest():
    calls = []

    def run(j, k):
        calls.append(k)
        return (j, k), 1.0

    sel = S.select_best(run, 3, 10, 1, np.random.default_rng(2))
    assert calls == list(range(sel.K)) and sel.best_run == 0 and sel.output == (sel.runs[0], 0)


def test_poisson_may_run_nothing():
    rng = np.random.default_rng(0)
    empty = [S.select_best(lambda j, k: (j, 1.0), 2, 1, S.POISSON, rng) for _ in range(300)]
    none = [s for s in empty if s.K == 0]
    assert none and all(s.output is None and s.j is None and s.score is None for s in none)  # P[K = 0] = e^-1


def test_bad_inputs_are_refused():
    rng = np.random.default_rng(0)
    with pytest.raises(PrivacyError, match="NaN"):
        S.select_best(lambda j, k: (j, float("nan")), 2, 3, 1, rng)
    for eta in (0.5, -1, float("nan"), True, "1"):
        with pytest.raises(PrivacyError, match="eta must be"):
            S.draw_repetitions(3, eta, rng)
    for mean_K in (0.5, 1e4, float("inf"), float("nan")):
        with pytest.raises(PrivacyError, match="mean_K"):
            S.selection_epsilon(0.1, mean_K, 1, 1e-5)
    for mu in (0, -0.1, float("inf")):
        with pytest.raises(PrivacyError, match="candidate_mu"):
            S.selection_epsilon(mu, 3, 1, 1e-5)
    for delta in (0, 1, -1e-5):
        with pytest.raises(PrivacyError, match="delta"):
            S.selection_epsilon(0.1, 3, 1, delta)
    with pytest.raises(PrivacyError, match="epsilon"):
        S.candidate_mu_for(0, 1e-5, 3, 1)
    with pytest.raises(PrivacyError, match="J"):
        S.select_best(lambda j, k: (j, 0.0), 0, 3, 1, rng)
    with pytest.raises(PrivacyError, match="Generator"):
        S.draw_repetitions(3, 1, np.random.RandomState(0))
