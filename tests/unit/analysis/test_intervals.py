"""The summary of the private intervals (dpcost.analysis.intervals): coverage, width, power on hand-built tables
with known answers; which methods run; the interval's stream is its own; the subsamples are the error curves'."""

import numpy as np
import pandas as pd
import pytest

from dpcost.analysis import intervals as iv
from dpcost.analysis.designs import RegressionDesign
from dpcost.analysis.streams import noise_rng
from dpcost.dp.privacy import Privacy
from dpcost.errors import ConfigError


def rows(method, route, m, spans, target=1.0, coefficient="b0"):
    """One tidy row per repetition: the interval [lo, hi] of each span."""
    return pd.DataFrame([{"method": method, "route": route, "m": m, "rep": r, "coefficient": coefficient, "lower": lo,
                          "upper": hi, "centre": (lo + hi) / 2, "target": target, "level": 0.9}
                         for r, (lo, hi) in enumerate(spans)])  # fmt: skip


def reference(m=100):
    # HC3: width 1 every repetition, excludes 0 in 3 of 4; classical: width 2, excludes 0 in 1 of 4 (closed ends)
    hc3 = rows("ols", "hc3", m, [(0.5, 1.5), (0.6, 1.6), (0.4, 1.4), (-0.2, 0.8)])
    classical = rows("ols", "classical", m, [(0.0, 2.0), (0.1, 2.1), (-0.5, 1.5), (-0.9, 1.1)])
    return pd.concat([classical, hc3], ignore_index=True)


def test_coverage_width_and_power_have_their_known_values():
    # 4 repetitions: covers the target 1.0 in 3 (the last misses), widths 2, 4, 2, 4, excludes 0 in 1 of 4
    private = rows("ssp", "delta", 100, [(-0.5, 1.5), (-1.0, 3.0), (0.2, 2.2), (-3.5, 0.5)])
    s = iv.summarize(private, reference(), why={"noisy_gd": iv.NO_PROCEDURE},
                     privacy={("ssp", 100): (0.5, 1e-4)})  # fmt: skip
    assert list(s.columns) == iv.SUMMARY
    row = s[s.method == "ssp"].iloc[0]
    assert row.coverage == 0.75 and row.n_reps == 4 and row.level == 0.9
    assert row.coverage_se == pytest.approx(np.sqrt(0.75 * 0.25 / 4))
    assert row.mean_width == pytest.approx(3.0)
    assert row.width_ratio == pytest.approx(3.0)  # over the HC3 interval's mean width 1
    assert row.power == 0.25 and row.ols_power == 0.75  # (0.2, 2.2) alone excludes 0; HC3 excludes it 3 times
    assert (row.epsilon, row.delta, row.private) == (0.5, 1e-4, True)
    hc3 = s[(s.method == "ols") & (s.route == "hc3")].iloc[0]
    assert hc3.width_ratio == 1.0 and hc3.coverage == 0.75 and not hc3.private and np.isnan(hc3.epsilon)
    classical = s[(s.method == "ols") & (s.route == "classical")].iloc[0]
    assert classical.width_ratio == pytest.approx(2.0) and classical.power == 0.25 and classical.coverage == 1.0
    # a method without a procedure: one row that says why, and no interval
    why = s[s.method == "noisy_gd"]
    assert len(why) == 1 and why.note.iloc[0] == iv.NO_PROCEDURE and why.m.isna().all() and why.coverage.isna().all()


def test_a_zero_reference_width_gives_no_ratio_and_pooling_averages_coefficients():
    # at m = n the FPC makes the OLS interval the point target: its width is 0, the ratio undefined (NaN, not inf)
    point = rows("ols", "hc3", 50, [(1.0, 1.0)] * 2)
    s = iv.summarize(rows("adassp", "delta", 50, [(0.0, 2.0)] * 2), point)
    assert np.isnan(s[s.method == "adassp"].width_ratio.iloc[0])
    # two coefficients, coverage 1 and 0.5: pooled 0.75, the lowest 0.5; width ratios 1 and 0.75: median 0.875
    a = rows("ssp", "delta", 10, [(0.0, 2.0), (0.0, 2.0)], coefficient="b0")
    b = rows("ssp", "delta", 10, [(0.0, 2.0), (2.0, 3.0)], coefficient="b1")
    ref = pd.concat([rows("ols", "hc3", 10, [(0.0, 2.0)] * 2, coefficient=c) for c in ("b0", "b1")])
    p = iv.pooled(iv.summarize(pd.concat([a, b]), ref))
    ssp = p[p.method == "ssp"].iloc[0]
    assert ssp.coverage == 0.75 and ssp.min_coverage == 0.5 and ssp.width_ratio == pytest.approx(0.875)


