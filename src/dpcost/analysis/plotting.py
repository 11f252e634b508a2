"""Figures: one style per method across all of them (:func:`method_style`; marker and line style differ, not only
colour, so they read in greyscale), and a caption line in each stating ε, δ, calibration, tuning and repetitions."""

from __future__ import annotations

import textwrap
import zlib
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib import ticker  # noqa: E402

from ..estimators.registry import METHODS  # noqa: E402

# the headline figure: every method of these groups, and the best of each of the others listed in _BEST_OF
_ALWAYS = ("baseline", "paper", "comparator")
_BEST_OF = ("wang", "new")
HEADLINE_NOTE = (
    "shown: the non-private baselines, the Cost of Privacy papers' estimators and the comparators they "
    "name, the best of Wang (2018)'s field and of the new estimators, and the best method private from end to end "
    "(tuning none or private: no constant chosen by looking at the data) (every method: error_curves_all)"
)

# One style per method in every figure (error curves, attack, privacy map, LIBSVM, simulation), fixed by its place in
# the registry: 12 markers × 4 line styles give every registry method its own (marker, line) pair, so two curves never
# look alike in greyscale; the colour (Okabe–Ito, colour-blind safe) repeats the distinction on screen.
_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p"]
_LINES = ["-", "--", "-.", ":"]
_COLOURS = ["#000000", "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#999999"]
_ORDER = {name: k for k, name in enumerate(METHODS)}


def method_style(name: str) -> dict:
    """``color``, ``marker`` and ``ls`` of a method, the same in every figure: from its index k in the registry
    (marker k mod 12, line style k div 12, colour k + 3·(k div 12) mod 8: shifted per block of 12 so that a family's
    first methods and those 12 places later differ in colour too). A name outside the registry gets a fixed style
    from a checksum of the name (stable across runs, unlike ``hash``)."""
    k = _ORDER.get(name, len(_ORDER) + zlib.crc32(name.encode()) % 48)
    block = k // len(_MARKERS)
    return {"color": _COLOURS[(k + 3 * block) % len(_COLOURS)], "marker": _MARKERS[k % len(_MARKERS)],
            "ls": _LINES[block % len(_LINES)]}  # fmt: skip


def caption(*, epsilon, delta, calibration: str, tuning: str | None, reps) -> str:
    """The line every figure carries: (ε, δ), calibration, tuning mode and repetitions. ``epsilon``: a value, or a
    phrase beginning with ε for a figure whose axis carries it ("ε per row")."""
    how = f"{calibration} calibration" + (f", {tuning} tuning" if tuning else "")
    eps = epsilon if str(epsilon).startswith("ε") else f"ε = {epsilon}"
    return f"{eps}, δ = {delta}, {how}, {reps} repetitions"


def repetitions(n_reps: pd.Series) -> str:
    """The number of repetitions behind a table's rows: one number, or its range when rows differ."""
    lo, hi = int(n_reps.min()), int(n_reps.max())
    return str(lo) if lo == hi else f"{lo}–{hi}"


def method_label(name: str) -> str:
    return METHODS[name].label if name in METHODS else name


def headline(summary: pd.DataFrame) -> list[str]:
    """The methods of the figure people look at: the non-private baselines, the Cost of Privacy papers' estimators
    and the comparators they name, the best of Wang (2018)'s field and of the estimators beyond it whose constants
    were chosen (tuned), and the best proven method private from end to end — best by the mean over m of log(mean
    error), so that every m counts alike. Peers and the rest: the full figure."""
    groups = {k: (METHODS[k].group if k in METHODS else "peer") for k in summary["method"].unique()}
    chosen = [k for k, g in groups.items() if g in _ALWAYS]
    score = summary.assign(log=np.log(summary["mean"])).groupby("method")["log"].mean()
    ends = list(summary[summary.end_to_end].method.unique()) if "end_to_end" in summary else []
    for group in _BEST_OF:
        # the best tuned member (one whose constants were chosen on data), so that it stands beside the best end to
        # end even when a tuning-free method of the same group is best overall
        members = [k for k, g in groups.items() if g == group]
        tuned = [k for k in members if k not in ends] or members
        if tuned:
            chosen.append(score[tuned].idxmin())
    if ends:  # beside the best tuned ones, the best whose constants looked at no data: what tuning on data buys
        chosen.append(score[ends].idxmin())
    return sorted(set(chosen))


def heavy_tails(summary: pd.DataFrame, ratio: float = 3.0) -> str | None:
    """A sentence naming every curve whose mean is more than ``ratio`` × its median at some m (a spike made by a
    few repetitions, e.g. SSP without ridge inverting a noisy X'X that is near singular at small m), or None."""
    if "median" not in summary:
        return None
    odd = summary[summary["mean"] > ratio * summary["median"]]
    if odd.empty:
        return None
    worst = odd.loc[(odd["mean"] / odd["median"]).groupby(odd["method"]).idxmax()]
    parts = [
        f"{r.method} at m = {int(r.m)}: mean {r['mean'] / r['median']:.0f}× its median" for _, r in worst.iterrows()
    ]
    return (
        "heavy tails — a few repetitions make the spike (" + "; ".join(parts) + "): the mean is shown, the "
        "median is in summary.csv (docs/results.md)"
    )


