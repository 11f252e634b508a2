"""The simulation study: draws from their own streams (shared by every method, reproducible), formulas and
experiments checked before any job runs, the truncation variants (R=none marked not private, R=dp_quantile charged
inside ε), the rates and their fitted constants, and the figures."""

import math

import numpy as np
import pandas as pd
import pytest

from dpcost.analysis.formula import evaluate, evaluate_int
from dpcost.dp.privacy import Privacy
from dpcost.errors import ConfigError
from dpcost.simulation import rates as rates_mod
from dpcost.simulation import report
from dpcost.simulation.designs import Design, draw
from dpcost.simulation.experiments import Experiment, SimulationStudy
from dpcost.simulation.run import run_job

P = Privacy(0.5, "10/n^1.1", "tight")
GRID = {"smallest": 0.01, "largest": 1000.0, "ratio": 1.05}
TUNING = {
    "dp_mean": {"R": "4*sigma*sqrt(log(n))"},
    "noisy_gd": {"R": 4.0, "C": 1.0, "c_x": 1.0, "eta0": "1.5*d", "T": "ceil(2*log(n))"},
    "karwa_vadhan": {"sigma": "sigma", "R_range": 10.0},
    "peeling": {"R": 8.0},
}


def test_formulas_are_parsed_not_executed():
    assert evaluate("4*sigma*sqrt(log(n))", n=math.e**4, sigma=0.5) == pytest.approx(4.0)
    assert evaluate_int("2*n", n=300) == 600 and evaluate_int("ceil(log(n))", n=1000) == 7 and evaluate(3) == 3.0
    with pytest.raises(ConfigError, match="may use only"):
        evaluate("__import__('os')", n=1)
    with pytest.raises(ConfigError, match="not defined here"):
        evaluate("s*2", n=1)
    with pytest.raises(ConfigError, match="whole number"):
        evaluate_int("n/3", n=10)


def test_draws_are_reproducible_shared_and_follow_the_design():
    a = draw(Design(), "mean", n=4000, d=20, s=None, rep=3, seed=1)
    b = draw(Design(), "mean", n=4000, d=20, s=None, rep=3, seed=1)
    assert np.array_equal(a[0][0], b[0][0]) and np.array_equal(a[1], b[1])
    assert not np.array_equal(a[1], draw(Design(), "mean", n=4000, d=20, s=None, rep=4, seed=1)[1])
    (X,), mu = a
    assert np.abs(mu).max() <= 10 and np.abs(X.mean(0) - mu).max() < 4.5 / math.sqrt(4000)  # 4.5 sd of a mean
    (X, y), beta = draw(Design(), "sparse_ols", n=500, d=1000, s=20, rep=0, seed=1)
    assert np.count_nonzero(beta) == 20 and np.linalg.norm(beta) == pytest.approx(1.0)
    assert np.abs(X).max() <= 1 / math.sqrt(1000)  # so every row has ‖x‖₂ ≤ 1, as (D1) asks
    old = Design(sigma=0.5, mu="ones", x="bernoulli", beta="ones")  # the 2019 preprint's designs
    (X, y), beta = draw(old, "ols", n=20000, d=50, s=None, rep=0, seed=1)
    assert set(np.unique(X)) == {0.0, 1.0} and abs(X.mean() - 0.15) < 0.005 and np.all(beta == 1)
    assert np.std(y - X @ beta) == pytest.approx(0.5, rel=0.03)
    with pytest.raises(ConfigError, match="sparsity"):
        draw(Design(), "sparse_mean", n=10, d=5, s=9, rep=0, seed=1)


def _exp(**over):
    block = {"figure": 1, "panel": "a", "problem": "mean", "d": 20, "n": [3000], "methods": ["sample_mean", "dp_mean"],
             "variants": ["R=none", "R=theory", "R=dp_quantile"], **over}  # fmt: skip
    return Experiment.from_config("e", block, reps=4)


