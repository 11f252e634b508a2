"""The benchmark's targeted attacks (dpcost.analysis.benchmark.run_benchmark_targeted, summarize_targeted): one small
table run end to end — OLS's heavy row given away and reconstructed, AdaSSP within its ceiling at every ε, its
reconstruction left out — and the summary's choice of each cell's top-leverage row, checked on a table built by hand
(a summary that took the first row, the wrong OLS row or the mean over random rows fails it)."""

import dataclasses

import numpy as np
import pandas as pd

from dpcost.analysis import datasets
from dpcost.analysis import targeted as tg
from dpcost.analysis.benchmark import run_benchmark_targeted, summarize_targeted
from dpcost.analysis.designs import RegressionDesign
from dpcost.analysis.plotting import benchmark_targeted_figure
from dpcost.analysis.tuning import TuningSpec
from dpcost.dp.privacy import Privacy
from dpcost.estimators.registry import methods_of

OPTIONS = {"k_top": 1, "k_random": 1, "shadows": 20, "test_releases": 40, "reconstruction_nfev": 5, "alpha": 0.05}


def _toy_table():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(500, 2)) / 2
    X[7] = [3.0, -3.0]  # the heavy row, far off the plane
    y = X @ np.array([0.5, -0.3]) + 0.2 * rng.normal(size=500)
    y[7] = 3.0
    design = RegressionDesign(X, y, np.linalg.lstsq(X, y, rcond=None)[0])
    return dataclasses.replace(datasets.get("housing"), name="toy", load=lambda inputs, params: design)


def test_a_small_table_gives_the_heavy_row_away_to_ols_and_not_to_adassp():
    analysis, reg = _toy_table(), methods_of("regression")
    kw = dict(epsilons=[0.5, 4.0], grid=[100, 300], test_fraction=0.2, params={}, seed=3,
              privacy=Privacy(1.0, "1/n^1.1", calibration="tight"), options=OPTIONS)  # fmt: skip
    ols = run_benchmark_targeted(analysis, reg["ols"], {}, TuningSpec(), **kw)
    # 400 training rows (20 % held out): m = 300 (the largest of the grid that leaves 4 rows out), OLS once
    assert (ols.m == 300).all() and len(ols) == 2 and ols.n_rows.iloc[0] == 400
    top = ols[ols.kind == "top"].iloc[0]
    assert top.auc > 0.95 and top.rel_error < 1e-6 and abs(top.residual_z) > 2  # 3σ off the plane, pulled in
    assert np.isclose(top.mean_leverage, 3 / 400)
    spec = TuningSpec(tuning={"B_X": 5.0, "B_Y": 3.5})
    ada = run_benchmark_targeted(analysis, reg["adassp"], {}, spec, **kw)
    assert sorted(ada.epsilon.unique()) == [0.5, 4.0] and len(ada) == 4
    assert ada.within.all() and (ada.reconstruction == "not run").all() and ada.rel_error.isna().all()
    summary = summarize_targeted(pd.concat([ols, ada], ignore_index=True))
    assert summary.method.tolist() == ["ols", "adassp", "adassp"]
    assert summary.target.nunique() == 1 and (summary.ols_rel_error < 1e-6).all()


def _row(dataset, method, eps, target, kind, leverage, auc, within, rel_error=np.nan):
    return {"dataset": dataset, "method": method, "epsilon": eps, "delta": 1e-5, "m": 100, "n_rows": 200,
            "target": target, "kind": kind, "leverage": leverage, "mean_leverage": 0.01, "residual_z": 1.0,
            "rel_error": rel_error, "auc": auc, "auc_se": 0.03, "tpr_fpr0001": 0.0, "tpr_fpr001": 0.0,
            "epsilon_lb": 0.0, "auc_ceiling": np.nan if np.isnan(eps) else 0.7, "tpr_ceiling0001": np.nan,
            "tpr_ceiling001": np.nan, "within": within}  # fmt: skip


def test_the_summary_takes_each_cells_top_row_and_the_worst_random_one(tmp_path):
    nan = np.nan
    rows = [
        _row("b", "ols", nan, 4, "random", 0.01, 0.5, pd.NA, 1e-12),
        _row("b", "ols", nan, 9, "top", 0.05, 0.9, pd.NA, 2e-12),
        _row("b", "ols", nan, 2, "top", 0.20, 1.0, pd.NA, 3e-12),
        _row("b", "ssp", 1.0, 9, "top", 0.05, 0.6, True),
        _row("b", "ssp", 1.0, 2, "top", 0.20, 0.65, True),
        _row("b", "ssp", 1.0, 4, "random", 0.01, 0.55, False),
        _row("b", "ssp", 1.0, 5, "random", 0.01, 0.45, True),
        _row("a", "ols", nan, 3, "top", 0.02, 0.52, pd.NA, 0.0),
        _row("a", "ssp", 1.0, 3, "top", 0.02, 0.5, True),
    ]
    table = pd.DataFrame(rows).astype({"within": "boolean"})
    s = summarize_targeted(table)
    assert list(zip(s.dataset, s.method, strict=True)) == [("b", "ols"), ("b", "ssp"), ("a", "ols"), ("a", "ssp")]
    b = s[s.dataset == "b"].set_index("method")
    assert (b.target == 2).all() and np.isclose(b.leverage_ratio, 20).all()
    assert (b.ols_rel_error == 3e-12).all()  # OLS's reconstruction of the same row
    assert b.loc["ssp", "auc"] == 0.65 and b.loc["ssp", "auc_random"] == 0.55  # the worst random row, not the mean
    assert b.loc["ssp", "within"] and not b.loc["ssp", "all_within"]  # a random row outside its ceiling counts
    assert pd.isna(b.loc["ols", "all_within"])
    paths = [tmp_path / "t.png", tmp_path / "t.pdf"]
    benchmark_targeted_figure(s, paths, delta="1/n^1.1")
    assert all(p.stat().st_size > 0 for p in paths)
    assert summarize_targeted(table.iloc[:0]).empty


def test_reconstruction_of_a_private_release_can_be_left_out():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 2))
    y = X @ np.array([1.0, -1.0]) + rng.normal(size=300)
    reg = methods_of("regression")
    kw = dict(params={}, privacy=Privacy(1.0, 1e-5, calibration="tight"), seed=1, dataset="toy", targeted_m=[150],
              reconstruct_private=False, **OPTIONS)  # fmt: skip
    Xi = tg.with_intercept(X)
    ols = tg.run_targeted(Xi, y, reg["ols"], tuning_by_m={}, **kw)
    assert (ols.reconstruction == "closed form").all()  # OLS's closed form costs nothing and is kept
    ssp = tg.run_targeted(Xi, y, reg["ssp"], tuning_by_m={150: reg["ssp"].resolve_tuning({"B_X": 4.0, "B_Y": 4.0})},
                          **kw)  # fmt: skip
    assert (ssp.reconstruction == "not run").all() and ssp.rel_error.isna().all()
