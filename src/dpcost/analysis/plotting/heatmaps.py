"""Heat maps of cost ratios: the privacy map (best private over non-private, per m and ε) and the benchmark's (each
method's superpopulation RMSE over OLS's, per data set and ε). The cells print the ratio; the shade repeats it on a
log scale whose colour bar is labelled in ratios (1×, 2×, 5×, …), as the cells read."""

from __future__ import annotations

import itertools
import textwrap
from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib import ticker
from matplotlib.colors import LogNorm
from matplotlib.lines import Line2D

from .layout import finish, log_axis, log_m_axis, plt
from .style import caption, method_style


def ratio_norm(values) -> LogNorm:
    """A log colour scale of ratios from min(1, smallest) to max(10, largest): 1× is white unless a ratio is below."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    lo, hi = (min(1.0, float(v.min())), max(10.0, float(v.max()))) if len(v) else (1.0, 10.0)
    return LogNorm(vmin=lo, vmax=hi)


def ratio_colorbar(fig, im, ax, label: str, **kw):
    """A colour bar labelled in ratios (0.5×, 1×, 2×, 5×, 10× …) at their place on the log scale."""
    bar = fig.colorbar(im, ax=ax, **kw)
    bar.set_label(label)
    bar.ax.yaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
    bar.ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}×"))
    bar.ax.yaxis.set_minor_formatter(ticker.NullFormatter())
    return bar


def _dark(im, r: float) -> bool:
    return float(im.norm(r)) > 0.55


def privacy_map_figure(
    ratios: pd.DataFrame,
    paths: Sequence[str],
    *,
    title: str,
    delta,
    calibration: str,
    tuning: str,
    reps,
    d: int | None = None,
) -> None:
    """Heat map of the best private method's error over the non-private error at each (m, ε), every cell labelled
    with the ratio and the method, and the method's marker (:func:`method_style`) in its corner (readable in
    greyscale: the numbers carry the information, the shade repeats it). With ``d`` (the design's coefficients), a
    panel beside it draws the same costs against m, one curve per ε, and theory's floor under each, dotted
    (:func:`floor_panel`). ``title``: the data set's name; ``reps``: the map's repetitions."""
    table = ratios.pivot(index="epsilon", columns="m", values="ratio").sort_index()
    who = ratios.pivot(index="epsilon", columns="m", values="best_private").reindex_like(table)
    size = (1.6 + 1.35 * table.shape[1], 1.2 + 0.55 * table.shape[0])
    if d:
        size = (size[0] + FLOOR_PANEL_WIDTH, max(size[1], 3.2))
        widths = [size[0] - FLOOR_PANEL_WIDTH, FLOOR_PANEL_WIDTH]
        fig, (ax, side) = plt.subplots(1, 2, figsize=size, dpi=150, gridspec_kw={"width_ratios": widths})
    else:
        fig, ax = plt.subplots(figsize=size, dpi=150)
    im = ax.imshow(
        table.to_numpy(dtype=float), cmap="Greys", norm=ratio_norm(table.to_numpy()), aspect="auto", origin="lower"
    )
    _label_cells(ax, im, table, who)
    ax.set_xticks(range(table.shape[1]), [f"{int(m):,}" for m in table.columns])
    ax.set_yticks(range(table.shape[0]), [f"{e:g}" for e in table.index])
    ax.set_xlabel("subsample size m (records)")
    ax.set_ylabel("privacy budget ε")
    # the cost's yardstick (privacy_map.summarize_map): superpopulation RMSE, or the mean error of an older table
    yardstick = ratios["yardstick"].iloc[0] if "yardstick" in ratios else "mean error"
    # the bar is as tall as the rows: its label wrapped to that height (a 2-row map's one-line label ran into the title)
    fit = max(14, int((0.55 * table.shape[0] + 0.4) * 72 / 5.5))  # characters of ~5.5 pt at the label's 10 pt
    ratio_colorbar(fig, im, ax, textwrap.fill(f"best private {yardstick} / non-private", fit))
    how = caption(epsilon="ε per row", delta=delta, calibration=calibration, tuning=tuning, reps=reps)
    read = (
        f"Each cell: the lowest {yardstick} of any private method at that m and ε over the non-private method's "
        "(1× = privacy costs nothing), and that method, its marker in the corner."
    )
    if yardstick == "superpopulation RMSE":
        read += (
            " The RMSE counts the full-data fit's own sampling error, so the ratio does not explode as m "
            "approaches the number of rows."
        )
    legend = None
    if d:
        legend = floor_panel(side, table, d, delta)
        read += (
            f" Right: the same costs against m, one solid curve per ε (its grey and marker), and dotted in the "
            f"same grey {FLOOR_LABEL}, d = {d}: the minimax rate of private OLS (Cai, Wang & Zhang 2021) with "
            "its constant set to 1, an order of magnitude of what privacy itself costs, not a bound; the gap "
            "between a solid curve and its dotted one is what the mechanisms cost."
        )
    finish(
        fig, paths, title=f"{title}: what privacy costs at each sample size and ε", caption=[read, how], legend=legend
    )


def _label_cells(ax, im, table: pd.DataFrame, who: pd.DataFrame) -> None:
    """Every finite cell of the map labelled with its ratio and the best private method, the method's marker in
    its corner, in white on a dark cell."""
    for i in range(table.shape[0]):
        for j in range(table.shape[1]):
            r = table.iat[i, j]
            if not np.isfinite(r):
                continue
            dark = _dark(im, r)
            ax.text(
                j,
                i,
                f"{r:.2g}×\n{who.iat[i, j]}",
                ha="center",
                va="center",
                fontsize=6.5,
                color="white" if dark else "black",
            )
            style = method_style(who.iat[i, j])
            ax.plot(
                j - 0.38,
                i + 0.3,
                marker=style["marker"],
                color=style["color"],
                mec="white" if dark else "black",
                mew=0.5,
                ms=5,
                ls="none",
            )


FLOOR_PANEL_WIDTH = 3.6  # inches: the map's panel of costs against m
# what the map's dotted lines are (caption and legend): the RMSE ratio the minimax rate allows, constant 1
FLOOR_LABEL = "theory's floor sqrt(1 + d log(1/δ)/(m ε²))"
FLOOR_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<", ">", "p")


def floor_panel(ax, table: pd.DataFrame, d: int, delta) -> tuple[list, list[str]]:
    """The map's costs (``table``: ε × m) against m on ``ax``, one solid curve per ε (a grey from light, small ε, to
    black, and a marker of its own: greyscale tells them apart), and under each, dotted in its grey, theory's floor
    √(1 + d·log(1/δ(m))/(m ε²)) (:func:`dpcost.analysis.intervals.theory_floor`: the minimax rate of private OLS,
    constant 1, as an RMSE ratio). Returns the legend's (handles, labels): one per ε and one for the floor."""
    from ...dp.delta import resolve_delta
    from ..intervals import theory_floor

    ms = np.asarray(table.columns, dtype=float)
    greys = np.linspace(0.62, 0.0, len(table.index)) if len(table.index) > 1 else [0.0]
    handles = []
    for (eps, row), grey, marker in zip(table.iterrows(), greys, itertools.cycle(FLOOR_MARKERS), strict=False):
        colour = str(round(float(grey), 3))
        (line,) = ax.plot(
            ms,
            row.to_numpy(dtype=float),
            color=colour,
            marker=marker,
            ms=4.5,
            lw=1.4,
            mec="black",
            mew=0.4,
            label=f"ε = {eps:g}, best private",
        )
        floor = [float(theory_floor(d, float(eps), resolve_delta(delta, int(m)), int(m))) for m in ms]
        ax.plot(ms, floor, color=colour, ls=":", lw=1.6, label=FLOOR_LABEL)
        handles.append(line)
    log_m_axis(ax)
    ax.set_yscale("log")
    log_axis(ax.yaxis)
    ax.set_xlabel("subsample size m (records)")
    ax.set_ylabel("cost (× non-private)")
    ax.yaxis.set_label_position("right")  # away from the map's colour bar and its label
    ax.yaxis.tick_right()
    ax.grid(True, which="both", alpha=0.3)
    handles.append(Line2D([], [], color="black", ls=":", lw=1.6, label=FLOOR_LABEL))  # the floor's entry, in black
    return handles, [h.get_label() for h in handles]


