import numpy as np
import pandas as pd
import pytest

from dpcost.analysis.summaries import annotate, compare, summarize


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
    assert list(c.columns) == [
        "mean", "best_dp_method", "ratio_to_best_dp", "ratio_to_adassp", "ratio_to_diffprivlib", "note"
    ]  # fmt: skip
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
    assert (c.xs(1000, level="m").note == "ratio_to_diffprivlib empty: diffprivlib did not run at m = 1000").all()
    assert (c.xs(100, level="m").note == "").all()
    none = compare(summary, ours=[], references=())
    assert none.best_dp_method.isna().all() and none.ratio_to_best_dp.isna().all()
    assert list(none.columns) == ["method", "m", "mean", "best_dp_method", "ratio_to_best_dp", "note"]


def test_an_empty_reference_column_says_why():
    summary = pd.DataFrame({"method": ["ols", "adassp"], "m": [100, 100], "mean": [0.1, 0.4]})
    c = compare(summary, ours=["adassp"], missing={"diffprivlib": "not installed: pip install -e '.[peers]'"})
    assert c.ratio_to_diffprivlib.isna().all() and c.ratio_to_adassp.notna().all()
    expected = "ratio_to_diffprivlib empty: diffprivlib did not run (not installed: pip install -e '.[peers]')"
    assert (c.note == expected).all()
    # a reference without a known reason is still named, never silently empty
    assert (compare(summary, ours=["adassp"]).note.str.contains("diffprivlib did not run \\(not among")).all()


def test_every_row_carries_its_privacy_setting():
    from dpcost.dp.privacy import Privacy

    summary = pd.DataFrame({"method": ["ols", "adassp", "ols", "adassp", "ops"], "m": [100, 100, 1000, 1000, 100],
                            "mean": [0.1, 0.4, 0.01, 0.1, 0.5]})  # fmt: skip
    privacy = Privacy(0.5, "10/n^1.1", calibration="tight")
    # ops: run with a budget (private), but its posterior sample is float noise: the ledger does not prove it
    s = annotate(summary, privacy=privacy, private={"ols": False, "adassp": True, "ops": True},
                 proven={"ols": False, "adassp": True, "ops": False}, tuning_mode="decoy")  # fmt: skip
    assert list(s.columns) == ["method", "m", "mean", "private", "proven", "epsilon", "delta", "calibration",
                               "tuning_mode", "end_to_end"]  # fmt: skip
    assert not s.end_to_end.any()  # decoy tuning looked at the data
    none = annotate(summary, privacy=privacy, private={"ols": False, "adassp": True, "ops": True},
                    proven={"ols": False, "adassp": True, "ops": False}, tuning_mode="none")  # fmt: skip
    assert list(none.end_to_end) == [False, True, False, True, False]  # proven only
    hidden = annotate(
        summary,
        privacy=privacy,
        private={"ols": False, "adassp": True, "ops": True},
        proven={"ols": False, "adassp": True, "ops": False},
        tuning_mode="none",
        d_public=False,
    )
    assert not hidden.end_to_end.any()  # d read from the data: nothing is private end to end
    assert list(s.proven) == [False, True, False, True, False] and s.set_index("method").loc["ops", "epsilon"] == 0.5
    ada = s[s.method == "adassp"].set_index("m")
    assert (ada.epsilon == 0.5).all() and (ada.calibration == "tight").all()
    assert ada.loc[100, "delta"] == pytest.approx(10 / 100**1.1) and ada.loc[1000, "delta"] == pytest.approx(
        10 / 1000**1.1
    )
    ols = s[s.method == "ols"]
    assert ols.epsilon.isna().all() and ols.delta.isna().all() and (ols.calibration == "").all()
    assert (s.tuning_mode == "decoy").all() and list(s.private) == [False, True, False, True, True]
    # the comparison keeps them, the note last
    c = compare(s, ours=["adassp"], references=("adassp",))
    assert list(c.columns)[-8:] == ["private", "proven", "epsilon", "delta", "calibration", "tuning_mode", "end_to_end",
                                    "note"]  # fmt: skip
    assert c.set_index(["method", "m"]).loc[("adassp", 1000), "delta"] == pytest.approx(10 / 1000**1.1)


def test_prediction_abstention_and_the_yardstick_columns():
    errors = pd.DataFrame({
        "method": ["a"] * 4, "m": [10] * 4, "rep": [0, 1, 2, 3], "error": [0.1, 0.3, 0.2, 0.2],
        "r2": [0.5, 0.7, np.nan, 0.6], "rmse": [1.0, 0.8, np.nan, 0.9], "abstained": [False, True, False, False],
    })  # fmt: skip
    s = summarize(errors, sampling_variance=0.04).iloc[0]
    assert s.sp_rmse == pytest.approx(np.sqrt(np.mean(np.square([0.1, 0.3, 0.2, 0.2])) + 0.04))
    assert s.r2_mean == pytest.approx(0.6) and s.r2_se == pytest.approx(0.1 / np.sqrt(3))  # NaN (m = n) left out
    assert s.rmse_mean == pytest.approx(0.9) and s.abstain_rate == 0.25
    assert "sp_rmse" not in summarize(errors)  # no variance given: the papers' metric only


def test_compare_ranks_by_the_yardstick_and_skips_a_method_that_mostly_abstained():
    summary = pd.DataFrame({
        "method": ["ols", "tukey_em", "adassp", "noisy_gd"], "m": [100] * 4,
        "mean": [0.01, 0.01, 0.4, 0.8], "sp_rmse": [0.1, 0.9, 0.5, 0.4], "abstain_rate": [0.0, 0.6, 0.0, 0.49],
    })  # fmt: skip
    c = compare(summary, ours=["tukey_em", "adassp", "noisy_gd"]).set_index("method")
    # by sp_rmse noisy_gd is best (by the papers' mean adassp would be); tukey_em abstained in 60 %: not a result
    assert (c.best_dp_method == "noisy_gd").all() and c.loc["adassp", "ratio_to_best_dp"] == pytest.approx(1.25)
    assert c.loc["tukey_em", "ratio_to_best_dp"] == pytest.approx(0.9 / 0.4)
    assert list(c.columns[:3]) == ["m", "sp_rmse", "best_dp_method"] and "abstain_rate" in c and "mean" in c


def test_benchmark_wins_do_not_count_a_method_that_mostly_abstained():
    from dpcost.analysis.benchmark import wins

    rows = []
    for dataset in ("a", "b"):
        rows += [
            (dataset, "ols", np.nan, 100, 0.1, 1.0, 0.5, 0.0, False),
            (dataset, "tukey_em", 1.0, 100, 0.1, 1.0, 0.5, 0.9 if dataset == "a" else 0.0, True),
            (dataset, "adassp", 1.0, 100, 0.15, 1.5, 0.45, 0.0, True),
        ]
    summary = pd.DataFrame(rows, columns=["dataset", "method", "epsilon", "m", "sp_rmse", "ratio_to_ols", "r2",
                                          "abstain_rate", "private"]).assign(proven=True)  # fmt: skip
    w = wins(summary).set_index("method")
    assert w.loc["tukey_em", "best"] == 1 and w.loc["tukey_em", "best_on"] == "b"  # not on a, where it abstained
    assert w.loc["adassp", "best_on"] == "a" and w.loc["tukey_em", "abstained_on"] == "a"
    assert w.loc["tukey_em", "within_2x_ols"] == 1 and w.loc["tukey_em", "r2_positive"] == 1
