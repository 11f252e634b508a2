"""Private quantiles (dpcost.dp.quantiles): accuracy against the empirical quantile within a bound derived from the
noise and the grid, an exact audit of the released law on worst-case neighbouring pairs (closed form for two
candidates, checked against the real function's draws), planted bugs the audit catches, and bad input refused."""

import math

import numpy as np
import pytest
from scipy import stats

from dpcost.dp.audit import exact_epsilon_sum
from dpcost.dp.privacy import Privacy
from dpcost.dp.quantiles import (
    geometric_grid,
    private_quantile,
    private_quantile_plan,
    private_quantiles,
    private_quantiles_plan,
    quantile_utility,
    truncation_level,
    truncation_level_plan,
    uniform_grid,
)
from dpcost.dp.samplers import T
from dpcost.errors import ConfigError, DataError, PrivacyError


def rank_error(x, c, q):
    """|N(c) − q·N| for the entries of x: how far c is from the q-quantile in entries."""
    return abs(np.count_nonzero(np.ravel(x) <= c) - q * np.size(x))


# ---- accuracy ---------------------------------------------------------------------------------------------------


def _rank_bound(x, grid, q, b, beta):
    """With probability ≥ 1 − β: the best candidate's rank error + 2b log(m/β) + one grid step of rounding, since
    every |Z_j| ≤ b log(m/β) with probability ≥ 1 − β/m (the discrete Laplace's tail is at most the continuous one's,
    P(|Z| ≥ s) ≤ e^{−s/b}·2/(1 + e^{-g/b}))."""
    best = min(rank_error(x, c, q) for c in grid)
    return best + 2 * b * math.log(grid.size / beta) + b / T


@pytest.mark.parametrize("q", [0.025, 0.5, 0.975])
def test_at_large_epsilon_the_release_is_the_empirical_quantile_to_the_grid_resolution(q):
    rng = np.random.default_rng(1)
    x = rng.normal(3.0, 1.0, 20_000)
    grid = geometric_grid()  # ±1e-3 … ±1e6, 2 % apart
    privacy = Privacy(20.0, 1e-6)
    b = private_quantile_plan(privacy, x.size, m=grid.size).releases[0].noise_scale
    c = private_quantile(x, q=q, candidates=grid, privacy=privacy, rng=rng)
    r = _rank_bound(x, grid, q, b, beta=1e-3)  # b = 0.1: ≈ 3 entries beyond the best candidate
    assert rank_error(x, c, q) <= r
    # in values: between the empirical quantiles r entries either side, widened by one grid step (2 %)
    lo, hi = np.quantile(x, [q - r / x.size, q + r / x.size])
    assert lo / 1.02 <= c <= hi * 1.02
    assert c == pytest.approx(np.quantile(x, q), rel=0.05)


def test_truncation_level_at_the_papers_budget_is_the_upper_quantile_within_its_noise():
    """004 §5.1 at ε = 0.5 (ε/2 a quantile, b = 8), n = 20,000 draws of N(3, 1): R = max(|q̂_lo|, |q̂_hi|) is q̂_hi,
    within ±r entries of the 97.5 % point, r = best + 2b log(m/β) ≈ 233 (1.2 % of the sample) at β = 10⁻³."""
    rng = np.random.default_rng(2)
    x = rng.normal(3.0, 1.0, 20_000)
    grid = geometric_grid()
    privacy = Privacy(0.5, "10/n^1.1")
    plan = truncation_level_plan(privacy, x.size, m=grid.size)
    b = plan.releases[1].noise_scale
    assert b == pytest.approx(2 / 0.25, rel=1e-5)
    R = truncation_level(x, privacy=privacy, rng=rng)
    r = _rank_bound(x, grid, 0.975, b, beta=1e-3)
    lo, hi = np.quantile(x, [0.975 - r / x.size, 0.975 + r / x.size])
    assert lo / 1.02 <= R <= hi * 1.02
    # the same seed gives the same release
    assert truncation_level(x, privacy=privacy, rng=np.random.default_rng(5)) == truncation_level(
        x, privacy=privacy, rng=np.random.default_rng(5)
    )