def benchmark_heatmap(
    summary: pd.DataFrame, paths: Sequence[str], *, delta, calibration: str, tuning: str, reps
) -> None:
    """The benchmark at each data set's largest m: one panel per ε, a row per private method and a column per data
    set, each cell its superpopulation RMSE over OLS's (``ratio_to_ols``; the number printed; the shade, log scale,
    repeats it for greyscale).
    ``reps``: the repetitions behind each cell."""
    top = summary[summary.private & (summary.m == summary.groupby("dataset").m.transform("max"))]
    epsilons = sorted(top.epsilon.unique())
    methods = top.groupby("method").ratio_to_ols.median().sort_values().index.tolist()
    proven = top.groupby("method").proven.all()
    datasets = sorted(top.dataset.unique())
    norm = ratio_norm(top.ratio_to_ols)
    width = 2.2 + 0.62 * len(datasets)
    # a narrow last column holds the colour bar (a bar stolen from several panels would defeat tight_layout)
    fig, axes = plt.subplots(
        1,
        len(epsilons) + 1,
        figsize=(width * len(epsilons) + 0.9, 1.6 + 0.3 * len(methods)),
        dpi=150,
        gridspec_kw={"width_ratios": [width] * len(epsilons) + [0.12]},
    )
    *panels, bar = axes
    for col, (ax, eps) in enumerate(zip(panels, epsilons, strict=True)):
        cells = top[top.epsilon == eps].pivot(index="method", columns="dataset", values="ratio_to_ols")
        cells = cells.reindex(index=methods, columns=datasets)
        im = ax.imshow(cells.to_numpy(dtype=float), cmap="Greys", norm=norm, aspect="auto")
        for i in range(cells.shape[0]):
            for j in range(cells.shape[1]):
                r = cells.iat[i, j]
                if np.isfinite(r):
                    ax.text(
                        j,
                        i,
                        f"{r:.2g}",
                        ha="center",
                        va="center",
                        fontsize=6,
                        color="white" if _dark(im, r) else "black",
                    )
        ax.set_xticks(range(len(datasets)), datasets, rotation=45, ha="right", fontsize=7)
        ax.set_yticks(range(len(methods)), [k if proven[k] else f"{k} †" for k in methods], fontsize=7)
        ax.tick_params(labelleft=col == 0)  # the rows are named once, on the left
        ax.set_title(f"ε = {eps:g}", fontsize=9)
        ax.set_xlabel("data set")
    ratio_colorbar(fig, im, None, "superpopulation RMSE / OLS's (same data set and m)", cax=bar)
    how = caption(epsilon="ε per panel", delta=delta, calibration=calibration, tuning=tuning, reps=reps)
    finish(
        fig,
        paths,
        title="Private regression on real data: each method's error over OLS's, per data set",
        caption=[
            "At each data set's largest m; rows sorted by the median ratio over data sets. † not proven: an "
            "unproven calibration or floating-point noise.",
            how,
        ],
    )