def test_experiments_are_checked_before_any_job():
    exp = _exp()
    assert [c.label for c in exp.curves] == ["sample_mean", "dp_mean [R=none]", "dp_mean [R=theory]",
                                             "dp_mean [R=dp_quantile]"]  # fmt: skip
    assert _exp(problem="sparse_mean", d="2*n", s=5, methods=["peeling"]).dims(3000) == (6000, 5)
    with pytest.raises(ConfigError, match="unknown method 'noisy_gd'"):
        _exp(methods=["noisy_gd"])  # a regression method on a mean problem
    with pytest.raises(ConfigError, match="s is required"):
        _exp(problem="sparse_mean", methods=["peeling"])
    with pytest.raises(ConfigError, match="variants must be"):
        _exp(variants=["R=oracle"])
    block = {"reps": 2, "theory_R": 4, "quantile_share": 0.5, "quantile_grid": GRID,
             "experiments": {"e": {"figure": 1, "panel": "a", "problem": "mean", "d": 20, "n": [100],
                                   "methods": ["dp_mean"]}}}  # fmt: skip
    with pytest.raises(ConfigError, match=r"dp_mean is missing required key\(s\) \['R'\]"):
        SimulationStudy.from_config({**block, "tuning": {}})
    with pytest.raises(ConfigError, match=r"unknown method\(s\) \['dp_maen'\]"):
        SimulationStudy.from_config({**block, "tuning": {"dp_mean": {"R": 1}, "dp_maen": {"R": 1}}})
    assert SimulationStudy.from_config({**block, "tuning": {"dp_mean": {"R": 1}}}).jobs() == [("e", 100, 0, 1)]


def _run(exp, n, seed=7, privacy=P):
    return run_job(exp, n, design=Design(), tuning=TUNING, privacy=privacy, theory_R="4*sigma*sqrt(log(n))",
                   quantile_share=0.5, quantile_grid=GRID, seed=seed)  # fmt: skip


def test_a_job_runs_every_curve_on_the_same_draws_and_says_what_is_not_private():
    table, plans = _run(_exp(), 3000)
    assert len(table) == 4 * 4 and set(table.variant) == {"", "R=none", "R=theory", "R=dp_quantile"}
    assert table.loc[table.variant == "R=none", "private"].eq(False).all()
    assert table.loc[table.variant.isin(["R=theory", "R=dp_quantile"]), "private"].all()
    theory = table[table.variant == "R=theory"]
    assert np.allclose(theory.R, 4 * math.sqrt(math.log(3000)))
    again, _ = _run(_exp(), 3000)
    pd.testing.assert_frame_equal(table, again)  # reproducible
    other, _ = _run(_exp(methods=["dp_mean"]), 3000)  # the same draws whatever else runs
    mine = table[table.method == "dp_mean"].reset_index(drop=True)
    pd.testing.assert_frame_equal(mine, other.reset_index(drop=True))
    by = {p["variant"]: p for p in plans}
    assert "NOT private" in by["R=none"]["not_private"]
    q = by["R=dp_quantile"]
    # the quantiles' share and the estimator's rest add up to the run's ε (basic composition)
    assert q["quantile_step"]["epsilon"] + q["epsilon"] == pytest.approx(P.at(3000).epsilon)


def test_error_falls_with_n_and_the_quantile_level_is_sensible():
    exp = _exp(n=[2000, 50000], methods=["dp_mean"], variants=["R=dp_quantile"])
    table = pd.concat([_run(exp, n)[0] for n in exp.n])
    mean = table.groupby("n").error.mean()
    assert mean[50000] < mean[2000] / 3  # the rate falls at least like 1/√n: 5× over this grid
    big = table[table.n == 50000]
    assert big.R.between(8, 16).all()  # 2.5 % / 97.5 % points of a mixture of N(μ_j, 1), |μ_j| ≤ 10