def _draw(ax, summary: pd.DataFrame, *, bands: bool) -> None:
    for method, df in summary.sort_values("m").groupby("method", sort=True):
        style = method_style(method)
        mode = df["tuning_mode"].iloc[0] if "tuning_mode" in df else None
        end_to_end = bool(df["end_to_end"].iloc[0]) if "end_to_end" in df else False
        label = method_label(method) + (f" [tuning {mode}: private end to end]" if end_to_end else "")
        ax.plot(df["m"], df["mean"], label=label, ms=5, **style)
        if bands:
            ax.fill_between(df["m"], df["q05"], df["q95"], color=style["color"], alpha=0.08, lw=0)
    log_m_axis(ax)
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)


def log_m_axis(ax) -> None:
    """A log axis of sample sizes labelled 1, 2, 5 × 10^k in plain numbers: over one decade (m = 2,000 … 20,000)
    matplotlib's default labels every minor tick as 2×10³, 3×10³, …, and they overlap."""
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())


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
    note: str | None = None,
) -> None:
    """One log-log curve of the mean error per method, with its 5 %–95 % band; saved to every path in ``paths``.
    The title carries (ε, δ), calibration, tuning and the repetitions (``summary``'s ``n_reps``), and ``note``
    (why these methods are shown, or what explains an odd curve) on a line of its own.

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
    reps = repetitions(summary["n_reps"])
    sub = f"({caption(epsilon=epsilon, delta=delta, calibration=calibration, tuning=tuning, reps=reps)}; bands: 5–95 %)"
    # across the whole figure: the note can be longer than the first panel is wide
    fig.suptitle("\n".join([title, sub, *([textwrap.fill(note, 150 if zoom else 105)] if note else [])]), fontsize=9)
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
                       tuning: str, reps) -> None:  # fmt: skip
    """Heat map of the best private method's error over the non-private error at each (m, ε), every cell labelled
    with the ratio and the method, and the method's marker (:func:`method_style`) in its corner (readable in
    greyscale: the numbers carry the information, the shade repeats it). ``reps``: the map's repetitions."""
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
            style = method_style(who.iat[i, j])
            ax.plot(j - 0.38, i + 0.3, marker=style["marker"], color=style["color"], mec="white" if dark else "black",
                    mew=0.5, ms=5, ls="none")  # fmt: skip
    ax.set_xticks(range(table.shape[1]), [str(m) for m in table.columns])
    ax.set_yticks(range(table.shape[0]), [f"{e:g}" for e in table.index])
    ax.set_xlabel("subsample size m")
    ax.set_ylabel("ε")
    how = caption(epsilon="ε per row", delta=delta, calibration=calibration, tuning=tuning, reps=reps)
    ax.set_title(f"{title}\nbest private error / non-private error\n({how})", fontsize=9)
    fig.colorbar(im, ax=ax, label="log10 ratio")
    fig.tight_layout()
    for path in paths:
        fig.savefig(path)
    plt.close(fig)


def untraceable(summary: pd.DataFrame) -> bool:
    """True when no method, the non-private ones included, is told apart from guessing at any m: every mean AUC
    within 2 standard errors of 0.5, the standard error being the larger of the repetitions' and the one guessing
    gives (Mann–Whitney's null variance (n₁ + n₂ + 1)/(12 n₁ n₂), n₁ = n₂ = n_candidates, over n_reps repetitions:
    with 2 repetitions their own spread is no estimate)."""
    k = summary["n_candidates"].astype(float)
    null_se = np.sqrt((2 * k + 1) / (12 * k**2) / summary["n_reps"])
    reach = 2 * np.maximum(summary["auc_se"].fillna(0), null_se)
    return bool(((summary["auc"] - 0.5).abs() <= reach).all())