def test_which_methods_release_intervals():
    methods = ["ols", "noisy_gd", "ssp", "adassp", "precond_gd"]
    block = {"enabled": True, "level": 0.95, "methods": None, "routes": {}, "share": 0.1}
    assert iv.runs(block, methods) == ["ssp", "adassp", "precond_gd"]
    assert iv.runs({**block, "methods": ["adassp", "boosted_adassp"]}, methods) == ["adassp"]
    assert iv.runs({**block, "enabled": False}, methods) == [] and iv.runs(None, methods) == []
    with pytest.raises(ConfigError, match="noisy_gd.*no private interval procedure"):
        iv.runs({**block, "methods": ["noisy_gd"]}, methods)
    with pytest.raises(ConfigError, match="inference.routes.precond_gd"):
        iv.runs({**block, "routes": {"precond_gd": "delta"}}, methods)
    assert iv.options({**block, "routes": {"ssp": "bootstrap"}}, "ssp")["route"] == "bootstrap"
    assert iv.options(block, "adassp")["route"] == "delta" and iv.options(block, "precond_gd")["route"] == "blocks"
    assert iv.why_not(methods, {"ols": False}, ["ssp", "adassp", "precond_gd"]) == {
        "ols": iv.BASELINE, "noisy_gd": iv.NO_PROCEDURE}  # fmt: skip


def test_the_interval_draws_its_own_stream_on_the_error_curves_subsamples():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 3))
    design = RegressionDesign(X, X @ [0.5, -0.2, 0.1] + rng.normal(0, 0.5, 400), np.zeros(3))
    privacy = Privacy(1.0, 1e-5, "tight")
    tuning = {"B_X": 4.0, "B_Y": 4.0}
    kw = dict(level=0.95, route="delta", privacy=privacy, tuning=tuning, share=0.1)
    own = iv.interval_rng(7, "x", "ssp", 100, 0, **kw).standard_normal(4)
    curve = noise_rng(7, "x", "ssp", 100, 0, privacy=privacy, tuning=tuning, params={}).standard_normal(4)
    assert not np.allclose(own, curve)
    assert not np.allclose(own, iv.interval_rng(7, "x", "ssp", 100, 0, **{**kw, "level": 0.9}).standard_normal(4))
    table, plans, refused = iv.run_intervals(design, "ssp", tuning_by_m={100: tuning, 400: tuning}, m_grid=[100, 400],
                                             reps=3, seed=7, privacy=privacy, dataset="x", level=0.95, route="delta",
                                             share=0.1)  # fmt: skip
    assert refused == {} and [p["m"] for p in plans] == [100, 400] and len(table) == 2 * 3 * 3
    assert plans[0]["method"] == "ssp+interval" and plans[0]["parameters"]["interval_share"] == 0.1
    assert any("sum of squared residuals" in r["mechanism"] for r in plans[0]["releases"])
    # the target is the full-data OLS, and the OLS reference at m = n (FPC 0) is that point
    ref = iv.run_reference(design, m_grid=[400], reps=1, seed=7, dataset="x", level=0.95)
    fpc, sup = ref[ref.route != iv.SUPER], ref[ref.route == iv.SUPER]
    assert np.allclose(fpc.lower, fpc.upper) and np.allclose(ref.centre, ref.target)
    assert len(sup) == 3 and (sup.upper > sup.lower).all()  # the superpopulation interval keeps its width
    assert np.allclose(table.target.iloc[:3], iv.full_data_ols(design))
    # too few rows for 2 blocks of the measured size (n_b*mu >= 13): refused at that m, saying why, the other m kept
    t, plans, refused = iv.run_intervals(design, "precond_gd_free", tuning_by_m={12: {}, 100: {}}, m_grid=[12, 100],
                                         reps=2, seed=7, privacy=privacy, dataset="x", level=0.95, route="blocks",
                                         share=0.1)  # fmt: skip
    assert list(refused) == ["12"] and "n_b*mu >= 13" in refused["12"] and set(t.m) == {100}


def test_an_analysis_without_a_procedure_gets_the_reference_and_a_figure(tmp_path):
    # none of the analysis's methods has an interval: the summary holds the reference and the why rows, and the
    # figure draws the reference alone (no private curve to group)
    from dpcost.analysis.plotting import inference_figure

    s = iv.summarize(pd.DataFrame(columns=iv.TIDY), reference(), why={"noisy_gd": iv.NO_PROCEDURE})
    assert set(s.method) == {"ols", "noisy_gd"} and s[s.method == "noisy_gd"].coverage.isna().all()
    paths = [str(tmp_path / "inference.png"), str(tmp_path / "inference.pdf")]
    inference_figure(s, paths, title="t", xlabel="m", epsilon=0.5, delta=1e-5, calibration="tight", tuning="fixed")
    assert (tmp_path / "inference.png").read_bytes()[:4] == b"\x89PNG"


