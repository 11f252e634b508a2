"""Heat maps of cost ratios: the privacy map (best private over non-private, per m and ε) and the benchmark's (each
method's superpopulation RMSE over OLS's, per data set and ε). The cells print the ratio; the shade repeats it on a
log scale whose colour bar is labelled in ratios (1×, 2×, 5×, …), as the cells read."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib import ticker
from matplotlib.colors import LogNorm

from .layout import finish, plt
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


def privacy_map_figure(ratios: pd.DataFrame, paths: Sequence[str], *, title: str, delta, calibration: str,
                       tuning: str, reps) -> None:  # fmt: skip
    """Heat map of the best private method's error over the non-private error at each (m, ε), every cell labelled
    with the ratio and the method, and the method's marker (:func:`method_style`) in its corner (readable in
    greyscale: the numbers carry the information, the shade repeats it). ``title``: the data set's name; ``reps``:
    the map's repetitions."""
    table = ratios.pivot(index="epsilon", columns="m", values="ratio").sort_index()
    who = ratios.pivot(index="epsilon", columns="m", values="best_private").reindex_like(table)
    fig, ax = plt.subplots(figsize=(1.6 + 1.35 * table.shape[1], 1.2 + 0.55 * table.shape[0]), dpi=150)
    im = ax.imshow(table.to_numpy(dtype=float), cmap="Greys", norm=ratio_norm(table.to_numpy()), aspect="auto",
                   origin="lower")  # fmt: skip
    for i in range(table.shape[0]):
        for j in range(table.shape[1]):
            r = table.iat[i, j]
            if not np.isfinite(r):
                continue
            dark = _dark(im, r)
            ax.text(j, i, f"{r:.2g}×\n{who.iat[i, j]}", ha="center", va="center", fontsize=6.5,
                    color="white" if dark else "black")  # fmt: skip
            style = method_style(who.iat[i, j])
            ax.plot(j - 0.38, i + 0.3, marker=style["marker"], color=style["color"], mec="white" if dark else "black",
                    mew=0.5, ms=5, ls="none")  # fmt: skip
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
    read = (f"Each cell: the lowest {yardstick} of any private method at that m and ε over the non-private method's "
            "(1× = privacy costs nothing), and that method, its marker in the corner.")  # fmt: skip
    if yardstick == "superpopulation RMSE":
        read += (" The RMSE counts the full-data fit's own sampling error, so the ratio does not explode as m "
                 "approaches the number of rows.")  # fmt: skip
    finish(fig, paths, title=f"{title}: what privacy costs at each sample size and ε", caption=[read, how])


def benchmark_heatmap(summary: pd.DataFrame, paths: Sequence[str], *, delta, calibration: str, tuning: str,
                      reps) -> None:  # fmt: skip
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
    fig, axes = plt.subplots(1, len(epsilons) + 1, figsize=(width * len(epsilons) + 0.9, 1.6 + 0.3 * len(methods)),
                             dpi=150, gridspec_kw={"width_ratios": [width] * len(epsilons) + [0.12]})  # fmt: skip
    *panels, bar = axes
    for col, (ax, eps) in enumerate(zip(panels, epsilons, strict=True)):
        cells = top[top.epsilon == eps].pivot(index="method", columns="dataset", values="ratio_to_ols")
        cells = cells.reindex(index=methods, columns=datasets)
        im = ax.imshow(cells.to_numpy(dtype=float), cmap="Greys", norm=norm, aspect="auto")
        for i in range(cells.shape[0]):
            for j in range(cells.shape[1]):
                r = cells.iat[i, j]
                if np.isfinite(r):
                    ax.text(j, i, f"{r:.2g}", ha="center", va="center", fontsize=6,
                            color="white" if _dark(im, r) else "black")  # fmt: skip
        ax.set_xticks(range(len(datasets)), datasets, rotation=45, ha="right", fontsize=7)
        ax.set_yticks(range(len(methods)), [k if proven[k] else f"{k} †" for k in methods], fontsize=7)
        ax.tick_params(labelleft=col == 0)  # the rows are named once, on the left
        ax.set_title(f"ε = {eps:g}", fontsize=9)
        ax.set_xlabel("data set")
    ratio_colorbar(fig, im, None, "superpopulation RMSE / OLS's (same data set and m)", cax=bar)
    how = caption(epsilon="ε per panel", delta=delta, calibration=calibration, tuning=tuning, reps=reps)
    finish(fig, paths, title="Private regression on real data: each method's error over OLS's, per data set",
           caption=["At each data set's largest m; rows sorted by the median ratio over data sets. † not proven: an "
                    "unproven calibration or floating-point noise.", how])  # fmt: skip
