"""The privacy–utility map: each ε a run of its own (its own tuning and noise, the shared subsamples), the ratio of
the best private to the best non-private error, and the smallest ε within a factor."""

import io
import math

import numpy as np
import pandas as pd
import pytest

from dpcost.analysis import privacy_map
from dpcost.analysis.datasets import Analysis
from dpcost.analysis.designs import RegressionDesign
from dpcost.analysis.tuning import TuningSpec
from dpcost.dp.privacy import Privacy
from dpcost.estimators.ols import ols
from dpcost.estimators.registry import get


def _analysis():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 3))
    y = X @ np.array([0.5, -0.3, 0.2]) + rng.normal(size=3000)
    design = RegressionDesign(X, y, ols(X, y))
    return Analysis(
        name="toy", family="regression", title="t", xlabel="m", ylabel="e", reference_label="0",
        load=lambda inputs, params: design, max_m=lambda b: (3000, "rows"), probe=lambda b: None,
    )  # fmt: skip


def test_each_epsilon_is_its_own_run_and_error_falls_with_epsilon():
    kw = dict(epsilons=[0.2, 5.0], m_grid=[500, 2000], reps=6, params={}, seed=1,
              privacy=Privacy(0.5, "10/n^1.1", "tight"))  # fmt: skip
    sa = get("subsample_aggregate")
    table, record = privacy_map.run_map(_analysis(), sa, {}, TuningSpec(tuning={"R_b": 2.0, "block_size": 25}), **kw)
    assert sorted(table.epsilon.unique()) == [0.2, 5.0] and len(table) == 2 * 2 * 6
    assert set(record["tuning"]) == {"0.2", "5.0"} and record["refused"] == {}
    err = table.groupby(["epsilon", "m"]).error.mean()
    assert err[(5.0, 2000)] < err[(0.2, 2000)] and err[(5.0, 500)] < err[(0.2, 500)]
    base, _ = privacy_map.run_map(_analysis(), get("ols"), {}, TuningSpec(), **kw)
    assert base.epsilon.isna().all() and len(base) == 2 * 6  # a non-private method runs once


def test_a_refused_epsilon_is_recorded_and_left_out():
    paper = Privacy(0.5, "10/n^1.1", "paper")
    spec = TuningSpec(tuning={"R_b": 2.0, "block_size": 25})
    sa = get("subsample_aggregate")
    table, record = privacy_map.run_map(_analysis(), sa, {}, spec, epsilons=[0.5, 2.0], m_grid=[500], reps=2,
                                        params={}, seed=1, privacy=paper)  # fmt: skip
    assert list(table.epsilon.unique()) == [0.5] and "epsilon < 1" in record["refused"]["2.0"]


def test_ratios_and_the_epsilon_needed():
    rows = []
    for eps, level in ((0.5, 4.0), (1.0, 1.8), (2.0, 1.2)):
        for m in (100, 1000):
            rows += [("a", eps, m, 0, level * 0.1), ("b", eps, m, 0, level * 0.1 * (1 if m == 100 else 3))]
    for m in (100, 1000):
        rows.append(("ols", math.nan, m, 0, 0.1))
    errors = pd.DataFrame(rows, columns=["method", "epsilon", "m", "rep", "error"])
    summary, ratios = privacy_map.summarize_map(errors, {"a": True, "b": True, "ols": False})
    assert len(summary) == 2 * 3 * 2 + 2
    r = ratios.set_index(["epsilon", "m"])
    assert r.loc[(1.0, 100), "ratio"] == pytest.approx(1.8) and r.loc[(1.0, 100), "non_private"] == "ols"
    assert r.loc[(2.0, 1000), "best_private"] == "a"
    needed = privacy_map.epsilon_needed(ratios).set_index("m")
    assert needed.loc[100, "epsilon_within_2x"] == 1.0 and needed.loc[100, "epsilon_within_1.25x"] == 2.0
    assert needed.loc[100, "method_within_2x"] == "a"
    hard = ratios.assign(ratio=ratios.ratio * 10)
    assert privacy_map.epsilon_needed(hard).epsilon_within_2x.isna().all()  # not reached on the grid
    # the CSV says so in words, never with an empty cell; a reached ε keeps its value
    mixed = ratios.assign(ratio=np.where(ratios.m == 1000, ratios.ratio * 10, ratios.ratio))
    table = privacy_map.needed_table(privacy_map.epsilon_needed(mixed)).set_index("m")
    assert table.loc[100, "epsilon_within_2x"] == "1" and table.loc[1000, "epsilon_within_2x"] == "not reached"
    csv = pd.read_csv(io.StringIO(table.to_csv()), keep_default_na=False)
    assert not (csv == "").any().any()
    written = privacy_map.needed_table(privacy_map.epsilon_needed(hard))
    assert (written.epsilon_within_2x == "not reached").all() and (written.method_within_2x == "not reached").all()
    assert list(privacy_map.needed_table(privacy_map.epsilon_needed(ratios)).epsilon_within_2x) == ["1", "1"]