def test_bias_undercoverage_and_the_superpopulation_yardstick_are_in_every_row(tmp_path, monkeypatch):
    # 40 repetitions whose interval [c - 0.5, c + 0.5] sits on a centre 0.6 above the target: it never covers, its
    # mean bias is 0.6 beside a half-width of 0.5, and it under-covers; a second method covers 38 of 40 (0.95,
    # s.e. 0.034): not flagged; one at 0.85 with s.e. 0.056 is within 2 s.e. of 0.90: not flagged either
    target = 1.0
    biased = rows("adassp", "delta", 100, [(target + 0.1, target + 1.1)] * 40, target=target)
    fine = rows("ssp", "delta", 100, [(0.5, 1.5)] * 38 + [(2.0, 3.0)] * 2, target=target)
    close = rows("precond_gd", "blocks", 100, [(0.5, 1.5)] * 34 + [(2.0, 3.0)] * 6, target=target)
    ref = pd.concat([rows("ols", "hc3", 100, [(0.5, 1.5)] * 40), rows("ols", iv.SUPER, 100, [(0.0, 4.0)] * 40)])
    s = iv.summarize(pd.concat([biased, fine, close]), ref).set_index(["method", "route"])
    assert s.loc[("adassp", "delta"), "mean_bias"] == pytest.approx(0.6)
    assert s.loc[("adassp", "delta"), "mean_half_width"] == pytest.approx(0.5)
    assert s.loc[("adassp", "delta"), "undercovers"]
    assert not s.loc[("ssp", "delta"), "undercovers"] and not s.loc[("precond_gd", "blocks"), "undercovers"]
    # widths over OLS's with the correction (1) and without it (4)
    assert s.loc[("ssp", "delta"), "width_ratio"] == pytest.approx(1.0)
    assert s.loc[("ssp", "delta"), "width_ratio_super"] == pytest.approx(0.25)
    assert "clipping" in s.loc[("precond_gd", "blocks"), "note"] and "bias-aware" in s.loc[("adassp", "delta"), "note"]
    assert s.loc[("ols", iv.SUPER), "note"] == iv.SUPER_NOTE
    # the planted bug: a threshold at the nominal level instead of 0.90 - 2 s.e. would flag the 0.85 row
    assert iv.undercovers(0.85, 0.056) == np.False_ and (0.85 < 0.95) is True
    # the s.e. is the null's, of a coverage of 0.90 (√(0.09/reps)): at 4 repetitions a coefficient covered twice is
    # flagged (0.50 < 0.60), where the observed s.e. (0.25) let it pass as covering; three times (0.75) is not
    null = np.sqrt(iv.FLOOR * (1 - iv.FLOOR) / 4)
    assert iv.undercovers(0.5, null) and not iv.undercovers(0.75, null)
    assert not iv.undercovers(0.5, np.sqrt(0.5 * 0.5 / 4))  # the observed s.e.: the old rule's miss
    assert (s.undercovers == iv.undercovers(s.coverage, np.sqrt(0.09 / s.n_reps))).all()
    p = iv.pooled(s.reset_index())
    assert p.set_index("method").loc["adassp", "undercovers"] and not p.set_index("method").loc["ssp", "undercovers"]
    # the figure marks the under-covering curve in its legend
    import importlib

    from dpcost.analysis.plotting import inference_figure

    module = importlib.import_module("dpcost.analysis.plotting.inference_figure")
    labels = []
    monkeypatch.setattr(module, "finish", lambda fig, paths, *, legend, **kw: labels.extend(legend[1]))
    inference_figure(s.reset_index(), [str(tmp_path / "f.png")], title="t", xlabel="m", epsilon=0.5, delta=1e-5,
                     calibration="tight", tuning="fixed")  # fmt: skip
    marked = [t for t in labels if module.UNDERCOVERS in t]
    assert len(marked) == 1 and "AdaSSP" in marked[0], labels
    # a method refused at two m (its row without m, as the inference job writes it) says so in its legend entry
    why = {"precond_gd": "no interval at m = 200: too few rows; m = 2000: too few rows"}
    labels.clear()
    inference_figure(iv.summarize(pd.concat([biased, fine, close]), ref, why=why), [str(tmp_path / "g.png")],
                     title="t", xlabel="m", epsilon=0.5, delta=1e-5, calibration="tight", tuning="fixed")  # fmt: skip
    said = [t for t in labels if "[no interval at m = 200, 2,000]" in t]
    assert len(said) == 1 and "Preconditioned" in said[0], labels


