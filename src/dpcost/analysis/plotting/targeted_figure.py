"""The targeted attack's figure (``targeted.png``): for the rows of highest leverage, how well the LiRA-style test
tells whether the row was in the data — OLS against each private method — with the ceiling (ε, δ)-DP puts on it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .curves import PANEL_CURVES
from .layout import finish, plt
from .style import legend_label, method_style


def shown_methods(table: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(shown, left out): OLS first, then the private methods in the table's order, at most :data:`PANEL_CURVES`."""
    names = list(dict.fromkeys(table.method))
    names = ["ols"] * ("ols" in names) + [k for k in names if k != "ols"]
    return names[:PANEL_CURVES], names[PANEL_CURVES:]


def targeted_figure(table: pd.DataFrame, paths: Sequence[str], *, title: str, epsilon, delta: str) -> None:
    """One panel per m: for every top-leverage target (x, labelled by row and leverage) each method's AUC ± 2 s.e.
    (0.5: guessing, dotted; 1: the row is given away), and the grey ceiling no (ε, δ(m))-DP release can pass.
    ``table``: targeted.csv."""
    top = table[table.kind == "top"] if (table.kind == "top").any() else table
    methods, left = shown_methods(top)
    ms = sorted(top.m.unique())
    fig, axes = plt.subplots(
        1, max(len(ms), 1), figsize=(4.6 * max(len(ms), 1), 4.0), dpi=150, squeeze=False, sharey=True
    )
    handles, seen = [], set()
    width = 0.8 / max(len(methods), 1)
    for ax, m in zip(axes[0], ms, strict=False):
        cell = top[top.m == m]
        rows = list(dict.fromkeys(cell.sort_values("leverage", ascending=False).target))
        ceiling = cell.auc_ceiling.dropna()
        if len(ceiling):
            line = ax.axhline(
                float(ceiling.iloc[0]),
                color="#999999",
                lw=2.5,
                alpha=0.6,
                label="largest AUC any (ε, δ(m))-DP release allows",
            )
            if "ceiling" not in seen:
                handles.append(line)
                seen.add("ceiling")
        guess = ax.axhline(0.5, color="#555555", ls=(0, (1, 3)), lw=1.2, label="guessing")
        for j, name in enumerate(methods):
            df = cell[cell.method == name].set_index("target").reindex(rows)
            x = np.arange(len(rows)) + (j - (len(methods) - 1) / 2) * width
            style = method_style(name)
            bars = ax.errorbar(
                x,
                df.auc,
                yerr=2 * df.auc_se.fillna(0),
                ls="none",
                marker=style["marker"],
                color=style["color"],
                ms=6,
                capsize=2,
                label=legend_label(name),
            )
            if name not in seen:
                handles.append(bars.lines[0])
                bars.lines[0].set_label(bars.get_label())
                seen.add(name)
        lev = cell.groupby("target").leverage.first()
        ax.set_xticks(np.arange(len(rows)), [f"row {t}\nleverage {lev[t]:.3g}" for t in rows], fontsize=8)
        ax.set_title(f"m = {m:,}", fontsize=10)
        ax.set_ylim(0.3, 1.05)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0][0].set_ylabel("attack AUC (0.5: guessing; 1: row given away)")
    handles.append(guess)
    read = (
        "How to read: each marker is how well an attacker who knows the population, not the sample, tells "
        "whether this one row was in the data (LiRA-style test). OLS gives heavy rows away; no private method "
        "can rise above the grey ceiling, and reaching it is not required."
    )
    how = (
        f"Privacy: ε = {epsilon}, δ = {delta}; the rows of highest leverage; bars ±2 s.e.; every method fitted "
        "with an intercept column."
    )
    how += f" Not shown: {', '.join(left)} (targeted.csv)." if left else ""
    finish(fig, paths, title=title, caption=[read, how], legend=(handles, [h.get_label() for h in handles]))


def benchmark_targeted_figure(summary: pd.DataFrame, paths: Sequence[str], *, delta: str) -> None:
    """The benchmark's targeted attacks (results/benchmark/targeted.png): one panel per ε, each data set's
    top-leverage row at x = its leverage over the table's mean (log), OLS's AUC and each private method's (±2 s.e.),
    and a grey dash at each data set's ceiling, the largest AUC an (ε, δ(m))-DP release allows at its m.
    ``summary``: targeted.csv (:func:`dpcost.analysis.benchmark.summarize_targeted`)."""
    eps = sorted(summary.epsilon.dropna().unique()) or [np.nan]
    ols = summary[summary.method == "ols"]
    methods, left = shown_methods(summary)
    fig, axes = plt.subplots(1, len(eps), figsize=(4.4 * len(eps), 4.2), dpi=150, squeeze=False, sharey=True)
    handles = {}
    for ax, e in zip(axes[0], eps, strict=True):
        cell = summary[summary.epsilon == e]
        ceil = cell.groupby("dataset")[["leverage_ratio", "auc_ceiling"]].first()
        if len(ceil):
            handles["ceiling"] = ax.plot(
                ceil.leverage_ratio,
                ceil.auc_ceiling,
                ls="none",
                marker="_",
                ms=18,
                mew=3,
                color="#999999",
                alpha=0.7,
                label="largest AUC any (ε, δ(m))-DP release allows",
            )[0]
        handles["guess"] = ax.axhline(0.5, color="#555555", ls=(0, (1, 3)), lw=1.2, label="guessing")
        for j, name in enumerate(methods):
            df = ols if name == "ols" else cell[cell.method == name]
            shift = 1.06 ** (j - (len(methods) - 1) / 2)  # side by side on the log axis
            style = method_style(name)
            bars = ax.errorbar(
                df.leverage_ratio * shift,
                df.auc,
                yerr=2 * df.auc_se.fillna(0),
                ls="none",
                marker=style["marker"],
                color=style["color"],
                ms=5,
                capsize=2,
            )
            handles.setdefault(name, bars.lines[0]).set_label(legend_label(name))
        for _, r in ols.iterrows():
            ax.annotate(
                r.dataset,
                (r.leverage_ratio, r.auc),
                xytext=(3, 4),
                textcoords="offset points",
                fontsize=6,
                rotation=30,
                color="#333333",
            )
        ax.set_xscale("log")
        ax.set_title(f"ε = {e:g}" if np.isfinite(e) else "", fontsize=10)
        ax.set_xlabel("top row's leverage ÷ the table's mean (d + 1)/n")
        ax.set_ylim(0.3, 1.05)
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel("attack AUC on the top-leverage row")
    read = (
        "How to read: each marker is one table's row of highest leverage; the AUC says how well an attacker who "
        "knows the population, not the sample, tells whether that row was in the data. OLS (the same in every "
        "panel) gives heavy rows away and sits near 0.5 on tables without one; no private method can rise "
        "above its grey ceiling."
    )
    how = f"Each table at its largest benchmark m; δ = {delta}; bars ±2 s.e.; every method fitted with an intercept."
    how += f" Not shown: {', '.join(left)} (targeted.csv)." if left else ""
    order = [h for k, h in handles.items() if k not in ("ceiling", "guess")] + [
        handles[k] for k in ("ceiling", "guess") if k in handles
    ]
    finish(
        fig,
        paths,
        title="Real-data benchmark: can an attacker tell whether a table's heaviest row was used?",
        caption=[read, how],
        legend=(order, [h.get_label() for h in order]),
    )