def test_the_map_ratio_is_of_superpopulation_rmses_and_skips_abstentions():
    rows = []
    for m, ols_err in ((100, 0.3), (1000, 0.0)):  # at m = N OLS's error against the full-data fit is 0
        rows += [("ols", math.nan, m, r, ols_err, False) for r in range(4)]
        rows += [("adassp", 1.0, m, r, 0.5, False) for r in range(4)]
        rows += [("tukey_em", 1.0, m, r, 0.0, r > 0) for r in range(4)]  # abstained in 3 of 4: no result
    errors = pd.DataFrame(rows, columns=["method", "epsilon", "m", "rep", "error", "abstained"])
    private = {"ols": False, "adassp": True, "tukey_em": True}
    summary, ratios = privacy_map.summarize_map(errors, private, sampling_variance=0.16)
    r = ratios.set_index("m")
    assert (r.best_private == "adassp").all()
    assert r.loc[100, "ratio"] == pytest.approx(np.sqrt(0.25 + 0.16) / np.sqrt(0.09 + 0.16))
    assert r.loc[1000, "ratio"] == pytest.approx(np.sqrt(0.25 + 0.16) / 0.4)  # finite at m = N
    assert summary.set_index(["method", "m"]).loc[("tukey_em", 100), "abstain_rate"] == 0.75
    _, papers = privacy_map.summarize_map(errors, private)  # without the variance: the papers' metric
    assert papers.set_index("m").loc[1000, "ratio"] == np.inf


def test_the_map_draws_theorys_floor_dotted_beside_each_epsilons_costs(tmp_path, figures):
    """privacy_map.png with d: beside the heat map, each ε's measured cost against m (solid, a marker of its own) and
    under it, dotted in the same grey, theory's floor √(1 + d·log(1/δ(m))/(m ε²)) — the values of intervals.
    theory_floor at the map's δ formula (planted: at ε = 0.1, m = 2,000, d = 5 and δ = 10/m^1.1 it is 1.586, at
    ε = 4 it is 1.0005), named in the legend and the caption; without d the map is drawn alone, as before."""
    from dpcost.analysis import plotting
    from dpcost.analysis.plotting import heatmaps
    from dpcost.analysis.plotting.layout import CAPTION

    ms, epsilons = [2000, 5000, 20000], [0.1, 1.0, 4.0]
    ratios = pd.DataFrame([(e, m, 1.5 + e / 10, "adassp") for e in epsilons for m in ms],
                          columns=["epsilon", "m", "ratio", "best_private"])  # fmt: skip
    kw = dict(title="t", delta="10/n^1.1", calibration="tight", tuning="decoy", reps=20)
    plotting.privacy_map_figure(ratios, [tmp_path / "p.png"], d=5, **kw)
    plotting.privacy_map_figure(ratios, [tmp_path / "q.png"], **kw)
    fig, alone = figures
    side = next(ax for ax in fig.axes if ax.get_ylabel() == "cost (× non-private)")
    floors = [ln for ln in side.get_lines() if ln.get_label() == heatmaps.FLOOR_LABEL]
    solid = [ln for ln in side.get_lines() if ln.get_label() != heatmaps.FLOOR_LABEL]
    assert len(floors) == len(solid) == 3
    for eps, floor, cost in zip(epsilons, floors, solid, strict=True):
        assert floor.get_linestyle() == ":" and cost.get_linestyle() == "-"
        assert floor.get_color() == cost.get_color()  # the same grey: a reader pairs them without colour
        want = [np.sqrt(1 + 5 * math.log(m**1.1 / 10) / (m * eps**2)) for m in ms]
        assert list(floor.get_xdata()) == ms and np.allclose(floor.get_ydata(), want, rtol=1e-12)
        assert list(cost.get_ydata()) == pytest.approx([1.5 + eps / 10] * 3)
    assert floors[0].get_ydata()[0] == pytest.approx(1.586, abs=1e-3)
    assert floors[2].get_ydata()[0] == pytest.approx(1.0005, abs=1e-4)
    assert len({ln.get_marker() for ln in solid}) == 3  # greyscale: each ε its own marker
    legend = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
    assert heatmaps.FLOOR_LABEL in legend and "ε = 0.1, best private" in legend
    caption = next(t.get_text() for t in fig.texts if t.get_gid() == CAPTION)
    assert "floor" in caption.replace("\n", " ") and "d = 5" in caption
    assert not any(ax.get_ylabel() == "cost (× non-private)" for ax in alone.axes) and not alone.legends
