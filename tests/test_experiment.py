import numpy as np
import pandas as pd
import pytest

from dpcost.errors import ConfigError, DataError
from dpcost.experiment import rng_for, run_regression_grid, subsample_indices, summarize


def test_streams_depend_only_on_identity():
    a = rng_for(7, "housing", "noise", "noisy_gd", 200, 3).normal(size=5)
    b = rng_for(7, "housing", "noise", "noisy_gd", 200, 3).normal(size=5)
    assert np.array_equal(a, b)
    others = [
        rng_for(8, "housing", "noise", "noisy_gd", 200, 3),
        rng_for(7, "housing", "noise", "noisy_gd", 200, 4),
        rng_for(7, "housing", "noise", "ols", 200, 3),
        rng_for(7, "snp", "noise", "noisy_gd", 200, 3),
    ]
    for g in others:
        assert not np.array_equal(a, g.normal(size=5))


def test_subsamples_are_distinct_rows_and_shared_by_methods():
    idx = subsample_indices(1000, 100, seed=1, dataset="housing", rep=0)
    assert len(np.unique(idx)) == 100 and idx.min() >= 0 and idx.max() < 1000
    assert np.array_equal(idx, subsample_indices(1000, 100, seed=1, dataset="housing", rep=0))
    with pytest.raises(ConfigError, match="between 2 and"):
        subsample_indices(1000, 1001, seed=1, dataset="housing", rep=0)
    with pytest.raises(ConfigError):
        subsample_indices(1000, 1, seed=1, dataset="housing", rep=0)


def _data(n=3000, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.5, 0.5, size=(n, d))
    beta = np.array([0.5, -0.3, 0.2])
    return X, X @ beta + 0.1 * rng.normal(size=n), beta


GD = dict(T=5, R=2.0, C=2.0, c_x=1.0, eta0=3.0)


def test_grid_rows_do_not_depend_on_grid_order_or_other_m():
    X, y, beta = _data()
    kw = dict(method="noisy_gd", params=GD, reps=4, seed=3, epsilon=0.5, delta="10/n^1.1")
    a = run_regression_grid(X, y, beta, m_grid=[200, 1000], **kw)
    b = run_regression_grid(X, y, beta, m_grid=[1000, 50, 200], **kw)
    merged = b[b.m != 50].sort_values(["m", "rep"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(a.sort_values(["m", "rep"]).reset_index(drop=True), merged)
    assert set(a.columns) >= {"method", "m", "rep", "epsilon", "delta", "error"}
    assert np.allclose(a.delta, 10 / a.m**1.1)


def test_nonprivate_rows_carry_no_privacy_parameters():
    X, y, beta = _data()
    out = run_regression_grid(
        X, y, beta, method="ols", params={}, m_grid=[100], reps=3, seed=0, epsilon=0.5, delta=1e-5
    )
    assert out.epsilon.isna().all() and out.delta.isna().all()


def test_grid_refuses_bad_input():
    X, y, beta = _data()
    kw = dict(params={}, m_grid=[100], seed=0, epsilon=0.5, delta=1e-5)
    with pytest.raises(ConfigError, match="unknown regression method"):
        run_regression_grid(X, y, beta, method="magic", reps=2, **kw)
    with pytest.raises(ConfigError, match="reps"):
        run_regression_grid(X, y, beta, method="ols", reps=0, **kw)
    y2 = y.copy()
    y2[5] = np.inf
    with pytest.raises(DataError):
        run_regression_grid(X, y2, beta, method="ols", reps=2, **kw)


def test_summary_statistics():
    errors = pd.DataFrame(
        {
            "method": ["a"] * 4 + ["b"] * 2,
            "m": [10] * 4 + [20] * 2,
            "rep": [0, 1, 2, 3, 0, 1],
            "error": [1.0, 2.0, 3.0, 4.0, 5.0, 7.0],
        }
    )
    s = summarize(errors).set_index(["method", "m"])
    assert s.loc[("a", 10), "n_reps"] == 4
    assert s.loc[("a", 10), "mean"] == 2.5
    assert s.loc[("a", 10), "se"] == pytest.approx(np.std([1, 2, 3, 4], ddof=1) / 2)
    assert s.loc[("a", 10), "q05"] == pytest.approx(np.quantile([1, 2, 3, 4], 0.05))
    assert s.loc[("b", 20), "median"] == 6.0
    assert list(summarize(errors).columns) == ["method", "m", "n_reps", "mean", "se", "median", "q05", "q95"]
