"""The figure of the private confidence intervals (``inference.png``): per method, the coverage of the full-data OLS
coefficient against m, in a band around the nominal level, and the width over the non-private superpopulation OLS
interval's (HC3 without the finite-population correction, the yardstick of every cost) — at most
:data:`PANEL_CURVES` curves a panel, a row of two panels per group of methods."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .curves import PANEL_CURVES
from .layout import finish, log_axis, log_m_axis, plt
from .style import LEGEND_WIDTH, caption, legend_label, method_style, repetitions

OLS = ("ols", "hc3")  # the reference curve of the coverage panels
# a curve with a coverage below 0.90 by more than 2 s.e. at some m (inference.csv's ``undercovers``): hollow markers
# at those m, and this in its legend entry — never silently
UNDERCOVERS = "[undercovers: bias]"
FADED = 0.35  # the alpha of an under-covering curve's width: drawn apart from the intervals that cover
FLOOR_LABEL = "theory's floor on the width: sqrt(1 + d log(1/delta)/(m eps^2)), the minimax rate with constant 1"


def _refused(summary: pd.DataFrame) -> dict[str, str]:
    """Per method whose interval job made no interval at some m (inference.csv's row without m, its note "no
    interval at m = …: why; …"), those m for its legend entry: "[no interval at m = 200, 2,000]"."""
    out = {}
    for name, note in summary.loc[summary.m.isna(), ["method", "note"]].itertuples(index=False):
        if isinstance(note, str) and note.startswith("no interval at m = "):
            ms = [int(m) for m in re.findall(r"m = (\d+): ", note)]
            out[name] = "[no interval at m = " + ", ".join(f"{m:,}" for m in ms) + "]"
    return out


def _flagged(label: str, flags: Sequence[str]) -> str:
    """The legend entry with its flags after its last line, or on a line of their own where that would overflow."""
    tail = " ".join(flags)
    if not tail:
        return label
    last = label.rsplit("\n", 1)[-1]
    return f"{label} {tail}" if len(last) + 1 + len(tail) <= LEGEND_WIDTH else f"{label}\n   {tail}"


def _groups(methods: Sequence[str]) -> list[list[str]]:
    """The private methods in rows of at most PANEL_CURVES − 1 (the OLS reference is every coverage panel's too)."""
    if not methods:
        return [[]]  # the reference alone
    rows = -(-len(methods) // (PANEL_CURVES - 1))
    size = -(-len(methods) // rows)
    return [list(methods[i : i + size]) for i in range(0, len(methods), size)]


def inference_figure(
    summary: pd.DataFrame,
    paths: Sequence[str],
    *,
    title: str,
    xlabel: str,
    epsilon,
    delta,
    calibration: str,
    tuning: str,
) -> None:
    """Left: coverage against m (the mean over coefficients of each coefficient's coverage), the nominal level
    dashed, in the band ± 2 Monte Carlo s.e. that a procedure of exact coverage stays in; the OLS (HC3, FPC)
    reference in grey. Right: theory's floor (:func:`~dpcost.analysis.intervals.theory_floor`, dotted) and the median
    over coefficients of the width over the superpopulation OLS (HC3) interval's
    (``width_ratio_super``; log scale; 1: as narrow as OLS). Not over the FPC'd interval's (``width_ratio``): the
    correction √(1 − m/n) shrinks OLS's interval ×0.18 at m = 20,000 of 20,640, so every ratio over it climbs
    there for a reason unrelated to privacy; a summary without superpopulation rows falls back to it, said on the
    axis. Where a curve under-covers (some coefficient below 0.90 by more than 2 s.e. at that m) its
    markers are hollow, and its legend entry says :data:`UNDERCOVERS`; where the procedure made no interval at
    some m (refused: the blocks route's blocks too small) its entry names those m. ``summary``: inference.csv
    (:func:`dpcost.analysis.intervals.summarize`)."""
    from ..intervals import pooled

    cells = pooled(summary)
    d = int(summary.coefficient.nunique()) if "coefficient" in summary else 0
    ms = np.unique(cells.m.dropna()).astype(int)
    refused = _refused(summary)
    private = cells[cells.method != "ols"]
    ref = cells[(cells.method == OLS[0]) & (cells.route == OLS[1])]
    methods = list(dict.fromkeys(private.sort_values("method").method))
    groups = _groups(methods)
    width_col, yardstick = ("width_ratio_super", "superpopulation OLS (HC3)")
    if not private.width_ratio_super.notna().any():
        width_col, yardstick = "width_ratio", "OLS (HC3, FPC)"
    fig, axes = plt.subplots(len(groups), 2, figsize=(10, 3.9 * len(groups)), dpi=150, squeeze=False)
    level = float(cells.level.iloc[0]) if len(cells) else 0.95
    reps = int(cells.n_reps.min()) if len(cells) else 0
    band = 2 * np.sqrt(level * (1 - level) / max(reps, 1))
    handles, seen = [], set()
    for row, names in zip(axes, groups, strict=True):
        cov_ax, width_ax = row
        _references(cov_ax, width_ax, ref, level, band, (d, ms, epsilon, delta), handles, seen)
        for name in names:
            df = private[private.method == name].sort_values("m")
            _method_curves(cov_ax, width_ax, df, name, width_col, refused.get(name), handles, seen)
        low = max(0.0, min(level - 2 * band, float(cells.coverage.min()) - 0.05)) if len(cells) else 0
        _axes(row, low, yardstick, xlabel)
    how = caption(
        epsilon=epsilon,
        delta=delta,
        calibration=calibration,
        tuning=tuning,
        reps=repetitions(cells.n_reps) if len(cells) else 0,
    )
    read = _how_to_read(level, reps, yardstick, bool(refused))
    finish(fig, paths, title=title, caption=[read, how], legend=(handles, [h.get_label() for h in handles]))


def _references(cov_ax, width_ax, ref: pd.DataFrame, level: float, band: float, floor_at, handles, seen) -> None:
    """What a row's panels compare against: the nominal level and its band and the OLS reference (coverage), the
    OLS width and theory's floor at ``floor_at`` = (d, the m, ε, δ) (width); each added to the legend once."""
    from ...dp.delta import resolve_delta
    from ..intervals import theory_floor

    d, ms, epsilon, delta = floor_at
    cov_ax.axhspan(level - band, min(level + band, 1.0), color="#999999", alpha=0.18, lw=0)
    cov_ax.axhline(level, color="#555555", ls="--", lw=1.0)
    if len(ref):
        # the reference's under-coverage is its variance estimate's (HC3 on heavy rows), not a bias: said so
        flag = " [undercovers]" if ref.undercovers.any() else ""
        label = f"OLS, HC3 with finite-population correction (non-private reference){flag}"
        line = cov_ax.plot(
            ref.m, ref.coverage, color="#777777", lw=2.2, alpha=0.7, ls="--" if flag else "-", label=label
        )
        if "ols" not in seen:
            handles += line
            seen.add("ols")
    width_ax.axhline(1.0, color="#777777", lw=2.2, alpha=0.7)
    if d and len(ms):  # what theory says privacy must cost, beside what the methods cost
        floor = [float(theory_floor(d, epsilon, resolve_delta(delta, m), m)) for m in ms]
        line = width_ax.plot(ms, floor, color="black", ls=":", lw=1.6, label=FLOOR_LABEL, zorder=4)
        if "floor" not in seen:
            handles += line
            seen.add("floor")


def _method_curves(cov_ax, width_ax, df: pd.DataFrame, name: str, width_col: str, refused, handles, seen) -> None:
    """One method's coverage and width curves, hollow markers where it under-covers and its width faded there; its
    legend entry flagged (:data:`UNDERCOVERS`, the m where it made no interval) and added once."""
    style = dict(method_style(name), ms=5)
    route = df.route.iloc[0]
    bad = df[df.undercovers.astype(bool)]
    flags = ([UNDERCOVERS] if len(bad) else []) + ([refused] if refused is not None else [])
    label = _flagged(legend_label(name, f"route {route}"), flags)
    line = cov_ax.plot(df.m, df.coverage, label=label, **style)
    for ax, col in ((cov_ax, "coverage"), (width_ax, width_col)):  # hollow where it under-covers
        ax.plot(bad.m, bad[col], ls="none", marker=style["marker"], color=style["color"], mfc="white", ms=6, zorder=5)
    # a width is only a cost where the interval covers: an under-covering curve is faded there, so the eye
    # compares the widths of valid intervals
    width_ax.plot(df.m, df[width_col], **(dict(style, alpha=FADED) if len(bad) else style))
    if name not in seen:
        handles += line
        seen.add(name)


def _axes(row, low: float, yardstick: str, xlabel: str) -> None:
    """A row's scales and labels: coverage from ``low`` to just above 1, the width ratio on a log scale."""
    cov_ax, width_ax = row
    cov_ax.set_ylim(low, 1.02)
    cov_ax.set_ylabel("coverage of the full-data OLS coefficient")
    width_ax.set_yscale("log")
    log_axis(width_ax.yaxis)
    width_ax.set_ylabel(f"width / {yardstick} width")
    for ax in row:
        log_m_axis(ax)
        ax.set_xlabel(xlabel)
        ax.grid(True, which="both", alpha=0.3)


def _how_to_read(level: float, reps: int, yardstick: str, refused: bool) -> str:
    """The caption's reading guide: the band, the averages, theory's floor, the hollow markers, a refusal."""
    return (
        f"How to read: a curve inside the grey band sits at the nominal {level:g} (the band: ±2 Monte Carlo s.e. "
        f"over {reps} repetitions); below it the intervals under-cover. Coverage is averaged over the "
        f"coefficients, the width ratio their median, over the {yardstick} interval; dotted black: theory's "
        "floor on that ratio, what privacy must cost (the minimax rate, constant 1); the target is OLS on "
        f"every row the subsamples are drawn from. Hollow markers, {UNDERCOVERS}: some coefficient covers below "
        "0.90 by more than 2 s.e. at that m (its width curve is faded: not the width of a valid interval); its "
        "interval is centred on a biased estimate (inference.csv: "
        "mean_bias beside mean_half_width)."
        + (
            " [no interval at m = …]: the procedure refused there (inference.csv's note says why: blocks too small)."
            if refused
            else ""
        )
    )