def test_the_width_panel_divides_by_the_superpopulation_interval(tmp_path, monkeypatch):
    """inference.png's widths are over the superpopulation OLS interval (the yardstick of every cost), not the FPC'd
    one, which shrinks near m = n for a reason unrelated to privacy; without superpopulation rows the panel falls
    back to the FPC'd ratio and its axis says so. Here the FPC'd interval is 1 wide and the superpopulation one 4:
    a private interval 1 wide is drawn at 0.25 (planted: the former panel drew it at 1)."""
    import importlib

    from dpcost.analysis.plotting import inference_figure

    module = importlib.import_module("dpcost.analysis.plotting.inference_figure")
    figs = []
    monkeypatch.setattr(module, "finish", lambda fig, paths, **kw: figs.append(fig))
    ssp = rows("ssp", "delta", 100, [(0.5, 1.5)] * 40, target=1.0)
    hc3 = rows("ols", "hc3", 100, [(0.5, 1.5)] * 40)
    for ref, expected, words in ((pd.concat([hc3, rows("ols", iv.SUPER, 100, [(0.0, 4.0)] * 40)]), 0.25,
                                  "superpopulation"), (hc3, 1.0, "FPC")):  # fmt: skip
        figs.clear()
        inference_figure(iv.summarize(ssp, ref), [str(tmp_path / "f.png")], title="t", xlabel="m", epsilon=0.5,
                         delta=1e-5, calibration="tight", tuning="fixed")  # fmt: skip
        width_ax = figs[0].axes[1]
        lines = [line for line in width_ax.get_lines() if list(line.get_xdata()) == [100]]
        drawn = [y for line in lines if line.get_label() != module.FLOOR_LABEL for y in line.get_ydata()]
        assert drawn == [pytest.approx(expected)] and words in width_ax.get_ylabel(), (drawn, width_ax.get_ylabel())
        # theory's floor beside it: √(1 + d log(1/δ)/(m ε²)) at d = 1 coefficient, m = 100, ε = 0.5, δ = 1e-5
        (floor,) = [line.get_ydata()[0] for line in lines if line.get_label() == module.FLOOR_LABEL]
        assert floor == pytest.approx(np.sqrt(1 + np.log(1e5) / (100 * 0.25)))
    # an interval that under-covers is drawn apart: its width curve faded, the covering one's not
    figs.clear()
    biased = rows("adassp", "delta", 100, [(1.1, 2.1)] * 40, target=1.0)
    inference_figure(iv.summarize(pd.concat([ssp, biased]), ref), [str(tmp_path / "f.png")], title="t", xlabel="m",
                     epsilon=0.5, delta=1e-5, calibration="tight", tuning="fixed")  # fmt: skip
    alphas = sorted((line.get_alpha() or 1.0) for line in figs[0].axes[1].get_lines()
                    if line.get_linestyle() != "None" and line.get_label() != module.FLOOR_LABEL
                    and list(line.get_xdata()) == [100])  # fmt: skip
    assert alphas == [module.FADED, 1.0], alphas


def test_the_verdict_names_the_narrowest_covering_interval_or_says_none_covers():
    """The report's first sentence on intervals: the narrowest private interval with no under-covering coefficient at
    the largest m, by its width over the superpopulation interval, never a narrower one that under-covers (planted:
    picking the narrowest of all would name adassp, 0.25×, which never covers); and when every interval there
    under-covers, a plain "no private interval covers" and not a name."""
    target = 1.0
    ref = pd.concat([rows("ols", "hc3", 100, [(0.5, 1.5)] * 40), rows("ols", iv.SUPER, 100, [(0.0, 4.0)] * 40)])
    narrow_biased = rows("adassp", "delta", 100, [(target + 0.1, target + 1.1)] * 40, target=target)  # 1 wide
    wide = rows("ssp", "delta", 100, [(0.0, 2.0)] * 40, target=target)  # 2 wide: 0.5x the superpopulation width
    wider = rows("precond_gd", "blocks", 100, [(-1.0, 3.0)] * 40, target=target)  # 4 wide: 1x
    text = iv.verdict(iv.summarize(pd.concat([narrow_biased, wide, wider]), ref))
    assert "m = 100" in text and "is ssp (route delta): 0.5×" in text and "1 of the 3" in text, text
    none = iv.verdict(iv.summarize(narrow_biased, ref))
    assert none.startswith("At m = 100 no private interval covers every coefficient") and "adassp (delta) 0.00" in none
    assert iv.verdict(iv.summarize(pd.DataFrame(columns=iv.TIDY), ref)).startswith("No method")
