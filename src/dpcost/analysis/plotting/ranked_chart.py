"""The benchmark's ranked chart (``benchmark.png``): per private method, across the data sets at each one's largest
m, the median superpopulation RMSE over OLS's and the median held-out R², each with its spread, methods sorted by
the median ratio; one row of two panels per ε."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .layout import finish, log_axis, plt
from .style import caption, method_label, method_style

R2_FLOOR = -1.0  # the R² panel's left edge: a method worse than predicting the mean by more runs off it


def spread(values: pd.Series) -> dict:
    """Median, quartiles and range of one method's values over the data sets."""
    v = values.dropna().astype(float)
    return {
        "median": v.median(),
        "q25": v.quantile(0.25),
        "q75": v.quantile(0.75),
        "min": v.min(),
        "max": v.max(),
        "n": len(v),
    }


def ranking(summary: pd.DataFrame, epsilon: float) -> pd.DataFrame:
    """Per private method at ``epsilon``, at each data set's largest m: :func:`spread` of ``ratio_to_ols`` (columns
    ratio_*) and of ``r2`` (r2_*), and whether every data set's plans are proven; sorted by the median ratio."""
    top = summary[summary.private & (summary.m == summary.groupby("dataset").m.transform("max"))]
    rows = []
    for method, g in top[top.epsilon == epsilon].groupby("method"):
        ratio, r2 = spread(g["ratio_to_ols"]), spread(g["r2"])
        rows.append(
            {
                "method": method,
                **{f"ratio_{k}": v for k, v in ratio.items()},
                **{f"r2_{k}": v for k, v in r2.items()},
                "proven": bool(g["proven"].all()),
            }
        )
    return pd.DataFrame(rows).sort_values(["ratio_median", "method"]).reset_index(drop=True)


def _whisker(ax, y: float, s: dict, prefix: str, style: dict) -> None:
    """Range (thin), interquartile range (thick) and median (the method's marker) on one row."""
    ax.plot([s[f"{prefix}_min"], s[f"{prefix}_max"]], [y, y], color=style["color"], lw=1, alpha=0.8)
    ax.plot(
        [s[f"{prefix}_q25"], s[f"{prefix}_q75"]],
        [y, y],
        color=style["color"],
        lw=4.5,
        alpha=0.45,
        solid_capstyle="butt",
    )
    ax.plot(
        [s[f"{prefix}_median"]],
        [y],
        marker=style["marker"],
        color=style["color"],
        mec="black",
        mew=0.4,
        ms=6,
        ls="none",
    )


def benchmark_figure(
    summary: pd.DataFrame, paths: Sequence[str], *, delta, calibration: str, tuning: str, reps
) -> None:
    """The ranked chart of the benchmark (see the module); ``reps``: the repetitions behind each data set's value."""
    top = summary[summary.m == summary.groupby("dataset").m.transform("max")]
    epsilons = sorted(top.loc[top.private, "epsilon"].unique())
    tables = [ranking(summary, eps) for eps in epsilons]
    n_rows = max(len(t) for t in tables)
    ols_r2 = top.loc[top.method == "ols", "r2"].median() if (top.method == "ols").any() else np.nan
    fig, axes = plt.subplots(
        len(epsilons),
        2,
        figsize=(10.5, (0.9 + 0.26 * n_rows) * len(epsilons)),
        dpi=150,
        squeeze=False,
        gridspec_kw={"width_ratios": [1.25, 1]},
    )
    off = []
    for (left, right), eps, table in zip(axes, epsilons, tables, strict=True):
        right.sharey(left)
        for i, r in table.iterrows():
            style = method_style(r["method"])
            _whisker(left, i, r, "ratio", style)
            if np.isfinite(r["r2_median"]):
                _whisker(right, i, r, "r2", style)
            if r["r2_median"] < R2_FLOOR:
                off.append(f"{r['method']} (ε = {eps:g})")
        names = [method_label(k) + ("" if ok else " †") for k, ok in zip(table["method"], table["proven"], strict=True)]
        left.set_yticks(range(len(table)), names, fontsize=7)
        right.tick_params(labelleft=False)
        left.set_ylim(len(table) - 0.5, -0.5)  # the best at the top
        left.set_xscale("log")
        log_axis(left.xaxis)
        left.axvline(1.0, color="#555555", lw=1.0)
        left.axvline(2.0, color="#555555", ls=(0, (1, 3)), lw=1.0)
        left.set_xlabel("superpopulation RMSE / OLS's (×, log)")
        left.set_title(f"ε = {eps:g}: RMSE over OLS's", fontsize=9)
        right.axvline(0.0, color="#555555", ls=(0, (1, 3)), lw=1.0)
        if np.isfinite(ols_r2):
            right.axvline(ols_r2, color="#555555", lw=1.0)
        low = float(np.nanmin(table["r2_min"])) if table["r2_min"].notna().any() else 0.0
        right.set_xlim(max(R2_FLOOR, low) - 0.05, 1.03)
        right.set_xlabel("held-out R²")
        right.set_title(f"ε = {eps:g}: held-out R²", fontsize=9)
        for ax in (left, right):
            ax.grid(True, axis="x", which="both", alpha=0.3)
    datasets = top.dataset.nunique()
    read = (
        f"Each private method over the {datasets} data sets, at each data set's largest m: the marker is the "
        "median, the thick bar the interquartile range, the thin line the range; methods sorted by their median "
        "ratio (best at the top). Left: superpopulation RMSE over OLS's on the same data set and m, which counts "
        "the full-data fit's own sampling error (solid line: OLS, "
        "dotted: 2×); right: R² on the held-out rows (1: perfect, 0: predicting the mean; solid line: OLS's "
        "median, dotted: 0). † not proven: an unproven calibration or floating-point noise."
    )
    notes = [read, caption(epsilon="ε per row", delta=delta, calibration=calibration, tuning=tuning, reps=reps)]
    if off:
        notes.append(f"Median R² below {R2_FLOOR:g}, off the right panel: {', '.join(off)}.")
    finish(
        fig,
        paths,
        title="Private regression on real data: how close each method comes to OLS, across data sets",
        caption=notes,
    )
