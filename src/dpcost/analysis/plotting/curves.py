"""The error curves (``error_curves``, ``error_curves_all``): each method's mean error against m on log–log axes —
one panel of at most :data:`MAX_CURVES` methods with a zoom panel when a curve is orders of magnitude off, or small
multiples of at most :data:`PANEL_CURVES` curves —, held-out R² when the summary has it, and the methods that
abstained in at least half of the repetitions marked."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...estimators.registry import METHODS
from .layout import finish, log_axis, log_m_axis, plt
from .style import caption, legend_label, method_label, method_style, repetitions

# the headline figure: every method of these groups, and the best of each of the others listed in _BEST_OF
_ALWAYS = ("baseline", "paper", "comparator")
_BEST_OF = ("wang", "new")
HEADLINE_NOTE = (
    "Shown: the non-private baselines, the Cost of Privacy papers' estimators and the comparators they name, the best "
    "of Wang (2018)'s field and of the new estimators, and the best method private from end to end (tuning none or "
    "private: no constant chosen by looking at the data); every method: error_curves_all."
)
ABSTAIN = 0.5  # a method that released its fallback in at least this share of repetitions at some m is marked
ABSTAINS = "abstains"  # its note in the legend
MAX_CURVES = 8  # the methods one panel holds (the headline figure's at most); more: small multiples
PANEL_CURVES = 7  # the curves of one of the small multiples, the baselines included
R2_FLOOR = -1.0  # the R² panels' lower edge: a method worse than predicting the mean by more is named instead
_PANEL, _SMALL = (4.8, 4.4), (4.3, 3.5)  # inches of one panel, of one of the small multiples
_RANK = {name: k for k, name in enumerate(METHODS)}
# the registry's groups → the small multiples (in this order), and each panel's title
_PART = {"baseline": "baseline", "paper": "paper", "comparator": "paper", "wang": "wang", "new": "new", "peer": "peer"}
_PART_TEXT = {
    "paper": "the papers' estimators and their comparators",
    "wang": "Wang (2018)'s field",
    "new": "beyond Wang (2018)",
    "peer": "other libraries (peers)",
    "other": "other methods",
}


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
        "Heavy tails — a few repetitions make the spike (" + "; ".join(parts) + "): the mean is shown, the "
        "median is in summary.csv (docs/results.md)."
    )


def abstainers(summary: pd.DataFrame) -> dict[str, list[int]]:
    """method → the m at which it abstained (released its fallback, e.g. TukeyEM's failed test) in at least half of
    the repetitions (``abstain_rate`` ≥ :data:`ABSTAIN`); empty when the summary has no ``abstain_rate``."""
    if "abstain_rate" not in summary:
        return {}
    hit = summary[summary["abstain_rate"] >= ABSTAIN]
    return {k: sorted(int(m) for m in g["m"]) for k, g in hit.groupby("method")}


def _ms(ms: Sequence[int]) -> str:
    return "m = " + (
        f"{ms[0]:,}" if len(ms) == 1 else f"{ms[0]:,}–{ms[-1]:,}" if len(ms) > 3 else ", ".join(f"{m:,}" for m in ms)
    )


def _curves(summary: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(method, its rows by m), the highest curve at the largest m first: the legend reads top to bottom as the
    curves end on the right."""
    groups = list(summary.sort_values("m").groupby("method", sort=True))
    return sorted(groups, key=lambda kg: -float(kg[1]["mean"].iloc[-1]) if np.isfinite(kg[1]["mean"].iloc[-1]) else 0)


def panels(methods: Sequence[str]) -> list[tuple[str, list[str]]]:
    """(panel title, methods) of an error-curve figure: one panel while the methods are at most :data:`MAX_CURVES`;
    beyond, small multiples of at most :data:`PANEL_CURVES` curves — the papers' estimators with their comparators,
    Wang (2018)'s field, the estimators beyond it, the peers (a larger group split evenly) — with the non-private
    baselines in every panel as the yardstick."""
    order = sorted(methods, key=lambda k: (_RANK.get(k, len(_RANK)), k))
    if len(order) <= MAX_CURVES:
        return [("", order)]
    part = {k: _PART.get(METHODS[k].group if k in METHODS else "peer", "other") for k in order}
    base = [k for k in order if part[k] == "baseline"]
    room = max(1, PANEL_CURVES - len(base))
    out = []
    for name, text in _PART_TEXT.items():
        members = [k for k in order if part[k] == name]
        n = -(-len(members) // room)
        for i in range(n):
            chunk = members[i * len(members) // n : (i + 1) * len(members) // n]
            out.append((text + (f" ({i + 1} of {n})" if n > 1 else ""), base + chunk))
    return out or [("", order)]


def _style(method: str, marked: dict) -> dict:
    style = dict(method_style(method), ms=5)
    return style | ({"ls": "--", "fillstyle": "none"} if method in marked else {})


def _draw(ax, summary: pd.DataFrame, *, bands: bool, marked: dict) -> list:
    handles = []
    for method, df in _curves(summary):
        style = _style(method, marked)
        end_to_end = bool(df["end_to_end"].iloc[0]) if "end_to_end" in df else False
        label = legend_label(method, "private end to end" if end_to_end else "", ABSTAINS if method in marked else "")
        handles += ax.plot(df["m"], df["mean"], label=label, **style)
        if bands and {"q05", "q95"} <= set(df):
            ax.fill_between(df["m"], df["q05"], df["q95"], color=style["color"], alpha=0.08, lw=0)
    log_m_axis(ax)
    ax.set_yscale("log")
    log_axis(ax.yaxis)
    ax.grid(True, which="both", alpha=0.3)
    return handles


def _r2_panel(ax, summary: pd.DataFrame, marked: dict, xlabel: str) -> None:
    """Held-out R² against m, mean ± 2 s.e., the line R² = 0 (predicting the mean) dotted."""
    for method, df in _curves(summary[summary["r2_mean"].notna()]):
        se = df["r2_se"].fillna(0).to_numpy() if "r2_se" in df else np.zeros(len(df))
        ax.errorbar(df["m"], df["r2_mean"], yerr=2 * se, capsize=2, **_style(method, marked))
    ax.axhline(0.0, color="#555555", ls=(0, (1, 3)), lw=1.2)
    log_m_axis(ax)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("held-out R² (1: perfect, 0: the mean)")
    ax.grid(True, which="both", alpha=0.3)


def _r2_limits(axes, summary: pd.DataFrame, where: str) -> str | None:
    """One R² range for every R² panel, down to the lowest mean but not below :data:`R2_FLOOR`; a sentence naming
    the methods below the floor (off the panels), or None."""
    r2 = summary["r2_mean"].dropna()
    for ax in axes:
        ax.set_ylim(max(R2_FLOOR, float(r2.min())) - 0.05, 1.02)
    low = sorted(summary.loc[summary["r2_mean"] < R2_FLOOR, "method"].unique())
    if not low:
        return None
    names = ", ".join(method_label(k) for k in low)
    return f"R² below {R2_FLOOR:g} (far worse than predicting the mean; off the {where}): {names}."


def _limits(ax, summary: pd.DataFrame, reference: tuple[float, str] | None) -> None:
    """Error limits that hold every curve's points and bands, and the reference line."""
    v = summary[[c for c in ("mean", "q05", "q95") if c in summary]].to_numpy(dtype=float).ravel()
    v = np.append(v[np.isfinite(v) & (v > 0)], [reference[0]] if reference is not None else [])
    if len(v):
        ax.set_ylim(0.8 * float(v.min()), 1.25 * float(v.max()))


def _one_panel(summary, marked, *, r2, reference, zoom_above, xlabel, ylabel):
    """The error panel, a zoom panel when a curve is orders of magnitude off (:func:`error_curves`), the R² panel."""
    lows = summary.groupby("method")["mean"].min()
    zoom = reference is not None and summary["mean"].max() > zoom_above * reference[0]
    near = lows[lows <= zoom_above * reference[0]] if zoom else lows
    zoom = zoom and not near.empty
    n = 1 + zoom + r2
    fig, axes = plt.subplots(1, n, figsize=(_PANEL[0] * n, _PANEL[1]), dpi=150, squeeze=False)
    axes = list(axes[0])
    handles = _draw(axes[0], summary, bands=True, marked=marked)
    if n > 1:
        axes[0].set_title("estimation error (lower is better)", fontsize=9)
    notes = []
    if zoom:
        _draw(axes[1], summary[summary.method.isin(near.index)], bands=False, marked=marked)
        axes[1].set_ylim(0.8 * float(near.min()), max(3 * reference[0], 1.25 * float(near.max())))
        axes[1].set_title("zoom (no bands)", fontsize=9)
        if len(near) < len(lows):
            far = ", ".join(method_label(k) for k in lows.index.difference(near.index))
            notes.append(f"The zoom leaves out {far}: its error stays above {zoom_above:g} × {reference[1]}.")
    for ax in axes[: 1 + zoom]:
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
    if r2:
        _r2_panel(axes[-1], summary, marked, xlabel)
        axes[-1].set_title("prediction on held-out rows", fontsize=9)
        notes += [
            "Right: R² on the held-out rows, mean over repetitions ± 2 s.e.",
            _r2_limits(axes[-1:], summary, "right panel"),
        ]
    return fig, axes[: 1 + zoom], handles, notes


def _multiples(summary, marked, groups, *, r2, reference, zoom_above, xlabel, ylabel):
    """Small multiples (:func:`panels`), two a row, each with its R² panel below when the summary has R². The
    panels share one error scale but those holding a curve orders of magnitude off, which have their own. Two, not
    three: the report shows a figure at the width of its page (about 1,000 px on a 1,440-px screen), where three
    panels and the legend put the text at about 7 px."""
    cols = min(2, len(groups))
    rows = -(-len(groups) // cols)
    fig, grid = plt.subplots(
        rows * (1 + r2), cols, figsize=(_SMALL[0] * cols, _SMALL[1] * rows * (1 + r2)), dpi=150, squeeze=False
    )
    lows = summary.groupby("method")["mean"].min()
    off = set(lows[lows > zoom_above * reference[0]].index) if reference is not None else set()
    handles, errors, shared, r2_axes = [], [], [], []
    for i, (text, names) in enumerate(groups):
        row, col = divmod(i, cols)
        ax = grid[row * (1 + r2), col]
        rows_of = summary[summary.method.isin(names)]
        handles += _draw(ax, rows_of, bands=True, marked=marked)
        own = bool(off & set(names))
        ax.set_title(f"({chr(97 + i)}) {text}" + (", own scale" if own else ""), fontsize=9)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        errors.append(ax)
        if not own:
            shared.append((ax, rows_of))
        if r2:
            r2_axes.append(grid[row * 2 + 1, col])
            _r2_panel(r2_axes[-1], rows_of, marked, xlabel)
    for i in range(len(groups), rows * cols):  # the empty places of the last row
        row, col = divmod(i, cols)
        for r in range(row * (1 + r2), (row + 1) * (1 + r2)):
            grid[r, col].set_visible(False)
    if shared:
        _limits(shared[0][0], pd.concat([s for _, s in shared]), reference)
        for ax, _ in shared[1:]:
            ax.sharey(shared[0][0])
    notes = []
    if off:
        far = ", ".join(method_label(k) for k in sorted(off))
        notes.append(
            f"The panels share one error scale but those marked 'own scale': {far} stays above "
            f"{zoom_above:g} × {reference[1]}."
        )
    if r2:
        notes += [
            "Below each panel: R² on the held-out rows, mean over repetitions ± 2 s.e.",
            _r2_limits(r2_axes, summary, "R² panels"),
        ]
    return fig, errors, handles, notes


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
    The title is ``title``; the caption carries (ε, δ), calibration, tuning, the repetitions (``summary``'s
    ``n_reps``) and ``note`` (why these methods are shown, or what explains an odd curve).

    ``reference`` (value, label) draws a horizontal line, e.g. the error of the trivial estimate 0. With at most
    :data:`MAX_CURVES` methods, one panel; when some mean error exceeds ``zoom_above`` × the reference (a peer orders
    of magnitude off), a second panel shows, without bands, every curve whose lowest point is within ``zoom_above`` ×
    the reference, from below the lowest of them to 3 × the reference: the best curves are always in it. With more
    methods, small multiples of at most :data:`PANEL_CURVES` curves (:func:`panels`). With ``r2_mean`` in the summary
    (held-out prediction, the regression analyses) an R² panel beside (below each of the small multiples). A method
    whose ``abstain_rate`` is ≥ :data:`ABSTAIN` at some m is drawn dashed with hollow markers, "abstains" in the
    legend, and the caption says where and why.
    """
    marked = abstainers(summary)
    r2 = bool("r2_mean" in summary and summary["r2_mean"].notna().any())
    groups = panels(list(summary["method"].unique()))
    kw = dict(r2=r2, reference=reference, zoom_above=zoom_above, xlabel=xlabel, ylabel=ylabel)
    if len(groups) > 1:
        fig, errors, handles, notes = _multiples(summary, marked, groups, **kw)
    else:
        fig, errors, handles, notes = _one_panel(summary, marked, **kw)
    if reference is not None:
        for ax in errors:
            ref = ax.axhline(reference[0], color="#555555", ls=(0, (1, 3)), lw=1.2, label=reference[1])
        handles.append(ref)
    unique = list({h.get_label(): h for h in reversed(handles)}.values())[::-1]  # a baseline drawn in every panel
    how = caption(
        epsilon=epsilon, delta=delta, calibration=calibration, tuning=tuning, reps=repetitions(summary["n_reps"])
    )
    if marked:
        who = "; ".join(f"{method_label(k)} at {_ms(ms)}" for k, ms in sorted(marked.items()))
        notes.insert(
            0,
            f"Dashed with hollow markers, '{ABSTAINS}': {who} — in at least half of the repetitions the "
            "method abstained, releasing its fallback instead of an estimate, so the curve there shows "
            "the fallback's error, not the method's.",
        )
    finish(
        fig,
        paths,
        title=title,
        caption=[how + " Bands: 5–95 % of the repetitions.", note, *notes],
        legend=(unique, [h.get_label() for h in unique]),
    )
