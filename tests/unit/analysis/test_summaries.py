import numpy as np
import pandas as pd
import pytest

from dpcost.analysis.summaries import compare, summarize


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


def test_summary_of_a_sparse_analysis_counts_the_recovered_support():
    errors = pd.DataFrame(
        {"method": ["p"] * 3, "m": [10] * 3, "rep": [0, 1, 2], "error": [1.0, 2.0, 3.0], "support_recovered": [1, 2, 4]}
    )
    s = summarize(errors)
    assert list(s.columns)[-1] == "support_recovered" and s.support_recovered.iloc[0] == pytest.approx(7 / 3)


def test_ratios_to_the_best_of_ours_and_to_the_reference():
    summary = pd.DataFrame(
        {
            "method": ["ols", "adassp", "noisy_gd", "diffprivlib", "ols", "adassp", "noisy_gd"],
            "m": [100, 100, 100, 100, 1000, 1000, 1000],
            "mean": [0.1, 0.4, 0.8, 2.0, 0.01, 0.1, 0.05],
        }
    )
    c = compare(summary, ours=["adassp", "noisy_gd"]).set_index(["method", "m"])
    assert list(c.columns) == ["mean", "best_dp_method", "ratio_to_best_dp", "ratio_to_adassp", "ratio_to_diffprivlib"]
    # the non-private baseline and the peer are measured against the best of ours, never chosen as it
    assert (c.xs(100, level="m").best_dp_method == "adassp").all()
    assert (c.xs(1000, level="m").best_dp_method == "noisy_gd").all()
    assert c.loc[("noisy_gd", 100), "ratio_to_best_dp"] == pytest.approx(2.0)
    assert c.loc[("ols", 100), "ratio_to_best_dp"] == pytest.approx(0.25)
    assert c.loc[("diffprivlib", 100), "ratio_to_best_dp"] == pytest.approx(5.0)
    assert c.loc[("adassp", 100), "ratio_to_diffprivlib"] == pytest.approx(0.2)
    assert c.loc[("noisy_gd", 1000), "ratio_to_adassp"] == pytest.approx(0.5)
    assert c.loc[("diffprivlib", 100), "ratio_to_diffprivlib"] == pytest.approx(1.0)
    assert c.xs(1000, level="m").ratio_to_diffprivlib.isna().all()  # the reference did not run at m = 1000
    none = compare(summary, ours=[], references=())
    assert none.best_dp_method.isna().all() and none.ratio_to_best_dp.isna().all()
    assert list(none.columns) == ["method", "m", "mean", "best_dp_method", "ratio_to_best_dp"]