def attack_figure(summary: pd.DataFrame, paths: Sequence[str], *, title: str, xlabel: str, epsilon: float,
                  delta, calibration: str, tuning: str) -> None:  # fmt: skip
    """The score attack per method against m: AUC (left; 0.5 = guessing; the grey line is the ceiling (ε, δ)-DP
    puts on it) and TPR at FPR 5 % (right; 0.05 = guessing), mean over repetitions ± 2 standard errors, each method
    in its :func:`method_style`. The caption says how to read it, and when nothing is traceable (:func:`untraceable`)
    that the attack sees nothing of any method at these m, which bounds nothing."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.2), dpi=150)
    for method, df in summary.sort_values("m").groupby("method", sort=True):
        style = dict(ms=5, capsize=2, **method_style(method))
        for ax, col in zip(axes, ("auc", "tpr_fpr05"), strict=True):
            ax.errorbar(df["m"], df[col], yerr=2 * df[f"{col}_se"].fillna(0), label=method_label(method), **style)
    ceiling = summary.groupby("m")["auc_ceiling"].first()
    axes[0].plot(ceiling.index, ceiling.to_numpy(), color="#999999", lw=2.5, alpha=0.6,
                 label="largest AUC any (ε, δ(m))-DP release allows")  # fmt: skip
    for ax, chance, name in ((axes[0], 0.5, "AUC"), (axes[1], 0.05, "TPR at FPR 5 %")):
        ax.axhline(chance, color="#555555", ls=(0, (1, 3)), lw=1.2, label="guessing")
        log_m_axis(ax)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(f"score attack: {name}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylim(0.4, 1.02)
    axes[1].set_ylim(-0.02, 1.02)
    how = caption(epsilon=epsilon, delta=delta, calibration=calibration, tuning=tuning,
                  reps=repetitions(summary["n_reps"]))  # fmt: skip
    read = ("How to read: a curve above 'guessing' means the attack tells members of the subsample from other "
            "records; a private curve can never rise above the grey ceiling.")  # fmt: skip
    if untraceable(summary):
        read += (" Here every method, the non-private one included, sits at guessing (AUC within 2 s.e. of 0.5): "
                 "the attack cannot see these estimates at these m, so the figure shows no leak and proves no "
                 "privacy; the guarantee is the ledger's.")  # fmt: skip
    fig.suptitle(f"{title}\n({how}; bars: ±2 s.e. over repetitions)\n{textwrap.fill(read, 150)}", fontsize=9)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    for path in paths:
        fig.savefig(path)
    plt.close(fig)


def transfer_figure(table: pd.DataFrame, paths: Sequence[str], *, title: str, ylabel: str, delta: float,
                    calibration: str) -> None:  # fmt: skip
    """Wang & Gu (2020) Tables 2–3 as curves against ε: this run (left; mean ± sd over trials) and the paper's
    numbers (right), each method in its :func:`method_style` colour and marker; a non-private method is a horizontal
    dotted line, a release whose guarantee is not proven a dashed line labelled so. The constants are the config's
    (fixed tuning)."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), dpi=150, sharey=True)
    for method in dict.fromkeys(table["method"]):
        g = table[table["method"] == method].sort_values("epsilon")
        style = {k: v for k, v in method_style(method).items() if k != "ls"} | {"ms": 5}  # ls: proven or not
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
    ran = table.loc[table["trials"] > 0, "trials"]
    how = caption(epsilon="ε on the x axis", delta=f"{delta:g}", calibration=calibration, tuning="fixed",
                  reps=repetitions(ran) if len(ran) else 0)  # fmt: skip
    axes[0].set_title(f"this run ({how} (trials); bars: ±1 sd)", fontsize=9)
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


def benchmark_figure(summary: pd.DataFrame, paths: Sequence[str], *, delta, calibration: str, tuning: str,
                     reps) -> None:  # fmt: skip
    """The benchmark at each data set's largest m: one panel per ε, a row per private method and a column per data
    set, each cell its mean error over OLS's (the number printed; the shade, log scale, repeats it for greyscale).
    ``reps``: the repetitions behind each cell."""
    top = summary[summary.private & (summary.m == summary.groupby("dataset").m.transform("max"))]
    epsilons = sorted(top.epsilon.unique())
    methods = top.groupby("method").ratio_to_ols.median().sort_values().index.tolist()
    proven = top.groupby("method").proven.all()
    datasets = sorted(top.dataset.unique())
    vmax = max(1.0, float(np.log10(top.ratio_to_ols.clip(lower=1).max())))
    width = 2.2 + 0.62 * len(datasets)
    fig, axes = plt.subplots(1, len(epsilons), figsize=(width * len(epsilons), 1.6 + 0.34 * len(methods)), dpi=150,
                             squeeze=False, sharey=True)  # fmt: skip
    for ax, eps in zip(axes[0], epsilons, strict=True):
        cells = top[top.epsilon == eps].pivot(index="method", columns="dataset", values="ratio_to_ols")
        cells = cells.reindex(index=methods, columns=datasets)
        values = np.log10(cells.to_numpy(dtype=float))
        im = ax.imshow(values, cmap="Greys", vmin=0, vmax=vmax, aspect="auto")
        for i in range(cells.shape[0]):
            for j in range(cells.shape[1]):
                r = cells.iat[i, j]
                if np.isfinite(r):
                    dark = values[i, j] > 0.55 * vmax
                    ax.text(j, i, f"{r:.2g}", ha="center", va="center", fontsize=6,
                            color="white" if dark else "black")  # fmt: skip
        ax.set_xticks(range(len(datasets)), datasets, rotation=45, ha="right", fontsize=7)
        ax.set_yticks(range(len(methods)), [k if proven[k] else f"{k} †" for k in methods], fontsize=7)
        ax.set_title(f"ε = {eps:g}", fontsize=9)
    how = caption(epsilon="ε per panel", delta=delta, calibration=calibration, tuning=tuning, reps=reps)
    fig.suptitle(f"Private regression on real data: mean error / OLS's at each data set's largest m\n({how}; "
                 "† not proven: an unproven calibration or floating-point noise)", fontsize=9)  # fmt: skip
    fig.colorbar(im, ax=axes[0].tolist(), label="log10 ratio", shrink=0.8)
    for path in paths:
        fig.savefig(path, bbox_inches="tight")
    plt.close(fig)
