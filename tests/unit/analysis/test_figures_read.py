"""Figures a reader understands in ten seconds: titles of at most two lines with the setting in a caption below the
axes, legends that say what each method is, no two tick labels overlapping on any axis of any figure on any grid, a
zoom panel that holds the best curves, colour bars labelled as the cells read, the benchmark as a ranked chart, and
the hooks for held-out R² and abstention. Every figure is drawn with Agg and measured (``get_window_extent``)."""

import numpy as np
import pandas as pd
import pytest
from matplotlib import ticker

from dpcost.analysis import datasets, plotting
from dpcost.analysis.plotting import caption_text, legend_label, method_label
from dpcost.estimators.ols import ols
from dpcost.estimators.registry import METHODS, Method, methods_of
from dpcost.simulation import report

from support import REPO, legend_entries

REGRESSION = list(methods_of("regression"))
KW = dict(epsilon=0.5, delta="10/n^1.1", calibration="tight", tuning="decoy (none for 5 methods)")
HOUSING = datasets.get("housing")
CURVES = dict(xlabel=HOUSING.xlabel, ylabel=HOUSING.ylabel, reference=(1.3, HOUSING.reference_label), **KW)


# ------------------------------------------------------------------------------------------------ synthetic summaries
def error_summary(methods, ms, *, level=None, r2=False, abstain=None) -> pd.DataFrame:
    """Per (method, m) the columns of summary.csv; ``level(method, k)`` the error at m = ms[0]; with ``r2`` the held-out
    R² columns; ``abstain`` {method: {m: rate}} adds abstain_rate (0 elsewhere)."""
    rows = []
    for k, name in enumerate(methods):
        for m in ms:
            base = (level(name, k) if level else 0.3 + k / 20) * (ms[0] / m) ** 0.5
            row = {"method": name, "m": m, "n_reps": 20, "mean": base, "q05": base / 2, "q95": base * 2,
                   "median": base, "private": name != "ols", "proven": True, "tuning_mode": "decoy",
                   "end_to_end": False}  # fmt: skip
            if r2:
                row |= {"r2_mean": 1 - base, "r2_se": 0.01, "rmse_mean": base}
            if abstain is not None:
                row["abstain_rate"] = abstain.get(name, {}).get(m, 0.0)
            rows.append(row)
    return pd.DataFrame(rows)


def housing_like(ms=(2000, 4000, 8000, 20000)) -> pd.DataFrame:
    """The shape of the housing run: OLS far below the private methods, a peer orders of magnitude above them."""
    levels = {"ols": 0.14, "precond_gd": 0.27, "precond_gd_adaptive": 0.3, "diffprivlib": 2e6}
    return error_summary(REGRESSION, list(ms), level=lambda k, i: levels.get(k, 0.4 + i / 30))


def attack_summary(methods, ms) -> pd.DataFrame:
    return pd.DataFrame([{"method": k, "m": m, "n_reps": 5, "n_candidates": 200, "auc": 0.5 + 0.01 * i,
                          "auc_se": 0.01, "tpr_fpr05": 0.05, "tpr_fpr05_se": 0.01, "auc_ceiling": 0.62,
                          "private": METHODS[k].private} for i, k in enumerate(methods) for m in ms])  # fmt: skip


def map_ratios(ms, epsilons) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    who = ["precond_gd", "precond_gd_adaptive", "adassp", "boosted_adassp"]
    return pd.DataFrame([(e, m, float(np.exp(rng.normal(0.5, 1.2))), who[(i + j) % 4]) for i, e in enumerate(epsilons)
                         for j, m in enumerate(ms)], columns=["epsilon", "m", "ratio", "best_private"])  # fmt: skip


