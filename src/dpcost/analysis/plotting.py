"""Figures: error curves readable in greyscale (marker and line style differ, not only colour)."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ..estimators.registry import METHODS  # noqa: E402

# the headline figure: every method of these groups, and the best of each of the others listed in _BEST_OF
_ALWAYS = ("baseline", "paper", "comparator")
_BEST_OF = ("wang", "new")

# every method gets its own marker (12: the housing analysis with both peers), so no two curves look alike in greyscale
_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p"]
_LINES = ["-", "--", "-.", ":"]
_COLOURS = ["#000000", "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#999999"]


def method_label(name: str) -> str:
    return METHODS[name].label if name in METHODS else name


def headline(summary: pd.DataFrame) -> list[str]:
    """The methods of the figure people look at: the non-private baselines, the Cost of Privacy papers' estimators
    and the comparators they name, and the best of Wang (2018)'s field and of the estimators beyond it — best by
    the mean over m of log(mean error), so that every m counts alike. Peers and the rest: the full figure."""
    groups = {k: (METHODS[k].group if k in METHODS else "peer") for k in summary["method"].unique()}
    chosen = [k for k, g in groups.items() if g in _ALWAYS]
    score = summary.assign(log=np.log(summary["mean"])).groupby("method")["log"].mean()
    for group in _BEST_OF:
        members = [k for k, g in groups.items() if g == group]
        if members:
            chosen.append(score[members].idxmin())
    return sorted(chosen)


def _draw(ax, summary: pd.DataFrame, *, bands: bool) -> None:
    for k, (method, df) in enumerate(summary.sort_values("m").groupby("method", sort=True)):
        marker, ls = _MARKERS[k % len(_MARKERS)], _LINES[k % len(_LINES)]
        colour = _COLOURS[k % len(_COLOURS)]
        ax.plot(df["m"], df["mean"], marker=marker, ls=ls, color=colour, label=method_label(method), ms=5)
        if bands:
            ax.fill_between(df["m"], df["q05"], df["q95"], color=colour, alpha=0.08, lw=0)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)


def error_curves(
    summary: pd.DataFrame,
    paths: Sequence[str],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    epsilon: float,
    delta,
    calibration: str = "paper",
    tuning: str | None = None,
    reference: tuple[float, str] | None = None,
    zoom_above: float = 10.0,
) -> None:
    """One log-log curve of the mean error per method, with its 5 %–95 % band; saved to every path in ``paths``.

    ``reference`` (value, label) draws a horizontal line, e.g. the error of the trivial estimate 0. When some mean
    error exceeds ``zoom_above`` × the reference (a peer orders of magnitude off), a second panel shows the range
    0.15–3 × the reference without bands, where the other curves can be told apart.
    """
    zoom = reference is not None and summary["mean"].max() > zoom_above * reference[0]
    fig, axes = plt.subplots(1, 2 if zoom else 1, figsize=(14.5 if zoom else 9.5, 4.8), dpi=150, squeeze=False)
    panels = [(axes[0, 0], True)] + ([(axes[0, 1], False)] if zoom else [])
    for ax, bands in panels:
        _draw(ax, summary, bands=bands)
        if reference is not None:
            ax.axhline(reference[0], color="#555555", ls=(0, (1, 3)), lw=1.2, label=reference[1])
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
    how = f"{calibration} calibration" + (f", {tuning} tuning" if tuning else "")
    sub = f"(ε = {epsilon}, δ = {delta}, {how}; bands: 5–95 % of repetitions)"
    axes[0, 0].set_title(f"{title}\n{sub}", fontsize=10)
    if zoom:
        ax = axes[0, 1]
        ax.set_ylim(0.15 * reference[0], 3 * reference[0])
        ax.set_title(f"the same between 0.15 and 3 × {reference[1]} (no bands)", fontsize=10)
    # outside the axes: with peers whose errors span 10⁻³ … 10⁶ there is no empty corner inside
    axes[0, -1].legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    for path in paths:
        fig.savefig(path)
    plt.close(fig)


def privacy_map_figure(ratios: pd.DataFrame, paths: Sequence[str], *, title: str, delta, calibration: str,
                       tuning: str) -> None:  # fmt: skip
    """Heat map of the best private method's error over the non-private error at each (m, ε), every cell labelled
    with the ratio and the method (readable in greyscale: the numbers carry the information, the shade repeats it)."""
    table = ratios.pivot(index="epsilon", columns="m", values="ratio").sort_index()
    who = ratios.pivot(index="epsilon", columns="m", values="best_private").reindex_like(table)
    fig, ax = plt.subplots(figsize=(1.6 + 1.35 * table.shape[1], 1.2 + 0.55 * table.shape[0]), dpi=150)
    values = np.log10(table.to_numpy(dtype=float))
    im = ax.imshow(values, cmap="Greys", vmin=0, vmax=max(1.0, float(np.nanmax(values))), aspect="auto",
                   origin="lower")  # fmt: skip
    for i in range(table.shape[0]):
        for j in range(table.shape[1]):
            r = table.iat[i, j]
            if not np.isfinite(r):
                continue
            dark = values[i, j] > 0.55 * im.get_clim()[1]
            ax.text(j, i, f"{r:.2g}×\n{who.iat[i, j]}", ha="center", va="center", fontsize=6.5,
                    color="white" if dark else "black")  # fmt: skip
    ax.set_xticks(range(table.shape[1]), [str(m) for m in table.columns])
    ax.set_yticks(range(table.shape[0]), [f"{e:g}" for e in table.index])
    ax.set_xlabel("subsample size m")
    ax.set_ylabel("ε")
    ax.set_title(f"{title}\nbest private error / non-private error (δ = {delta}, {calibration}, {tuning} tuning)",
                 fontsize=9)  # fmt: skip
    fig.colorbar(im, ax=ax, label="log10 ratio")
    fig.tight_layout()
    for path in paths:
        fig.savefig(path)
    plt.close(fig)


def attack_figure(summary: pd.DataFrame, paths: Sequence[str], *, title: str, xlabel: str, epsilon: float,
                  delta) -> None:  # fmt: skip
    """The score attack per method against m: AUC (left; 0.5 = guessing; the grey line is the ceiling (ε, δ)-DP
    puts on it) and TPR at FPR 5 % (right; 0.05 = guessing), mean over repetitions ± 2 standard errors; non-private
    methods solid, private ones dashed."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8), dpi=150)
    for k, (method, df) in enumerate(summary.sort_values("m").groupby("method", sort=True)):
        style = dict(marker=_MARKERS[k % len(_MARKERS)], color=_COLOURS[k % len(_COLOURS)], ms=5, capsize=2,
                     ls="--" if df["private"].iloc[0] else "-")  # fmt: skip
        for ax, col in zip(axes, ("auc", "tpr_fpr05"), strict=True):
            ax.errorbar(df["m"], df[col], yerr=2 * df[f"{col}_se"].fillna(0), label=method_label(method), **style)
    ceiling = summary.groupby("m")["auc_ceiling"].first()
    axes[0].plot(ceiling.index, ceiling.to_numpy(), color="#999999", lw=2.5, alpha=0.6,
                 label="largest AUC any (ε, δ(m))-DP release allows")  # fmt: skip
    for ax, chance, name in ((axes[0], 0.5, "AUC"), (axes[1], 0.05, "TPR at FPR 5 %")):
        ax.axhline(chance, color="#555555", ls=(0, (1, 3)), lw=1.2, label="guessing")
        ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(f"score attack: {name}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylim(0.4, 1.02)
    axes[1].set_ylim(-0.02, 1.02)
    fig.suptitle(f"{title}\n(private: dashed, ε = {epsilon}, δ = {delta}; non-private: solid; bars: ±2 s.e. over "
                 "repetitions)", fontsize=10)  # fmt: skip
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    for path in paths:
        fig.savefig(path)
    plt.close(fig)


def transfer_figure(table: pd.DataFrame, paths: Sequence[str], *, title: str, ylabel: str, delta: float,
                    calibration: str) -> None:  # fmt: skip
    """Wang & Gu (2020) Tables 2–3 as curves against ε: this run (left; mean ± sd over trials) and the paper's
    numbers (right), the same marker and colour per method in both panels; a non-private method is a horizontal
    dotted line, a release whose guarantee is not proven a dashed line labelled so."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), dpi=150, sharey=True)
    order = list(dict.fromkeys(table["method"]))
    for k, method in enumerate(order):
        g = table[table["method"] == method].sort_values("epsilon")
        style = dict(marker=_MARKERS[k % len(_MARKERS)], color=_COLOURS[k % len(_COLOURS)], ms=5)
        for ax, mean, sd in ((axes[0], "mean", "sd"), (axes[1], "paper_mean", "paper_sd")):
            if g[mean].isna().all():
                continue
            label = method_label(method)
            if not g["private"].iloc[0]:
                ax.axhline(float(g[mean].dropna().iloc[0]), color=style["color"], ls=":", lw=1.4, label=label)
                continue
            proven = ax is axes[1] or g["proven"].fillna(True).astype(bool).all()
            label += "" if proven else " (NOT PROVEN: see the ledger)"
            ax.errorbar(g["epsilon"], g[mean], yerr=g[sd].fillna(0), ls="-" if proven else "--", capsize=2,
                        label=label, **style)  # fmt: skip
    axes[0].set_title(f"this run ({calibration} calibration, δ = {delta:g}; bars: ±1 sd over trials)", fontsize=9)
    axes[1].set_title("Wang & Gu (2020), as published (their DPSL-KT is our 'as printed')", fontsize=9)
    for ax in axes:
        ax.set_xlabel("ε")
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, frameon=False)
    axes[0].set_ylabel(ylabel)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    for path in paths:
        fig.savefig(path)
    plt.close(fig)
