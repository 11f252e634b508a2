import numpy as np
import pandas as pd
import pytest

from dpcost.analysis.designs import RegressionDesign, TwoGroupMeanDesign
from dpcost.analysis.engine import run_grid
from dpcost.dp.privacy import Privacy
from dpcost.errors import ConfigError, DataError
from dpcost.estimators.registry import METHODS, get


def _data(n=3000, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.5, 0.5, size=(n, d))
    beta = np.array([0.5, -0.3, 0.2])
    return X, X @ beta + 0.1 * rng.normal(size=n), beta


GD = dict(T=5, R=2.0, C=2.0, c_x=1.0, eta0=3.0)


def _grid(X, y, beta, *, method, params, epsilon, delta, calibration="paper", on_invalid="refuse", **kw):
    """The old ``run_regression_grid`` call, in the new API: the table alone."""
    spec = get(method, "regression")
    table, _ = run_grid(
        RegressionDesign(X, y, beta),
        spec,
        tuning=spec.resolve_tuning(params),
        params={},
        privacy=Privacy(epsilon, delta, calibration, on_invalid),
        dataset="housing",
        **kw,
    )
    return table


def test_grid_rows_do_not_depend_on_grid_order_or_other_m():
    X, y, beta = _data()
    kw = dict(method="noisy_gd", params=GD, reps=4, seed=3, epsilon=0.5, delta="10/n^1.1")
    a = _grid(X, y, beta, m_grid=[200, 1000], **kw)
    b = _grid(X, y, beta, m_grid=[1000, 50, 200], **kw)
    merged = b[b.m != 50].sort_values(["m", "rep"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(a.sort_values(["m", "rep"]).reset_index(drop=True), merged)
    assert set(a.columns) >= {"method", "m", "rep", "epsilon", "delta", "error"}
    assert np.allclose(a.delta, 10 / a.m**1.1)


def test_nonprivate_rows_carry_no_privacy_parameters():
    X, y, beta = _data()
    out = _grid(X, y, beta, method="ols", params={}, m_grid=[100], reps=3, seed=0, epsilon=0.5, delta=1e-5)
    assert out.epsilon.isna().all() and out.delta.isna().all()


def test_grid_refuses_bad_input():
    X, y, beta = _data()
    kw = dict(params={}, m_grid=[100], seed=0, epsilon=0.5, delta=1e-5)
    with pytest.raises(ConfigError, match="unknown method 'magic'"):
        _grid(X, y, beta, method="magic", reps=2, **kw)
    with pytest.raises(ConfigError, match="reps"):
        _grid(X, y, beta, method="ols", reps=0, **kw)
    y2 = y.copy()
    y2[5] = np.inf
    with pytest.raises(DataError):
        _grid(X, y2, beta, method="ols", reps=2, **kw)
    with pytest.raises(ConfigError, match="between 2 and the 3000 rows"):
        _grid(X, y, beta, method="ols", reps=2, **{**kw, "m_grid": [3001]})


def test_plans_are_one_per_m_of_a_private_method():
    X, y, beta = _data()
    spec = METHODS["noisy_gd"]
    table, plans = run_grid(
        RegressionDesign(X, y, beta),
        spec,
        tuning=spec.resolve_tuning(GD),
        params={},
        m_grid=[1000, 200],
        reps=2,
        seed=0,
        privacy=Privacy(0.5, "10/n^1.1"),
        dataset="housing",
    )
    assert [p["m"] for p in plans] == [1000, 200]
    assert [p["delta"] for p in plans] == pytest.approx([10 / 1000**1.1, 10 / 200**1.1])
    assert all(p["epsilon"] == 0.5 and p["proven"] and p["warnings"] == [] for p in plans)
    _, none = run_grid(
        RegressionDesign(X, y, beta),
        METHODS["ols"],
        tuning={},
        params={},
        m_grid=[100],
        reps=1,
        seed=0,
        privacy=Privacy(0.5, 1e-5),
        dataset="housing",
    )
    assert none == []


def test_mean_grid_scores_error_and_recovered_support():
    rng = np.random.default_rng(0)
    d, s = 30, 3
    mu = np.zeros(d)
    mu[:s] = 1.0
    A = rng.integers(0, 3, size=(200, d)).astype(np.int8)
    B = rng.integers(0, 3, size=(150, d)).astype(np.int8)
    design = TwoGroupMeanDesign(A, B, mu, s)
    spec = METHODS["top_s_mean"]
    table, plans = run_grid(
        design,
        spec,
        tuning={},
        params={"s": s},
        m_grid=[50, 150],
        reps=3,
        seed=0,
        privacy=Privacy(1.0, 1e-5),
        dataset="snp",
    )
    assert list(table.columns) == ["method", "m", "rep", "epsilon", "delta", "error", "support_recovered",
                                   "abstained"]  # fmt: skip
    assert len(table) == 6 and plans == [] and not table.abstained.any()
    assert table.support_recovered.between(0, s).all()
    with pytest.raises(ConfigError, match="between 2 and the 150 rows"):
        run_grid(
            design,
            spec,
            tuning={},
            params={"s": s},
            m_grid=[151],
            reps=1,
            seed=0,
            privacy=Privacy(1.0, 1e-5),
            dataset="snp",
        )


def test_prediction_is_scored_on_the_rows_outside_the_subsample():
    from dpcost.analysis.designs import HeldOutRegressionDesign
    from dpcost.analysis.streams import subsample_indices

    X, y, beta = _data(n=400)
    table = _grid(X, y, beta, method="ols", params={}, epsilon=1.0, delta=1e-5, m_grid=[50, 400], reps=2, seed=3)
    assert list(table.columns) == ["method", "m", "rep", "epsilon", "delta", "error", "r2", "rmse", "abstained"]
    row = table[(table.m == 50) & (table.rep == 1)].iloc[0]
    idx = subsample_indices(400, 50, seed=3, dataset="housing", rep=1)
    out = np.setdiff1d(np.arange(400), idx)
    fit = np.linalg.lstsq(X[idx], y[idx], rcond=None)[0]
    resid = y[out] - X[out] @ fit
    assert row.rmse == pytest.approx(np.sqrt(np.mean(resid**2)))
    assert row.r2 == pytest.approx(1 - resid @ resid / np.sum((y[out] - y[out].mean()) ** 2))
    assert table[table.m == 400][["r2", "rmse"]].isna().all().all()  # m = n: no row left out
    held = HeldOutRegressionDesign(X[:300], y[:300], beta, X_test=X[300:], y_test=y[300:])
    r2, rmse = held.prediction(beta, np.arange(10))  # the held-out rows, whatever the subsample
    assert rmse == pytest.approx(np.sqrt(np.mean((y[300:] - X[300:] @ beta) ** 2))) and 0.5 < r2 < 1


SUMS_TUNING = {  # bounds that bind on _data's rows (‖x‖ up to ~0.87, |y| up to ~0.6) so the clip is exercised
    "ssp": dict(B_X=0.5, B_Y=0.2),
    "adassp": dict(B_X=0.5, B_Y=0.2),
    "joint_ssp": dict(B_X=0.5, B_Y=0.2, ratio=2.0),
    "noisy_gd": dict(T=4, R=0.2, C=2.0, c_x=0.5, eta0=3.0),
}


def _draws(design, spec, tuning, calibration):
    from dpcost.analysis.engine import releases

    kw = dict(m_grid=[20, 700], reps=6, seed=5, dataset="housing")
    privacy = Privacy(0.7, "1/n^1.1", calibration, "warn")
    return list(releases(design, spec, tuning=spec.resolve_tuning(tuning), params={}, privacy=privacy, **kw))


@pytest.mark.parametrize("calibration", ["tight", "paper"])
@pytest.mark.parametrize("clip_whole", [True, False])
def test_sums_methods_release_through_the_clipped_design_bit_for_bit(monkeypatch, calibration, clip_whole):
    """Every method with ``sums`` (the registry's list, not a copy of it) gives, through the engine's sums path, the
    estimates of the estimator called on each subsample, bit for bit — with the design clipped once and with each
    subsample clipped as drawn (a design past CLIP_WHOLE_BYTES)."""
    import dataclasses

    from dpcost.estimators import sums

    assert {k for k, m in METHODS.items() if m.sums is not None} == set(SUMS_TUNING)
    if not clip_whole:
        monkeypatch.setattr(sums, "CLIP_WHOLE_BYTES", 0)
    X, y, beta = _data()
    design = RegressionDesign(X, y, beta)
    for name, tuning in SUMS_TUNING.items():
        spec = METHODS[name]
        fast = _draws(design, spec, tuning, calibration)
        slow = _draws(design, dataclasses.replace(spec, sums=None), tuning, calibration)
        assert len(fast) == len(slow) == 12
        for a, b in zip(fast, slow, strict=True):
            assert (a.m, a.rep) == (b.m, b.rep) and np.array_equal(a.rows, b.rows)
            np.testing.assert_array_equal(a.estimate, b.estimate, err_msg=f"{name} m={a.m} rep={a.rep}")