def bench_summary(n_datasets=8, epsilons=(0.5, 1.0), methods=None, seed=3) -> pd.DataFrame:
    """The columns of results/benchmark/summary.csv; every data set at a small m (wild numbers, to be ignored) and
    its largest m."""
    rng = np.random.default_rng(seed)
    rows = []
    for d in range(n_datasets):
        top = 2000 * (d + 1)
        for k in methods or REGRESSION:
            for eps in epsilons:
                for m in (200, top):
                    ratio = 1.0 if k == "ols" else float(np.exp(rng.normal(1, 1.2))) * (1e3 if m == 200 else 1)
                    r2 = float(1 - 0.1 * ratio + rng.normal(0, 0.05))
                    rows.append({"dataset": f"table{d}", "method": k, "epsilon": eps, "m": m, "n_reps": 20,
                                 "error": 0.1 * ratio, "error_se": 0.01, "r2": r2, "r2_se": 0.01,
                                 "ratio_to_ols": ratio, "private": k != "ols",
                                 "proven": k not in ("ops", "adaops"), "tuning_mode": "decoy"})  # fmt: skip
    return pd.DataFrame(rows)


def sim_summary(ns) -> pd.DataFrame:
    rows = [("e", 1, "a", "mean", k, "", k != "sample_mean", n, 20, np.nan, np.nan, np.nan, 0.5, 0.5, 25, 1.0 / n,
             0.0, 0.5 / n, 2.0 / n, 0.0, 1e-5, True) for k in ("sample_mean", "dp_mean") for n in ns]  # fmt: skip
    return pd.DataFrame(rows, columns=[*report.KEYS, "n_reps", "mean", "se", "q05", "q95", "s_used_mean", "delta",
                                       "proven"])  # fmt: skip


def draw_every_figure(tmp, ms, epsilons) -> None:
    """One figure of every kind the workflow draws, on the m (n) grid ``ms`` and the ε grid ``epsilons``, with the
    titles the jobs give them."""
    summary = housing_like(ms)
    shown = summary[summary.method.isin(plotting.headline(summary))]
    plotting.error_curves(shown, [tmp / "h.png"], title=HOUSING.title, note=plotting.HEADLINE_NOTE, **CURVES)
    with_r2 = error_summary(REGRESSION, list(ms), r2=True, abstain={"tukey_em": {ms[0]: 0.9}})
    plotting.error_curves(with_r2.assign(mean=summary["mean"]), [tmp / "a.png"],
                          title=HOUSING.title + " — every method", **CURVES)  # fmt: skip
    plotting.attack_figure(attack_summary(plotting.headline(summary), ms), [tmp / "k.png"],
                           title="California housing: score attack on the released estimates", xlabel=HOUSING.xlabel,
                           **KW)  # fmt: skip
    plotting.privacy_map_figure(map_ratios(ms, epsilons), [tmp / "p.png"], title="California housing", delta="10/n^1.1",
                                calibration="tight", tuning="decoy", reps=20, d=5)  # fmt: skip
    bench = bench_summary(epsilons=tuple(epsilons[:2]))
    plotting.benchmark_figure(bench, [tmp / "b.png"], delta="10/n^1.1", calibration="tight", tuning="decoy", reps=20)
    plotting.benchmark_heatmap(bench, [tmp / "bh.png"], delta="10/n^1.1", calibration="tight", tuning="decoy", reps=20)
    table = pd.DataFrame({"method": ["dpsl_kt"] * len(epsilons) + ["iht"] * len(epsilons),
                          "epsilon": list(epsilons) * 2, "mean": [0.3] * len(epsilons) + [0.1] * len(epsilons),
                          "sd": 0.01, "paper_mean": 0.25, "paper_sd": 0.01,
                          "private": [True] * len(epsilons) + [False] * len(epsilons), "proven": True,
                          "trials": 12})  # fmt: skip
    plotting.transfer_figure(table, [tmp / "t.png"], title="E2006: Wang & Gu (2020) Table 2", ylabel="test MSE",
                             delta=1e-5, calibration="tight")  # fmt: skip
    rates = pd.DataFrame(columns=["experiment", "method", "variant", "epsilon", "shape", "n", "fitted"])
    report.figure(sim_summary(ms), rates, 1, [tmp / "s.png"], title=f"Simulation, Figure 1: {report.FIGURE_TEXT[1]}",
                  labels={k: m.label for k, m in METHODS.items()},
                  caption=["Privacy: ε = 0.5, 25 repetitions."])  # fmt: skip