def test_rates_recover_a_planted_constant_and_slope():
    n = np.array([1000, 4000, 16000, 64000])
    kw = dict(d=20, s=np.nan, sigma=1.0, epsilon=0.5)
    truth = [3 * rates_mod.rate("mean", True, n=k, d=20, s=0, sigma=1.0, epsilon=0.5, delta=10 / k**1.1) for k in n]
    base = [rates_mod.rate("mean", False, n=k, d=20, s=0, sigma=1.0, epsilon=0.5, delta=0) for k in n]
    rows = [
        ("e", 1, "a", "mean", "dp_mean", "", True, k, 20, np.nan, 0.5, 0.5, 10, v, 0, v, v)
        for k, v in zip(n, truth, strict=True)
    ]
    rows += [("e", 1, "a", "mean", "sample_mean", "", False, k, 20, np.nan, np.nan, np.nan, 10, v, 0, v, v)
             for k, v in zip(n, base, strict=True)]  # fmt: skip
    keys = [k for k in report.KEYS if k not in ("p", "alpha")]  # a summary without the settings' columns is read too
    summary = pd.DataFrame(rows, columns=[*keys, "n_reps", "mean", "se", "q05", "q95"])
    table = rates_mod.rates_table(summary, sigma=kw["sigma"], epsilon=0.5, delta_at=lambda k: 10 / k**1.1)
    dp = table[table.method == "dp_mean"]
    assert dp.constant.iloc[0] == pytest.approx(3.0) and dp.fit_max_log_residual.max() < 1e-9
    assert dp.slope.iloc[0] == pytest.approx(dp.theory_slope.iloc[0])
    assert -1.0 < dp.slope.iloc[0] < -0.5  # between the private 1/n and the statistical 1/√n
    assert np.allclose(dp.cost_ratio, np.array(truth) / np.array(base))
    assert table[table.method == "sample_mean"].slope.iloc[0] == pytest.approx(-0.5)


def test_the_figure_has_one_panel_per_experiment(tmp_path):
    exp_a, exp_b = _exp(n=[2000, 4000]), _exp(problem="ols", n=[2000, 4000], methods=["ols", "noisy_gd"], panel="b")
    errors = pd.concat([_run(e, n)[0] for e in (exp_a, exp_b) for n in e.n])
    summary = report.summarize(errors)
    assert set(summary.columns) >= {"experiment", "problem", "method", "variant", "n", "d", "s", "epsilon", "n_reps",
                                    "mean", "se", "q05", "q95"}  # fmt: skip
    table = rates_mod.rates_table(summary, sigma=1.0, epsilon=0.5, delta_at=lambda k: 10 / k**1.1)
    paths = [tmp_path / "fig1.png", tmp_path / "fig1.pdf"]
    report.figure(summary, table, 1, paths, title="t", labels={})
    assert all(p.stat().st_size > 10_000 for p in paths)


def test_a_refused_calibration_names_the_curve_and_n():
    # Alg. 3.1's printed σ is not (0.5, δ)-DP at δ = 1e-5: refused under on_invalid=refuse, with where it happened
    from dpcost.errors import PrivacyError

    with pytest.raises(PrivacyError, match=r"e, dp_mean \[R=theory\], n=3000: Alg. 3.1's printed noise variance"):
        _run(_exp(methods=["dp_mean"], variants=["R=theory"]), 3000, privacy=Privacy(0.5, 1e-5, "paper"))


def test_an_experiments_tuning_replaces_the_studys_entry():
    # the 2021 designs project IHT on the unit ball (C = 1); Figure 5's |theta*| is about sqrt(s): a merged C would
    # pull every non-private estimate to the ball (relative error 1 - 1/sqrt(s))
    block = {"figure": 5, "panel": "a", "problem": "kt_linear", "d": 60, "s": 4, "n": [200], "methods": ["iht"],
             "tuning": {"iht": {"eta0": 1.0, "T": 100}}}  # fmt: skip
    exp = Experiment.from_config("kt", block, reps=1)
    study = {"iht": {"eta0": "d", "T": "ceil(log(n))", "C": 1.0}, "dp_iht": {"C": 1.0}}
    assert exp.tuning_for("iht", study) == {"eta0": 1.0, "T": 100}
    assert exp.tuning_for("dp_iht", study) == {"C": 1.0}
