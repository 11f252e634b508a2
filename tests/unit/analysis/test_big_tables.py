"""What keeps a repetition's cost from growing with the table: prediction on a bounded systematic sample, the score
attack's reference fitted on a bounded set, the design read a column at a time — each unchanged on tables below
its bound (housing's numbers do not move)."""

import numpy as np
import pandas as pd
import pytest

from dpcost.analysis import designs
from dpcost.analysis.datasets import read_split_design
from dpcost.analysis.designs import RegressionDesign, r2_rmse, split_candidates

RNG = np.random.default_rng(7)
X = RNG.normal(size=(1000, 3))
Y = X @ np.array([1.0, -2.0, 0.5]) + RNG.normal(size=1000)
BETA = np.array([1.0, -2.0, 0.5])
ROWS = RNG.choice(1000, 300, replace=False)


def _outside(n, rows):
    keep = np.ones(n, dtype=bool)
    keep[rows] = False
    return keep


def test_prediction_below_the_bound_scores_every_outside_row():
    est = BETA + 0.1
    keep = _outside(1000, ROWS)
    assert RegressionDesign(X, Y, BETA).prediction(est, ROWS) == r2_rmse(Y[keep], X[keep] @ est)


def test_prediction_above_the_bound_scores_the_outside_rows_of_every_kth_row(monkeypatch):
    monkeypatch.setattr(designs, "PREDICTION_ROWS", 100)  # 1000 rows: every 10th
    est = BETA + 0.1
    keep = _outside(1000, ROWS)
    sample = np.arange(0, 1000, 10)
    sample = sample[keep[sample]]
    got = RegressionDesign(X, Y, BETA).prediction(est, ROWS)
    assert got == pytest.approx(r2_rmse(Y[sample], X[sample] @ est), rel=1e-12)
    assert got != pytest.approx(r2_rmse(Y[keep], X[keep] @ est), rel=1e-6)  # a sample, not every row


def test_the_reference_is_every_other_row_below_the_bound_and_bounded_above(monkeypatch):
    inside = np.arange(100)
    members, non, ref = split_candidates(1000, inside, np.random.default_rng(1), 50, "rows")
    assert len(ref) == 1000 - 100 - 50 and not set(ref) & (set(inside) | set(non))
    # the same draw as the set difference it replaced (housing's attack unchanged)
    old = np.random.default_rng(1).permutation(np.setdiff1d(np.arange(1000), inside))
    assert np.array_equal(np.concatenate([non, ref]), old)
    monkeypatch.setattr(designs, "REFERENCE_CAP", 200)
    members2, non2, ref2 = split_candidates(1000, inside, np.random.default_rng(1), 50, "rows")
    assert np.array_equal(members2, members) and np.array_equal(non2, non) and np.array_equal(ref2, ref[:200])


def test_the_design_read_a_column_at_a_time_is_the_tables(tmp_path):
    n = 500
    table = pd.DataFrame({"y": RNG.normal(size=n), "a": RNG.normal(size=n), "b=x": RNG.normal(size=n)})
    table["split"] = np.where(RNG.random(n) < 0.2, "test", "train")
    table.to_parquet(tmp_path / "t.parquet")
    X_, y, Xt, yt = read_split_design(str(tmp_path / "t.parquet"), ["b=x", "a"])
    train, test = table[table.split == "train"], table[table.split == "test"]
    assert np.array_equal(X_, train[["b=x", "a"]].to_numpy()) and X_.flags["C_CONTIGUOUS"]
    assert np.array_equal(y, train.y.to_numpy()) and np.array_equal(Xt, test[["b=x", "a"]].to_numpy())
    assert np.array_equal(yt, test.y.to_numpy())


@pytest.mark.parametrize("name", ["ssp", "adassp", "joint_ssp", "noisy_gd"])
def test_the_matching_attack_model_from_sums_is_the_refit(name):
    """The informed adversary's noiseless model of a release that reads only clipped sums (the SSP family, noisy GD),
    from the known rows' sums plus the candidate, equals refitting every row; a candidate beyond the clip bounds is
    clipped as the estimator clips."""
    import dataclasses

    from dpcost.analysis.targeted import _sums_model
    from dpcost.dp.privacy import Privacy
    from dpcost.estimators.registry import METHODS

    method = METHODS[name]
    bounds = {"B_X": 2.0, "B_Y": 1.5} if name != "noisy_gd" else {"c_x": 2.0, "R": 1.5, "T": 5, "C": 4.0, "eta0": 0.5}
    tuning = method.resolve_tuning(bounds)
    p = dataclasses.replace(Privacy(1e9, 1e-5, "tight", "warn"), sampler="float-unsafe")
    Xi = np.c_[np.ones(len(Y)), X]
    fit_with = _sums_model(method, Xi[1:], Y[1:], tuning, p)
    for x, yt in ((Xi[0], Y[0]), (np.array([1.0, 5.0, -4.0, 3.0]), 9.0)):
        want = method.estimate(np.vstack([Xi[1:], x]), np.append(Y[1:], yt), privacy=p, rng=np.random.default_rng(0),
                               tuning=tuning, params={})[0]  # fmt: skip
        np.testing.assert_allclose(fit_with(x, yt), want, rtol=1e-6, atol=1e-9)
    assert _sums_model(METHODS["precond_gd"], Xi, Y, {}, p) is None  # other methods refit