@pytest.fixture(scope="module")
def every_figure(tmp_path_factory):
    """``every_figure(grid)``: the figures :func:`draw_every_figure` draws on ``GRIDS[grid]``, drawn once per module
    for the tests that only read them (a drawing of the eight is ~6 s of CPU)."""
    drawn: dict[str, list] = {}

    def get(grid: str) -> list:
        if grid not in drawn:
            for other in [g for g in drawn if g != SHARED]:  # at most two grids' open: matplotlib warns past 20
                for fig in drawn.pop(other):
                    plotting.plt.close(fig)
            kept = []
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(plotting.plt, "close", kept.append)
                draw_every_figure(tmp_path_factory.mktemp("figures"), *GRIDS[grid])
            assert len(kept) == 8
            drawn[grid] = kept
        return drawn[grid]

    yield get
    for fig in (f for figs in drawn.values() for f in figs):
        plotting.plt.close(fig)


# ------------------------------------------------------------------------------------------------ 1. titles, captions
def title_ok(title: str) -> bool:
    """At most two lines, and none of the setting (which belongs in the caption)."""
    return title.count("\n") <= 1 and not any(s in title for s in ("δ =", "ε =", "repetitions", "calibration"))


def test_titles_are_two_lines_at_most_and_the_setting_is_in_the_caption(every_figure):
    for fig in every_figure(SHARED):
        title = fig._suptitle.get_text()
        assert title_ok(title), title
        assert "repetitions" in caption_text(fig) and "ε" in caption_text(fig), title
        assert all(not ax.get_title() or ax.get_title().count("\n") == 0 for ax in fig.axes), title
    # the former header of the headline figure: title, setting and note on five lines
    former = "\n".join([HOUSING.title, "(ε = 0.5, δ = 10/n^1.1, tight calibration, decoy, 5 methods none tuning)",
                        "shown: …\n…\n…"])  # fmt: skip
    assert not title_ok(former)


def test_the_tuning_of_the_caption_reads_as_words():
    modes = {"adassp": "decoy", "boosted_adassp": "none", "tukey_em": "none", "precond_gd": "decoy"}
    assert plotting.tuning_text("decoy", modes) == "decoy (none for 2 methods)"
    assert plotting.tuning_text("fixed", {"adassp": "fixed"}) == "fixed"
    text = plotting.caption(epsilon=0.5, delta=1e-5, calibration="tight", tuning="decoy (none for 2 methods)", reps=20)
    assert "tuning: decoy (none for 2 methods)" in text and "20 repetitions" in text


# ------------------------------------------------------------------------------------------------ 2. legends
def test_every_legend_entry_says_what_the_method_is(tmp_path, figures, monkeypatch):
    plotting.error_curves(housing_like(), [tmp_path / "a.png"], title="t", **CURVES)
    texts = [t for t, _ in legend_entries(figures[0])]
    for name in REGRESSION:
        m = METHODS[name]
        mine = [t for t in texts if t.startswith(m.label + " — ")]
        assert len(mine) == 1 and m.what in mine[0], (name, texts)
    # a method with no phrase (Method's default, as docs/development.md's example may be) shows its label alone
    monkeypatch.setitem(METHODS, "xy_step", Method("xy_step", "regression", "One noisy gradient step", ols))
    assert legend_label("xy_step") == "One noisy gradient step"
    assert legend_label("not_registered") == "not_registered"


