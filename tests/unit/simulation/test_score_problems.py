"""The Score Attack paper's four problems in the simulation study: their draws (reproducible, from their own
identity, of the stated law), their experiments (settings, ε lists, δ, analysis parameters checked before any job),
a job of each at tiny sizes, the NOT PROVEN marking, their rates and the figure."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import special

from dpcost.dp.privacy import Privacy
from dpcost.errors import ConfigError, PrivacyError
from dpcost.estimators import btl, glm, sobolev
from dpcost.estimators.registry import METHODS
from dpcost.simulation import rates as rates_mod
from dpcost.simulation import report
from dpcost.simulation.designs import Design, draw, error
from dpcost.simulation.experiments import Experiment
from dpcost.simulation.run import run_job

P = Privacy(0.5, "10/n^1.1", "tight")
GRID = {"smallest": 0.01, "largest": 1000.0, "ratio": 1.05}
TUNING = {  # as config/config.yaml
    "dp_glm": {"family": "logistic", "sigma_x": 1.0, "R": 1.0, "eta0": 3.0, "T": "ceil(2*log(9*n))"},
    "sparse_glm_iht": {"family": "logistic", "eta0": 2.0, "T": "ceil(2*log(1.5*n))"},
    "dp_sparse_glm": {"family": "logistic", "sigma_x": 1.0, "R": 1.0, "eta0": 2.0, "T": "ceil(2*log(1.5*n))"},
    "dp_btl": {"sensitivity": "degree", "c0": 1.0},
    "fourier": {"K": "2*floor(n^(1/(2*alpha+1))/2)+1"},
    "dp_fourier": {"alpha": "alpha", "c1": 1.0, "sigma": "sigma"},
    "dp_fourier_laplace": {"alpha": "alpha", "c1": 1.0, "sigma": "sigma"},
}
BLOCKS = {
    "logistic": {"problem": "logistic", "d": 5, "methods": ["glm_mle", "dp_glm"]},
    "sparse_logistic": {
        "problem": "sparse_logistic",
        "d": "2*n",
        "s": 3,
        "methods": ["sparse_glm_iht", "dp_sparse_glm"],
    },
    "btl": {"problem": "btl", "d": "n", "p": 0.5, "delta": "1/n^2", "methods": ["btl_mle", "dp_btl"]},
    "sobolev": {"problem": "sobolev", "d": 1, "alpha": 2, "methods": ["fourier", "dp_fourier", "dp_fourier_laplace"]},
}


def _exp(problem, **over):
    block = {"figure": 4, "panel": "a", "n": [300], "epsilon": [0.5, 1.0], **BLOCKS[problem], **over}
    return Experiment.from_config("e", block, reps=3)


def _run(exp, n, privacy=P, tuning=TUNING):
    return run_job(exp, n, design=Design(), tuning=tuning, privacy=privacy, theory_R="4*sigma*sqrt(log(n))",
                   quantile_share=0.5, quantile_grid=GRID, seed=11)  # fmt: skip


def test_the_old_problems_keep_their_draws():
    # the mean and regression identities are those of the study before the new design keys: no old draw moved
    old = "[('beta', 'sphere'), ('mu', 'uniform'), ('mu_range', 10.0), ('p', 0.15), ('sigma', 1.0), ('x', 'uniform')]"
    assert Design().identity("mean") == Design().identity("sparse_ols") == old
    a = draw(Design(), "ols", n=50, d=4, s=None, rep=0, seed=1)
    b = draw(Design(glm_x_bound=3.0, sobolev_C=2.0), "ols", n=50, d=4, s=None, rep=0, seed=1)
    assert np.array_equal(a[0][0], b[0][0]) and np.array_equal(a[1], b[1])


def test_logistic_draws_follow_the_model():
    (X, y), beta = draw(Design(glm_beta_norm=2.0), "logistic", n=40000, d=6, s=None, rep=0, seed=1)
    again = draw(Design(glm_beta_norm=2.0), "logistic", n=40000, d=6, s=None, rep=0, seed=1)
    assert np.array_equal(y, again[0][1]) and np.array_equal(beta, again[1])
    assert np.linalg.norm(beta) == pytest.approx(2.0) and np.abs(X).max() <= 1.0 and set(np.unique(y)) == {0.0, 1.0}
    assert abs(X.var() - 1 / 3) < 0.01  # U(-1, 1)
    assert abs(np.mean(y - special.expit(X @ beta))) < 4.5 * 0.5 / math.sqrt(40000)
    assert np.linalg.norm(glm.glm_mle(X, y) - beta) < 0.15  # the MLE finds the planted β
    (X, y), beta = draw(Design(), "sparse_logistic", n=200, d=400, s=5, rep=0, seed=1)
    assert np.flatnonzero(beta).tolist() == [0, 1, 2, 3, 4] and np.linalg.norm(beta) == pytest.approx(1.0)
    with pytest.raises(ConfigError, match="sparsity"):
        draw(Design(), "sparse_logistic", n=10, d=5, s=9, rep=0, seed=1)


def test_btl_draws_follow_the_model_and_p_is_in_their_identity():
    n, p = 300, 0.3
    (edges, y), theta = draw(Design(), "btl", n=n, d=n, s=None, rep=0, seed=1, setting={"p": p})
    assert np.abs(theta).max() <= 1 + 1e-12 and abs(theta.sum()) < 1e-9  # θ ∈ Θ
    pairs = n * (n - 1) / 2
    assert abs(len(edges) - p * pairs) < 4.5 * math.sqrt(pairs * p * (1 - p))
    assert np.all(edges[:, 0] < edges[:, 1]) and set(np.unique(y)) <= {0.0, 1.0}
    win = special.expit(theta[edges[:, 0]] - theta[edges[:, 1]])
    assert abs(np.mean(y - win)) < 4.5 * 0.5 / math.sqrt(len(y))
    assert theta.std() > 0.4  # U(-1, 1) centred: sd 0.58, a little less after the projection
    other = draw(Design(), "btl", n=n, d=n, s=None, rep=0, seed=1, setting={"p": 0.31})[1]
    assert not np.array_equal(theta, other)  # p is in the draw's identity (θ comes first from the stream)
    with pytest.raises(ConfigError, match="needs its p"):
        draw(Design(), "btl", n=n, d=n, s=None, rep=0, seed=1)
    with pytest.raises(ConfigError, match="d must be n"):
        draw(Design(), "btl", n=n, d=5, s=None, rep=0, seed=1, setting={"p": p})


def test_sobolev_draws_and_the_exact_error():
    (X, Y), theta = draw(Design(sigma=0.5), "sobolev", n=20000, d=1, s=None, rep=0, seed=1, setting={"alpha": 2})
    assert np.array_equal(theta, sobolev.sobolev_coefficients(2, 1000, C=10.0)) and len(theta) == 1000
    assert X.min() >= 0 and X.max() <= 1 and np.std(Y - sobolev.evaluate(theta, X)) == pytest.approx(0.5, rel=0.03)
    one = draw(Design(), "sobolev", n=50, d=1, s=None, rep=0, seed=1, setting={"alpha": 1})
    assert not np.array_equal(one[1], theta)
    est = np.array([0.1, -0.2, 0.05])
    exact = error("sobolev", est, theta)  # θ̂ ∈ R^3 against all 1000 coefficients: Parseval
    assert exact == pytest.approx(math.sqrt(sobolev.mise(est, lambda x: sobolev.evaluate(theta, x), grid=4096)))
    assert exact**2 == pytest.approx(np.sum((est - theta[:3]) ** 2) + np.sum(theta[3:] ** 2))
    with pytest.raises(ValueError, match="shape"):
        error("logistic", est, theta)


def test_experiments_check_settings_epsilons_and_parameters():
    exp = _exp("btl", n=[40, 80], p="0.5*sqrt(40/n)")
    assert [c.label for c in exp.curves] == ["btl_mle", "dp_btl [eps=0.5]", "dp_btl [eps=1]"]
    assert exp.setting_at(80) == {"p": pytest.approx(0.5 / math.sqrt(2))} and exp.dims(80) == (80, None)
    assert exp.privacy(P, exp.curves[1]) == Privacy(0.5, "1/n^2", "tight")
    assert _exp("logistic", epsilon=2).privacy(P, _exp("logistic", epsilon=2).curves[1]).epsilon == 2.0
    assert [c.epsilon for c in _exp("logistic", epsilon=None).curves] == [None, None]
    for over, match in [
        ({"p": None}, "needs p"),
        ({"p": 1.5}, r"p must lie in \(0, 1\]"),
        ({"d": 10}, "btl needs d = n"),
        ({"alpha": 2}, r"alpha is for problem\(s\) \['sobolev'\]"),
        ({"epsilon": [0.5, 0.5]}, "twice"),
        ({"epsilon": [0]}, "number > 0"),
        ({"delta": "20/n^0.5"}, "delta must lie strictly between 0 and 1"),
    ]:
        with pytest.raises(ConfigError, match=match):
            _exp("btl", **over)
    with pytest.raises(ConfigError, match="integer >= 1"):
        _exp("sobolev", alpha=1.5)
    with pytest.raises(ConfigError, match="sobolev needs d = 1"):
        _exp("sobolev", d=3)
    with pytest.raises(ConfigError, match="needs a sparsity s"):
        _exp("logistic", methods=["dp_sparse_glm"])
    with pytest.raises(ConfigError, match="unknown method 'dp_glm'"):
        _exp("btl", methods=["dp_glm"])  # a GLM method on the ranking problem


def test_constants_read_the_setting_and_keep_counts_whole():
    from dpcost.estimators.registry import get
    from dpcost.simulation.experiments import constants

    tun = constants(get("dp_fourier"), {**TUNING["dp_fourier"], "T": "4*sigma*sqrt(log(n))"}, n=1000, d=1, s=None,
                    sigma=1.0, setting={"alpha": 2})  # fmt: skip
    assert tun["alpha"] == 2 and isinstance(tun["alpha"], int)  # a count: its code default is an int
    assert tun["T"] == pytest.approx(4 * math.sqrt(math.log(1000)))  # T is a truncation level here, not a count
    # K: the odd integer nearest n^(1/3) = 36.8
    assert constants(get("fourier"), TUNING["fourier"], n=50000, d=1, s=None, sigma=1.0, setting={"alpha": 1}) == {
        "K": 37, "T": None}  # fmt: skip
    assert constants(get("dp_glm"), TUNING["dp_glm"], n=4000, d=20, s=None, sigma=1.0)["T"] == 21
    assert constants(get("dp_btl"), TUNING["dp_btl"], n=50, d=50, s=None, sigma=1.0)["sensitivity"] == "degree"
    with pytest.raises(ConfigError, match="not defined here"):
        constants(get("fourier"), TUNING["fourier"], n=100, d=1, s=None, sigma=1.0)  # alpha comes from the setting


@pytest.mark.parametrize("problem, n", [("logistic", 400), ("sparse_logistic", 150), ("btl", 30), ("sobolev", 300)])
def test_each_problem_runs_through_a_job(problem, n):
    exp = _exp(problem, n=[n])
    table, plans = _run(exp, n)
    methods = BLOCKS[problem]["methods"]
    assert len(table) == 3 * (1 + 2 * (len(methods) - 1))  # 3 reps; every private method at two ε
    assert table.error.notna().all() and (table.error > 0).all() and table.proven.all()
    private = table[table.private]
    assert set(private.epsilon) == {0.5, 1.0} and table.loc[~table.private, "epsilon"].isna().all()
    delta = 1 / n**2 if problem == "btl" else 10 / n**1.1
    assert np.allclose(private.delta, delta)
    again, _ = _run(exp, n)
    pd.testing.assert_frame_equal(table, again)  # reproducible
    # ε is in the noise stream: the two ε of a method do not share noise (nor do their errors coincide)
    by = private.pivot_table(index=["method", "rep"], columns="epsilon", values="error")
    assert (by[0.5] != by[1.0]).all()
    assert len(plans) == 2 * (len(methods) - 1) and all(p["proven"] for p in plans)
    if problem == "btl":  # the plan is the graph's: its largest degree, not the complete graph's n - 1
        d_max = int(np.bincount(draw(Design(), "btl", n=n, d=n, s=None, rep=0, seed=11,
                                     setting={"p": 0.5})[0][0].ravel()).max())  # fmt: skip
        assert all(p["parameters"]["d_max"] == d_max < n - 1 for p in plans)


def test_the_printed_btl_sensitivity_is_refused_or_marked_not_proven():
    exp = _exp("btl", n=[60], methods=["dp_btl"], epsilon=None)
    paper = {**TUNING, "dp_btl": {"sensitivity": "paper", "c0": 1.0}}
    with pytest.raises(PrivacyError, match=r"e, dp_btl, n=60: .*printed BTL sensitivity"):
        _run(exp, 60, tuning=paper)  # on a dense graph 2√n < √(d_max² + d_max): refused
    table, plans = _run(exp, 60, privacy=Privacy(0.5, "10/n^1.1", "tight", "warn"), tuning=paper)
    assert not table.proven.any() and plans[0]["proven"] is False and plans[0]["warnings"]
    summary = report.summarize(table)
    assert not summary.proven.any()
    label = report.curve_label("dp_btl", "", True, {}, proven=bool(summary.proven.iloc[0]))
    assert "NOT PROVEN" in label


def test_the_rates_of_the_new_problems():
    kw = dict(d=10, s=0, sigma=1.0, epsilon=1.0, delta=1e-6)
    r = {n: rates_mod.rate("logistic", False, n=n, **kw) for n in (1e3, 1e5)}
    assert math.log(r[1e5] / r[1e3]) / math.log(100) == pytest.approx(-0.5)
    up, low = (rates_mod.rate("logistic", True, n=1e4, shape=k, **kw) for k in ("upper", "lower"))
    assert up > low == pytest.approx(math.sqrt(10 / 1e4 + 100 / 1e8))
    sob = [rates_mod.rate("sobolev", False, n=n, alpha=2, **kw) for n in (1e3, 1e5)]
    assert math.log(sob[1] / sob[0]) / math.log(100) == pytest.approx(-2 / 5)  # √ n^{-2α/(2α+1)}
    priv = rates_mod.rate("sobolev", True, n=1e4, alpha=1, **kw)
    assert priv == pytest.approx(math.sqrt(1e4 ** (-2 / 3) + 1e4 ** (-1) * math.log(1e4)))
    printed = rates_mod.rate("btl", True, n=400, p=0.5, shape="printed", **kw)
    assert printed == pytest.approx(math.sqrt(2 + math.log(1e6) / 0.25))
    assert rates_mod.rate("btl", True, n=400, p=0.5, shape="corrected", **kw) == pytest.approx(
        math.sqrt(2 + 400 * math.log(1e6))
    )
    s = rates_mod.rate("sparse_logistic", True, n=1e4, **{**kw, "s": 5, "d": 1000})
    k = 5 * math.log(1000)
    assert s == pytest.approx(math.sqrt(k / 1e4 + k**2 * math.log(1e6) * math.log(1e4) ** 3 / 1e8))
    with pytest.raises(ValueError, match="shapes"):
        rates_mod.rate("btl", True, n=10, p=0.5, shape="upper", **kw)


def test_rates_table_fits_each_shape_and_pairs_by_setting():
    rows = []
    for alpha in (1, 2):
        for n in (1000, 4000, 16000):
            stat = rates_mod.rate("sobolev", False, n=n, d=1, s=0, sigma=1, epsilon=1, delta=1e-5, alpha=alpha)
            priv = rates_mod.rate("sobolev", True, n=n, d=1, s=0, sigma=1, epsilon=1, delta=1e-5, alpha=alpha)
            rows += [(f"a{alpha}", "fourier", False, n, alpha, np.nan, np.nan, 2 * stat),
                     (f"a{alpha}", "dp_fourier", True, n, alpha, 1.0, 1e-5, 3 * priv)]  # fmt: skip
    summary = pd.DataFrame(rows, columns=["experiment", "method", "private", "n", "alpha", "epsilon", "delta", "mean"])
    summary = summary.assign(figure=4, panel="d", problem="sobolev", variant="", d=1, s=np.nan, p=np.nan)
    table = rates_mod.rates_table(summary, sigma=1.0, epsilon=0.5, delta_at=lambda n: 0.5)  # ε, δ: the rows' own
    dp = table[table.method == "dp_fourier"]
    assert np.allclose(dp.constant, 3.0) and dp.fit_max_log_residual.max() < 1e-9 and set(dp["shape"]) == {"upper"}
    expect = [3 * rates_mod.rate("sobolev", True, n=n, d=1, s=0, sigma=1, epsilon=1, delta=1e-5, alpha=a)
              / (2 * rates_mod.rate("sobolev", False, n=n, d=1, s=0, sigma=1, epsilon=1, delta=1e-5, alpha=a))
              for a, n in zip(dp.alpha, dp.n, strict=True)]  # fmt: skip
    assert np.allclose(dp.cost_ratio, expect)  # each α against its own baseline, not the first found
    btl_rows = pd.DataFrame({"experiment": "b", "method": "dp_btl", "private": True, "n": [50, 100, 200],
                             "epsilon": 0.5, "delta": 1e-4, "mean": [7.0, 10.0, 14.0], "p": 0.5})  # fmt: skip
    btl_rows = btl_rows.assign(figure=4, panel="c", problem="btl", variant="", d=btl_rows.n, s=np.nan, alpha=np.nan)
    t = rates_mod.rates_table(btl_rows, sigma=1.0, epsilon=0.5, delta_at=lambda n: 0.5)
    slopes = t.groupby("shape").theory_slope.first()
    assert list(t["shape"].unique()) == ["printed", "corrected"]
    assert abs(slopes["printed"]) < 1e-9 and slopes["corrected"] == pytest.approx(0.5, abs=0.01)


def test_the_figure_draws_two_epsilons_and_two_rate_shapes(tmp_path):
    errors = pd.concat([_run(_exp("logistic", n=[n], panel="a"), n)[0] for n in (300, 600)]
                       + [_run(_exp("btl", n=[n], panel="b"), n)[0] for n in (30, 60)])  # fmt: skip
    summary = report.summarize(errors)
    assert set(summary.columns) >= {"p", "alpha", "epsilon", "delta", "proven"}
    table = rates_mod.rates_table(summary, sigma=1.0, epsilon=0.5, delta_at=lambda k: 10 / k**1.1)
    assert set(table.loc[table.problem == "btl", "shape"]) == {"printed", "corrected"}
    paths = [tmp_path / "fig4.png", tmp_path / "fig4.pdf"]
    report.figure(summary, table, 4, paths, title="t", labels={}, deltas={"e": "1/n^2"})
    assert all(p.stat().st_size > 10_000 for p in paths)
    # a baseline is not "NOT private"; every label ends with what the method does
    assert report.curve_label("glm_mle", "", False, {}) == f"glm_mle — {METHODS['glm_mle'].what}"
    assert report.curve_label("dp_glm", "", True, {}, epsilon=1.0, show_epsilon=True) == (
        f"dp_glm, eps = 1 — {METHODS['dp_glm'].what}"
    )
    assert btl.btl_sensitivity(3) == pytest.approx(math.sqrt(12))  # the bound the default curve uses