def test_two_quantiles_on_a_bounded_grid_and_a_matrix_pools_its_rows_at_sensitivity_k():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1.0, 1.0, size=(5_000, 4))  # 20,000 entries, 4 per record
    grid = uniform_grid(R_max=2.0, m=401)  # 0.01 apart
    privacy = Privacy(40.0, 1e-6)
    plan = private_quantiles_plan(privacy, 5_000, m=grid.size, k=4, split=0.25)
    assert [r.epsilon for r in plan.releases] == [10.0, 30.0] and plan.delta == 0.0
    assert [r.sensitivity for r in plan.releases] == [4.0, 4.0]
    b_lo = plan.releases[0].noise_scale
    assert b_lo == pytest.approx(2 * 4 / 10.0, rel=1e-5)
    lo, hi = private_quantiles(X, candidates=grid, privacy=privacy, rng=rng, split=0.25)
    for c, q, rel in ((lo, 0.025, plan.releases[0]), (hi, 0.975, plan.releases[1])):
        assert rank_error(X, c, q) <= _rank_bound(X, grid, q, rel.noise_scale, beta=1e-3)
    assert lo == pytest.approx(-0.95, abs=0.03) and hi == pytest.approx(0.95, abs=0.03)


# ---- exact audit: two candidates, the released law in closed form -----------------------------------------------


def log_tail(L: int, t: float) -> float:
    """log P(W ≥ L) for W = Z₁ − Z₀, Z i.i.d. discrete Laplace P(z) ∝ r^{|z|}, r = e^{−1/t}, L an integer.

    P(W = w) = C² r^{|w|} (A + |w|) with C = (1 − r)/(1 + r), A = (1 + r²)/(1 − r²) (sum the product of the two
    pmfs over z), hence for L ≥ 0 P(W ≥ L) = C² r^L [(A + L)/(1 − r) + r/(1 − r)²]; for L ≤ 0 by symmetry
    1 − P(W ≥ 1 − L). Evaluated in log space, so tails of 10⁻³⁰⁰ keep their relative accuracy."""
    L = int(L)
    if L <= 0:
        return math.log1p(-math.exp(log_tail(1 - L, t)))
    one_minus_r = -math.expm1(-1 / t)
    r = 1 - one_minus_r
    A = (1 + r * r) / -math.expm1(-2 / t)
    log_c2 = 2 * (math.log(one_minus_r) - math.log1p(r))
    return log_c2 - L / t + math.log((A + L) / one_minus_r + r / one_minus_r**2)


def test_difference_of_discrete_laplaces_closed_form_matches_direct_summation():
    t = 2.5
    z = np.arange(-400, 401)
    p = np.exp(-np.abs(z) / t)
    p /= p.sum()
    w_pmf = np.convolve(p, p)  # W = Z₁ − Z₀ on −800 … 800 (symmetric)
    w = np.arange(-800, 801)
    for L in (-7, -1, 0, 1, 2, 9, 40):
        assert math.exp(log_tail(L, t)) == pytest.approx(w_pmf[w >= L].sum(), rel=1e-12)


def released_log_law(u, b):
    """log P(out = 0), log P(out = 1) of the two-candidate release: the scores are rounded to the noise grid,
    a_j = rint(u_j/g), g = b/T, and candidate 0 wins iff a₀ + Z₀ ≥ a₁ + Z₁ (ties to the lowest index), i.e. iff
    W = Z₁ − Z₀ ≤ K = a₀ − a₁, Z in steps of the grid (scale T). Both as tails (P(W ≤ K) = P(W ≥ −K) by symmetry),
    so the rare output keeps its relative accuracy."""
    g = b / T
    a0, a1 = np.rint(np.asarray(u, dtype=float) / g)
    K = int(a0 - a1)
    return np.array([log_tail(-K, T), log_tail(K + 1, T)])


