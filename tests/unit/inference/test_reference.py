"""The non-private OLS reference against its finite-population target (dpcost.inference.reference): with the
finite-population correction it covers the full-data OLS at m close to n; without it the interval is √(1/(1 − m/n))
times too wide and over-covers; at m = n it is the point target."""

import numpy as np
import pytest

from dpcost.errors import DataError
from dpcost.inference import ols_interval

from intervals_support import coverage_error, gaussian_design, tolerance

N, M, REPS = 2000, 1800, 600  # 1 − m/n = 0.1: without the FPC the variance is 10× too large


def make_population(heteroscedastic: bool):
    """A fixed finite population of the Gaussian design; heteroscedastic: an extra error of sd 0.5|x_1|, so that
    the classical variance is wrong for β_1 and HC3's sandwich is right."""
    rng = np.random.default_rng(38)
    X, y = gaussian_design(rng, N)
    if heteroscedastic:
        y = y + 0.5 * np.abs(X[:, 0]) * rng.standard_normal(N)
    return X, y, np.linalg.lstsq(X, y, rcond=None)[0]


@pytest.fixture(scope="module")
def population():
    return make_population(False)


@pytest.fixture(scope="module")
def subsample_covers():
    """(population, covariance, fpc) → (REPS, d) indicators of the population's full-data OLS being covered, over
    simple random samples of M of its N rows."""
    out = {}
    for kind in ("homoscedastic", "heteroscedastic"):
        X, y, target = make_population(kind == "heteroscedastic")
        rng = np.random.default_rng(3801)
        keys = [(kind, c, f) for c in ("classical", "hc3") for f in (True, False)]
        runs = {k: [] for k in keys}
        for _ in range(REPS):
            idx = rng.choice(N, size=M, replace=False)
            for k in keys:
                iv = ols_interval(X[idx], y[idx], covariance=k[1], population=N if k[2] else None)
                runs[k].append(iv.covers(target))
        out |= {k: np.array(v) for k, v in runs.items()}
    return out


@pytest.mark.slow
@pytest.mark.parametrize(
    "kind, covariance",
    [("homoscedastic", "classical"), ("homoscedastic", "hc3"), ("heteroscedastic", "hc3")],
)
def test_fpc_interval_covers_the_full_data_ols(subsample_covers, kind, covariance):
    assert (err := coverage_error(subsample_covers[kind, covariance, True])) is None, err


@pytest.mark.slow
def test_the_check_sees_the_classical_variance_fail_under_heteroscedasticity(subsample_covers):
    """Var(x_1 e) = E[x_1² e²] > E[x_1²]E[e²] when sd(e) grows with |x_1|: the classical interval is too narrow for
    β_1 (measured ≈ 0.88), and the same check refuses it."""
    assert coverage_error(subsample_covers["heteroscedastic", "classical", True]) is not None


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["homoscedastic", "heteroscedastic"])
@pytest.mark.parametrize("covariance", ["classical", "hc3"])
def test_without_fpc_it_over_covers(subsample_covers, kind, covariance):
    """Width × √10 = 3.16: coverage P(|Z| < 1.96·3.16) ≈ 1 — far above the nominal band, which the same check sees."""
    covered = subsample_covers[kind, covariance, False]
    assert coverage_error(covered) is not None
    assert covered.mean() > 0.95 + tolerance(REPS)


def test_at_m_equal_n_the_interval_is_the_target(population):
    X, y, target = population
    for covariance in ("classical", "hc3"):
        iv = ols_interval(X, y, covariance=covariance, population=N)
        np.testing.assert_array_equal(iv.lower, iv.upper)
        np.testing.assert_allclose(iv.centre, target, rtol=1e-12, atol=1e-14)


def test_classical_matches_the_textbook_formula(population):
    """σ̂²(X'X)⁻¹ with t(m − d) quantiles, written out once more."""
    from scipy import stats

    X, y, _ = population
    X, y = X[:300], y[:300]
    b = np.linalg.solve(X.T @ X, X.T @ y)
    e = y - X @ b
    se = np.sqrt(np.diag(e @ e / (300 - 3) * np.linalg.inv(X.T @ X)))
    iv = ols_interval(X, y, level=0.9)
    np.testing.assert_allclose(iv.upper - iv.centre, stats.t.ppf(0.95, 297) * se, rtol=1e-10)
    assert iv.quantile == "t(297)"


def test_population_smaller_than_the_sample_is_refused(population):
    X, y, _ = population
    with pytest.raises(DataError, match="population"):
        ols_interval(X, y, population=N - 1)


def test_one_fit_gives_each_routes_interval_bit_for_bit():
    """ols_intervals shares one fit among the routes (the reference's three per subsample): what is shared (the fit,
    a covariance asked twice) and what is not (each route's FPC) never leak from one route into another — each
    interval is the one-route call's, to the bit."""
    from dpcost.inference.reference import ols_intervals

    rng = np.random.default_rng(11)
    X = rng.standard_t(3, size=(300, 4))
    y = X @ np.array([1.0, -0.5, 0.2, 0.0]) + rng.standard_t(3, 300) * (1 + np.abs(X[:, 0]))
    routes = [("classical", 1000), ("hc3", 1000), ("hc3", None), ("classical", None), ("hc3", 1000)]
    for (cov, population), iv in zip(routes, ols_intervals(X, y, level=0.9, routes=routes), strict=True):
        one = ols_interval(X, y, level=0.9, covariance=cov, population=population)
        for a, b in ((iv.lower, one.lower), (iv.upper, one.upper), (iv.centre, one.centre)):
            assert a.tobytes() == b.tobytes()
        assert iv.route == cov and iv.details["fpc"] == one.details["fpc"]
