"""Figures: a second, zoomed panel appears exactly when a method is orders of magnitude off the others."""

import pandas as pd

from dpcost.analysis.plotting import error_curves, headline


def _summary(worst: float) -> pd.DataFrame:
    rows = []
    for method, base in (("ols", 0.1), ("adassp", 0.8), ("diffprivlib", worst)):
        for m in (100, 1000):
            rows.append((method, m, 20, base, base * 0.5, base * 2))
    return pd.DataFrame(rows, columns=["method", "m", "n_reps", "mean", "q05", "q95"])


def test_zoom_panel_only_when_a_curve_is_far_off(tmp_path, figures):
    kw = dict(title="t", xlabel="m", ylabel="error", epsilon=0.5, delta=1e-5, reference=(1.3, "zero"))
    error_curves(_summary(5.0), [tmp_path / "one.png"], **kw)
    error_curves(_summary(1e5), [tmp_path / "two.png"], **kw)
    assert [len(fig.axes) for fig in figures] == [1, 2]
    assert (tmp_path / "one.png").stat().st_size > 0 and (tmp_path / "two.png").stat().st_size > 0


def test_the_headline_figure_holds_the_papers_their_comparators_and_the_best_of_the_rest():
    from dpcost.estimators.registry import methods_of

    names = list(methods_of("regression"))
    rows = []
    for k, name in enumerate(names):
        for m in (100, 1000):  # adassp is the best of Wang's field, precond_gd the best new one
            level = {"adassp": 0.3, "precond_gd": 0.1}.get(name, 1.0 + k / 100)
            rows.append((name, m, level / (m / 100), 0.0, 0.0))
    chosen = headline(pd.DataFrame(rows, columns=["method", "m", "mean", "q05", "q95"]))
    assert chosen == sorted(
        ["ols", "noisy_gd", "noisy_truncated_ols", "noisy_sgd", "sheffet_jl", "adassp", "precond_gd"]
    )
    assert len(chosen) <= 7  # peers and the rest of the field: the full figure


def test_a_tuning_free_method_best_overall_still_stands_beside_the_best_tuned_one():
    """When the best new estimator is private from end to end (tuning none), the best tuned new one is drawn too:
    the figure shows what tuning on data buys (or does not)."""
    rows = []
    for name, level, mode in (("ols", 0.05, "fixed"), ("adassp", 0.5, "decoy"), ("precond_gd", 0.2, "decoy"),
                              ("joint_ssp", 0.4, "decoy"), ("precond_gd_adaptive", 0.1, "none"),
                              ("boosted_adassp", 0.3, "none")):  # fmt: skip
        for m in (100, 1000):
            rows.append((name, m, level, name != "ols", True, mode, mode == "none"))
    summary = pd.DataFrame(rows, columns=["method", "m", "mean", "private", "proven", "tuning_mode", "end_to_end"])
    assert headline(summary) == ["adassp", "ols", "precond_gd", "precond_gd_adaptive"]
    # on a table whose d was read from the data nothing is private end to end: the best of the group stands alone
    assert headline(summary.assign(end_to_end=False)) == ["adassp", "ols", "precond_gd_adaptive"]