# ------------------------------------------------------------------------------------------------ 3. tick labels
def overlapping(fig) -> list[tuple[str, str]]:
    """Pairs of tick labels of one axis whose drawn boxes overlap (more than half a pixel each way): the labels drawn
    are those whose centre lies within the axes along that axis. Written apart from plotting.layout on purpose."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    bad = []
    for ax in fig.axes:
        box = ax.get_window_extent(renderer)
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            lo, hi = (box.x0, box.x1) if name == "x" else (box.y0, box.y1)
            shown = []
            for text in axis.get_ticklabels(which="both"):
                if text.get_visible() and text.get_text():
                    e = text.get_window_extent(renderer)
                    if lo - 1 <= ((e.x0 + e.x1) if name == "x" else (e.y0 + e.y1)) / 2 <= hi + 1:
                        shown.append((text.get_text(), e))
            bad += [(a, b) for i, (a, ea) in enumerate(shown) for b, eb in shown[i + 1 :]
                    if ea.x0 + 0.5 < eb.x1 and eb.x0 + 0.5 < ea.x1
                    and ea.y0 + 0.5 < eb.y1 and eb.y0 + 0.5 < ea.y1]  # fmt: skip
    return bad


GRIDS = {
    "sparse, one decade": ([2000 * k for k in range(1, 11)], [0.1, 0.2, 0.5, 1, 2, 4, 8]),
    "five decades": ([100, 1000, 10_000, 100_000, 1_000_000], [0.5, 1.0]),
    "powers of two": ([2**k for k in range(6, 21)], [0.01 * 2**k for k in range(12)]),
    "narrow": ([1000, 1100, 1200, 1300], [1.0, 1.5]),
}


SHARED = "sparse, one decade"  # the grid of the tests below that read every figure, not one grid each


@pytest.mark.parametrize("grid", GRIDS, ids=list(GRIDS))
def test_no_two_tick_labels_overlap_on_any_axis_of_any_figure(every_figure, grid):
    for fig in every_figure(grid):
        assert overlapping(fig) == [], fig._suptitle.get_text()


def test_the_overlap_check_finds_the_former_tick_labels_and_declutter_clears_them(tmp_path, figures):
    """The check can fail: the former m axis (1, 2, 5 × 10^k, every one labelled) over five decades collides; the
    safety net, declutter, thins those labels until none overlap and keeps the powers of ten."""
    ms = GRIDS["five decades"][0]
    plotting.error_curves(error_summary(["ols", "adassp"], ms), [tmp_path / "a.png"], title="t", **CURVES)
    fig = figures[-1]
    ax = fig.axes[0]
    ax.xaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    assert overlapping(fig)
    plotting.declutter(fig)
    assert overlapping(fig) == []
    shown = {t.get_text() for t in ax.get_xticklabels() if t.get_text()}
    assert {f"{m:,}" for m in ms} <= shown, shown


def test_where_labels_are_thinned_the_curves_sample_sizes_keep_theirs(tmp_path, figures):
    """The README run's grid on the every-method figure's narrow panels: 200, 500 … 20,000 do not all fit, and the
    labels kept include every m a curve is drawn at (10,000 was kept over the curves' 20,000 before)."""
    ms = [200, 2000, 20000]
    summary = error_summary(REGRESSION[:9], ms, r2=True)  # two of the small multiples, each with its R² panel
    plotting.error_curves(summary, [tmp_path / "a.png"], title="t — every method", **CURVES)
    fig = figures[-1]
    panels = [ax for ax in fig.axes if ax.get_xscale() == "log"]
    assert len(panels) >= 4
    fig.canvas.draw()
    for ax in panels:
        shown = {t.get_text() for t in ax.get_xticklabels() if t.get_visible() and t.get_text()}
        assert {"200", "2,000", "20,000"} <= shown, shown
    assert overlapping(fig) == []


# ------------------------------------------------------------------------------------------------ 4. the zoom
# the headline's shape: a few methods, OLS far below the private ones and a peer orders of magnitude above
FEW = ["ols", "adassp", "precond_gd", "precond_gd_adaptive", "tukey_em", "diffprivlib"]


def test_the_zoom_holds_the_lowest_point_of_every_curve_it_draws(tmp_path, figures):
    summary = housing_like()
    summary = summary[summary.method.isin(FEW)]
    plotting.error_curves(summary, [tmp_path / "a.png"], title="t", **CURVES)
    assert len(figures[0].axes) == 2
    zoom = figures[0].axes[1]
    lo, hi = zoom.get_ylim()
    curves = [ln for ln in zoom.lines if ln.get_marker() not in ("None", None, "")]
    assert len(curves) == len(FEW) - 1  # every curve but the peer far above
    for line in curves:
        assert lo <= min(line.get_ydata()) <= hi, line.get_label()
    assert f"leaves out {method_label('diffprivlib')}" in caption_text(figures[0])
    # the former limits, 0.15–3 × the reference, started above the winners: OLS's lowest point was outside
    lowest = summary.groupby("method")["mean"].min()
    assert lowest["ols"] < 0.15 * CURVES["reference"][0]


# ------------------------------------------------------------------------------------------------ 5. styles, crowding
def curves_of(ax) -> list:
    """The method curves of a panel: labelled lines with markers (not the reference, bands or error-bar caps)."""
    return [ln for ln in ax.lines if not ln.get_label().startswith("_") and ln.get_marker() not in ("None", None, "")]


def look(line) -> tuple:
    from matplotlib.colors import to_hex

    return (to_hex(line.get_color()), line.get_marker(), str(line.get_linestyle()), line.get_fillstyle())


def repeated_looks(fig) -> list[tuple[str, str]]:
    """Pairs of different legend entries drawn alike (colour, marker, line, fill), and on a panel without legend
    entries (the ranked chart) pairs of rows whose median markers look alike."""
    entries = {text: look(h) for text, h in legend_entries(fig) if hasattr(h, "get_marker")}
    texts = list(entries)
    bad = [(a, b) for i, a in enumerate(texts) for b in texts[i + 1 :] if entries[a] == entries[b]]
    for ax in fig.axes:
        if ax.images:  # a heat map marks a cell's winner: the same method in many cells
            continue
        dots = {float(ln.get_ydata()[0]): look(ln) for ln in ax.lines if len(ln.get_xdata()) == 1 and not curves_of(ax)}
        rows = sorted(dots)
        bad += [(str(a), str(b)) for i, a in enumerate(rows) for b in rows[i + 1 :] if dots[a] == dots[b]]
    return bad


def test_no_two_methods_of_a_figure_look_alike(tmp_path, figures, monkeypatch, every_figure):
    for fig in every_figure(SHARED):
        assert repeated_looks(fig) == [], fig._suptitle.get_text()
    # the check bites: one style for every method
    monkeypatch.setattr(plotting.curves, "method_style", lambda k: {"color": "#0072B2", "marker": "o", "ls": "-"})
    monkeypatch.setattr(plotting.ranked_chart, "method_style", lambda k: {"color": "#0072B2", "marker": "o", "ls": "-"})
    plotting.error_curves(error_summary(FEW, [100, 1000]), [tmp_path / "x.png"], title="t", **CURVES)
    plotting.benchmark_figure(bench_summary(n_datasets=3), [tmp_path / "y.png"], delta=1e-5, calibration="tight",
                              tuning="decoy", reps=20)  # fmt: skip
    assert repeated_looks(figures[-2]) and repeated_looks(figures[-1])


def test_no_panel_holds_more_than_about_seven_curves(tmp_path, figures, monkeypatch, every_figure):
    """The headline figure holds at most MAX_CURVES methods; every method (20 for regression) is drawn as small
    multiples of at most PANEL_CURVES curves, each method once and OLS, the yardstick, in every panel."""
    summary = housing_like()
    plotting.error_curves(summary, [tmp_path / "a.png"], title="t", **CURVES)
    fig = figures[0]
    panels = [ax for ax in fig.axes if ax.get_visible() and curves_of(ax)]
    drawn = [" ".join(ln.get_label().split()) for ax in panels for ln in curves_of(ax)]
    assert all(len(curves_of(ax)) <= plotting.PANEL_CURVES for ax in panels)
    label = {k: " ".join(legend_label(k).split()) for k in REGRESSION}
    assert sorted(set(drawn)) == sorted(label.values())
    assert drawn.count(label["ols"]) == len(panels) and len(drawn) == len(REGRESSION) + len(panels) - 1
    # the panels share one error scale, but the peer's far above, which has its own and says so
    own = [ax for ax in panels if "own scale" in ax.get_title()]
    assert len(own) == 1 and any("diffprivlib" in ln.get_label() for ln in curves_of(own[0]))
    assert len({ax.get_ylim() for ax in panels if ax not in own}) == 1
    for ax in panels:
        for ln in curves_of(ax):
            assert ax.get_ylim()[0] <= min(ln.get_ydata()) and max(ln.get_ydata()) <= ax.get_ylim()[1]
    # and the headline figure of every figure drawn stays within MAX_CURVES
    assert all(len(curves_of(ax)) <= plotting.MAX_CURVES for f in every_figure(SHARED) for ax in f.axes)
    # the check bites: the former every-method figure, one panel of 20 curves
    monkeypatch.setattr(plotting.curves, "MAX_CURVES", len(REGRESSION))
    plotting.error_curves(summary, [tmp_path / "b.png"], title="t", **CURVES)
    assert max(len(curves_of(ax)) for ax in figures[-1].axes) > plotting.MAX_CURVES


# ------------------------------------------------------------------------------------------------ 6. colour bars
def _cells_and_bar(fig):
    """(printed number, image value) of every cell, and (tick value, label) of the colour bar's ticks in view."""
    out, ticks = [], []
    for ax in fig.axes:
        for im in ax.images:
            values = im.get_array()
            for t in ax.texts:
                j, i = (int(round(c)) for c in t.get_position())
                out.append((float(t.get_text().split("×")[0].split("\n")[0]), float(values[i, j])))
            bar = im.colorbar
            if bar is not None and not ticks:
                lo, hi = bar.norm.vmin, bar.norm.vmax
                ticks = [(v, t.get_text()) for v, t in zip(bar.ax.yaxis.get_majorticklocs(),
                                                            bar.ax.yaxis.get_majorticklabels(), strict=False)
                         if lo <= v <= hi and t.get_text()]  # fmt: skip
                label = bar.ax.get_ylabel()
    return out, ticks, label


@pytest.mark.parametrize("which", ["privacy map", "benchmark heat map"])
def test_colour_bars_are_labelled_as_the_cells_read(tmp_path, figures, which):
    """The number a cell prints is the value its shade encodes, and the colour bar's tick labels are those numbers at
    their place: reading the bar at a cell's ratio gives its shade. The former map shaded log10 of the ratio under a
    bar labelled "log10 ratio" (0 … 1.2) while the cells printed ratios (1× … 15×): both checks fail on it."""
    if which == "privacy map":
        plotting.privacy_map_figure(map_ratios([2000, 5000, 20000], [0.5, 1, 2]), [tmp_path / "p.png"], title="t",
                                    delta=1e-5, calibration="tight", tuning="decoy", reps=4)  # fmt: skip
    else:
        plotting.benchmark_heatmap(bench_summary(n_datasets=4, methods=REGRESSION[:6]), [tmp_path / "b.png"],
                                   delta=1e-5, calibration="tight", tuning="decoy", reps=4)  # fmt: skip
    cells, ticks, label = _cells_and_bar(figures[0])
    assert cells and len(ticks) >= 2 and "log" not in label
    for printed, value in cells:
        assert printed == pytest.approx(value, rel=0.05), (printed, value)
    for value, text in ticks:
        assert text.endswith("×") and float(text.rstrip("×")) == pytest.approx(value, rel=1e-6)


@pytest.mark.parametrize("rows", [2, 7])
def test_the_maps_colour_bar_label_stays_below_the_title(tmp_path, figures, rows):
    """A map of two ε (the small configuration's) has a short colour bar: its one-line label ran up into the title
    and out of the figure. Its drawn box lies inside the figure and below the title's."""
    ratios = map_ratios([2000, 20000], [0.5 * 2**k for k in range(rows)]).assign(yardstick="superpopulation RMSE")
    plotting.privacy_map_figure(ratios, [tmp_path / "p.png"],
                                title="California housing", delta=1e-5, calibration="tight", tuning="decoy",
                                reps=2)  # fmt: skip
    fig = figures[0]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    bar = next(ax for ax in fig.axes if ax.get_ylabel().startswith("best private"))
    label = bar.yaxis.label.get_window_extent(renderer)
    title = fig._suptitle.get_window_extent(renderer)
    assert label.y1 < title.y0 and label.y0 >= 0 and label.y1 <= fig.bbox.height


# ------------------------------------------------------------------------------------------------ 7. the benchmark
def test_the_benchmark_ranks_the_methods_by_their_median_ratio_with_the_spread(tmp_path, figures):
    summary = bench_summary()
    plotting.benchmark_figure(summary, [tmp_path / "b.png", tmp_path / "b.pdf"], delta=1e-5, calibration="tight",
                              tuning="decoy", reps=20)  # fmt: skip
    fig = figures[0]
    assert (tmp_path / "b.pdf").stat().st_size > 0
    top = summary[summary.m == summary.groupby("dataset").m.transform("max")]
    assert len(fig.axes) == 4  # a row of two panels per ε
    for (left, right), eps in zip(np.reshape(fig.axes, (2, 2)), (0.5, 1.0), strict=True):
        g = top[top.private & (top.epsilon == eps)]
        medians = g.groupby("method").ratio_to_ols.median().sort_values()
        names = [t.get_text().removesuffix(" †") for t in left.get_yticklabels()]
        assert names == [method_label(k) for k in medians.index]  # best first, small-m rows ignored
        for i, k in enumerate(medians.index):
            ratio, r2 = g[g.method == k].ratio_to_ols, g[g.method == k].r2
            on_row = [ln for ln in left.lines if list(ln.get_ydata()) in ([i, i], [i])]
            thick = next(ln for ln in on_row if ln.get_linewidth() > 3)
            assert sorted(thick.get_xdata()) == pytest.approx([ratio.quantile(0.25), ratio.quantile(0.75)])
            thin = next(ln for ln in on_row if len(ln.get_xdata()) == 2 and ln.get_linewidth() < 2)
            assert sorted(thin.get_xdata()) == pytest.approx([ratio.min(), ratio.max()])
            dot = next(ln for ln in on_row if len(ln.get_xdata()) == 1)
            assert dot.get_xdata()[0] == pytest.approx(medians[k])
            dot = next(ln for ln in right.lines if list(ln.get_ydata()) == [i] and len(ln.get_xdata()) == 1)
            assert dot.get_xdata()[0] == pytest.approx(r2.median())


def test_the_benchmark_heat_map_is_a_second_file_of_the_rule_and_the_docs():
    rule = (REPO / "workflow/rules/benchmark.smk").read_text()
    assert 'heatmap_png=report(\n            "results/benchmark/benchmark_heatmap.png"' in rule
    assert 'heatmap_pdf="results/benchmark/benchmark_heatmap.pdf"' in rule
    assert "`results/benchmark/benchmark_heatmap.png`, `.pdf`" in (REPO / "docs/usage.md").read_text()


# ------------------------------------------------------------------------------------------------ 8. R², abstention
def _looks(fig) -> list:
    return [[(ln.get_color(), ln.get_marker(), ln.get_linestyle(), ln.get_fillstyle()) for ln in ax.lines]
            for ax in fig.axes]  # fmt: skip


def test_held_out_r2_gets_a_panel_and_abstainers_are_marked(tmp_path, figures):
    ms = [100, 1000, 10_000]
    methods = ["ols", "adassp", "precond_gd", "tukey_em"]
    plain = error_summary(methods, ms)
    plotting.error_curves(plain, [tmp_path / "a.png"], title="t", **CURVES)
    # the new columns at their neutral values: the figure looks as without them
    zero = error_summary(methods, ms, abstain={})
    plotting.error_curves(zero, [tmp_path / "b.png"], title="t", **CURVES)
    assert _looks(figures[1]) == _looks(figures[0]) and caption_text(figures[1]) == caption_text(figures[0])
    assert len(figures[0].axes) == 1 and "abstained" not in caption_text(figures[0])

    full = error_summary(methods, ms, r2=True, abstain={"tukey_em": {100: 0.8, 1000: 0.6}, "adassp": {100: 0.4}})
    plotting.error_curves(full, [tmp_path / "c.png"], title="t", **CURVES)
    fig = figures[2]
    assert len(fig.axes) == 2
    main, r2 = fig.axes
    by_label = {" ".join(ln.get_label().split()): ln for ln in main.lines}
    tukey = next(ln for t, ln in by_label.items() if t.startswith(method_label("tukey_em")))
    ada = next(ln for t, ln in by_label.items() if t.startswith(method_label("adassp")))
    assert tukey.get_fillstyle() == "none" and tukey.get_linestyle() == "--"
    assert ada.get_fillstyle() == "full"  # 0.4: not most repetitions
    text = caption_text(fig)
    assert f"{method_label('tukey_em')} at m = 100, 1,000" in text and method_label("adassp") not in text
    assert "abstained, releasing its fallback instead of an estimate" in text
    assert " ".join(tukey.get_label().split()).endswith(f"[{plotting.ABSTAINS}]")
    for name in methods:  # the right panel draws every method's mean held-out R² at its m
        want = full[full.method == name].sort_values("m")["r2_mean"].to_numpy()
        assert any(np.allclose(ln.get_ydata(), want) for ln in r2.lines), name
    assert r2.get_ylim()[1] <= 1.05 and "R²" in r2.get_ylabel()