def worst_pair(n0, n=200, k=1):
    """A neighbouring pair for q = 1/2 and candidates (0, 1): D has n0 records below 0, 100 − n0 in (0, 1), the rest
    above 1 (so N(1) = q·N exactly); D′ moves one record from above 1 to below 0. Between them N(0) and N(1) both
    rise by k, so u(0) rises by k and u(1) falls by k: the scores move in opposite directions, the non-monotone
    worst case of report-noisy-max. With k > 1 every record holds k equal entries."""
    D = np.concatenate([np.full(n0, -1.0), np.full(n // 2 - n0, 0.5), np.full(n - n // 2, 2.0)])
    D2 = D.copy()
    D2[-1] = -1.0
    if k > 1:
        D, D2 = np.repeat(D[:, None], k, axis=1), np.repeat(D2[:, None], k, axis=1)
    return D, D2


CANDIDATES = np.array([0.0, 1.0])


def pair_epsilon(n0, b, k=1):
    """The exact ε the release spends on the pair: max over the two outputs of |log P_D − log P_D′|, through the
    package's hockey-stick tool at δ = 0 (and checked against the direct maximum)."""
    D, D2 = worst_pair(n0, k=k)
    lp = released_log_law(quantile_utility(D, CANDIDATES, 0.5), b)
    lq = released_log_law(quantile_utility(D2, CANDIDATES, 0.5), b)
    eps = exact_epsilon_sum(lp, lq, 0.0)
    assert eps == pytest.approx(np.max(np.abs(lp - lq)), abs=1e-9)
    return eps


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_exact_audit_loss_stays_below_epsilon_and_approaches_it(epsilon):
    """The scale the plan gives (2Δ/ε raised by the grid's rounding) on pairs of score gaps 2 … 100: the exact loss
    is ≤ ε on every pair and reaches 0.96–0.99ε at the largest gap (25–100 noise scales) — the factor 2 is needed,
    the bound is tight."""
    b = private_quantile_plan(Privacy(epsilon, 1e-6), 200, m=2).releases[0].noise_scale
    losses = [pair_epsilon(n0, b) for n0 in (0, 10, 50, 90, 98)]
    assert max(losses) <= epsilon
    assert losses[0] >= 0.95 * epsilon  # gap 100: the tail where report-noisy-max spends nearly all of ε
    assert losses == sorted(losses, reverse=True)  # the loss grows with the gap


@pytest.mark.parametrize("k", [1, 3])
def test_exact_law_is_the_law_of_the_real_function(k):
    """4,000 releases of the real function on D (ε = 1, gap 4k = two noise scales): the count of candidate 0 agrees
    with the closed-form P(out = 0) ≈ 0.135 (two-sided binomial test, p > 10⁻⁴), so the audit describes the
    implementation — with k = 3 entries a record only if the function pays Δ = 3 (at Δ = 1, P(out = 0) ≈ 10⁻³)."""
    privacy = Privacy(1.0, 1e-6)
    D, _ = worst_pair(96, k=k)
    b = private_quantile_plan(privacy, len(D), m=2, k=k).releases[0].noise_scale
    p0 = math.exp(released_log_law(quantile_utility(D, CANDIDATES, 0.5), b)[0])
    assert 0.1 < p0 < 0.2
    rng = np.random.default_rng(4 + k)
    N = 4_000
    wins = sum(private_quantile(D, q=0.5, candidates=CANDIDATES, privacy=privacy, rng=rng) == 0.0 for _ in range(N))
    assert stats.binomtest(wins, N, p0).pvalue > 1e-4


# ---- planted bugs the audit catches -------------------------------------------------------------------------------


@pytest.mark.parametrize("epsilon", [0.5, 1.0])
def test_planted_bug_halved_noise_is_caught(epsilon):
    """Laplace(Δ/ε) — the monotone-utility calibration, wrongly applied — spends more than ε on every pair: 1.19ε
    (ε = 0.5) and 1.31ε (ε = 1) already at gap 2, 1.96–1.98ε at gap 100."""
    b = private_quantile_plan(Privacy(epsilon, 1e-6), 200, m=2).releases[0].noise_scale
    assert pair_epsilon(98, b / 2) > 1.15 * epsilon
    assert pair_epsilon(0, b / 2) > 1.9 * epsilon


def test_planted_bug_misstated_sensitivity_is_caught():
    """Records of k = 3 entries: the function reads k from the shape and pays Δ = 3 (loss ≤ ε); flattening the
    matrix so that the plan sees k = 1 (a record's 3 entries taken as 3 records) spends far more than ε."""
    epsilon = 1.0
    b_right = private_quantile_plan(Privacy(epsilon, 1e-6), 200, m=2, k=3).releases[0].noise_scale
    b_wrong = private_quantile_plan(Privacy(epsilon, 1e-6), 600, m=2, k=1).releases[0].noise_scale
    assert pair_epsilon(0, b_right, k=3) <= epsilon
    assert pair_epsilon(0, b_wrong, k=3) > 2.5 * epsilon


# ---- plans and bad input ------------------------------------------------------------------------------------------


def test_plan_states_a_pure_release_from_public_quantities():
    plan = private_quantile_plan(Privacy(0.5, 1e-5, neighbours="add_remove"), 1_000, m=2_096)
    (rel,) = plan.releases
    assert plan.delta == 0.0 and rel.delta == 0.0 and rel.epsilon == 0.5 and rel.sensitivity == 1.0
    assert plan.neighbours == "add or remove one record"
    assert 4.0 < rel.noise_scale < 4.0 * (1 + 1e-5)  # 2Δ/ε, raised by one grid step of rounding and the margin
    unsafe = private_quantile_plan(Privacy(0.5, 1e-6, sampler="float-unsafe"), 1_000, m=10)
    assert unsafe.releases[0].noise_scale == 4.0 and "NOT private" in unsafe.releases[0].sampler
    assert geometric_grid().size == 2_096 and np.all(np.diff(geometric_grid()) > 0)
    assert np.array_equal(uniform_grid(R_max=1.0, m=3), [-1.0, 0.0, 1.0])


def test_bad_input_is_refused():
    x, grid, rng, privacy = np.arange(10.0), geometric_grid(), np.random.default_rng(0), Privacy(1.0, 1e-6)

    def call(**kw):
        args = dict(q=0.5, candidates=grid, privacy=privacy, rng=rng) | kw
        return private_quantile(args.pop("x", x), **args)

    for bad in (np.array([1.0, np.nan]), np.array([1.0, np.inf]), np.zeros((2, 2, 2)), np.array([])):
        with pytest.raises(DataError):
            call(x=bad)
    for q in (0.0, 1.0, -0.1, float("nan"), True, "0.5"):
        with pytest.raises(ConfigError, match="q must"):
            call(q=q)
    for cands in ([1.0], [2.0, 1.0], [0.0, 0.0, 1.0], [0.0, np.nan], np.ones((2, 2))):
        with pytest.raises(ConfigError, match="candidates"):
            call(candidates=cands)
    with pytest.raises(PrivacyError, match="Privacy"):
        call(privacy=0.5)
    with pytest.raises(PrivacyError, match="epsilon"):
        call(privacy=Privacy(0.0, 1e-6))
    with pytest.raises(ConfigError, match="rng"):
        call(rng=np.random.RandomState(0))
    with pytest.raises(ConfigError, match="q_lo must be below"):
        private_quantiles(x, candidates=grid, privacy=privacy, rng=rng, q_lo=0.9, q_hi=0.1)
    for split in (0.0, 1.0, 1.5):
        with pytest.raises(ConfigError, match="split"):
            truncation_level(x, privacy=privacy, rng=rng, split=split)
    with pytest.raises(ConfigError, match="ratio"):
        geometric_grid(ratio=1.0)
    with pytest.raises(ConfigError, match="smallest"):
        geometric_grid(smallest=0.0)
    with pytest.raises(ConfigError, match="largest must exceed"):
        geometric_grid(smallest=2.0, largest=1.0)
    with pytest.raises(ConfigError, match="more than"):
        geometric_grid(ratio=1.0 + 1e-9)
    with pytest.raises(ConfigError, match="m must"):
        uniform_grid(R_max=1.0, m=1)
    with pytest.raises(ConfigError, match="m must"):
        private_quantile_plan(privacy, 10, m=1)
    with pytest.raises(ConfigError, match="n must"):
        private_quantile_plan(privacy, 0, m=5)
