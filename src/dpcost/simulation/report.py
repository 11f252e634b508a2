"""The simulation study's outputs: the tidy error table, its summary, the figures (one per paper figure, one panel
per experiment with each curve's fitted rate dashed, a second rate shape dotted) and the privacy ledger."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from ..analysis.plotting import finish, log_axis, log_m_axis, method_style, plt
from ..estimators.registry import METHODS
from .problems import PROBLEMS
from .rates import SHAPE_TEXT
from .run import DESIGN_KEYS

KEYS = [*DESIGN_KEYS, "epsilon", "epsilon_spent"]
# one style per method across every figure, the real-data ones included (analysis.plotting.method_style): its colour
# and marker; a variant, or a second ε, changes the line and the marker fill
# the second ε of an experiment drawing its curves at two: open markers on a dashed line (greyscale-readable)
_EPS_STYLE = (("-", "full"), ("--", "none"), ("-.", "left"), (":", "right"))
_VARIANT = {
    "R=theory": ("-", "full"),
    "R=none": (":", "none"),
    "R=dp_quantile": ("-.", "left"),
    "s=true": ("-", "full"),
    "s=cv_expmech": (":", "none"),
    "s=private_selection": ("-.", "left"),
    "s=composed_selection": ("--", "right"),
}
_SHAPE_LINES = ((0, (2, 2)), (0, (1, 1.5)))  # the first rate shape dashed, the second dotted
# each figure's title after "Simulation, Figure k: ", in plain words (the setting goes to the caption)
FIGURE_TEXT = {
    1: "the papers' estimators with three ways of choosing the truncation R",
    2: "the private sparse estimators with four ways of choosing the sparsity s",
    3: "the papers' estimators beside the comparators they name",
    4: "the Score Attack paper's problems at two privacy budgets",
    5: "private sparse learning by knowledge transfer (Wang & Gu 2020, Fig. 2)",
}


def summarize(errors: pd.DataFrame) -> pd.DataFrame:
    """Per curve and n: repetitions, mean error, its standard error and the 5 % / 95 % quantiles."""
    g = errors.groupby(KEYS, sort=True, dropna=False)  # s, p, α and ε are NaN where they do not apply
    e = g["error"]
    return pd.DataFrame(
        {
            "n_reps": e.size(),
            "mean": e.mean(),
            "se": e.std(ddof=1) / np.sqrt(e.size()),
            "q05": e.quantile(0.05),
            "q95": e.quantile(0.95),
            "s_used_mean": g["s_used"].mean(),
            "delta": g["delta"].max(),
            "proven": g["proven"].all(),
        }
    ).reset_index()


def curve_label(
    method: str,
    variant: str,
    private: bool,
    labels: Mapping[str, str],
    spent: float = np.nan,
    epsilon: float = np.nan,
    *,
    proven: bool = True,
    show_epsilon: bool = False,
) -> str:
    """The legend text, ending with what the method does (the registry's ``what``); a curve that is not private,
    whose guarantee is not proven (a PRIVACY WARNING under ``on_invalid: warn``), or that spends more than the stated
    ε, says so."""
    text = labels.get(method, method) + (f", {variant}" if variant else "")
    text += f", eps = {epsilon:g}" if show_epsilon and not pd.isna(epsilon) else ""
    baseline = method in METHODS and not METHODS[method].private
    if not private and not baseline:
        text += " (NOT private)"
    elif not proven and not baseline:
        text += " (NOT PROVEN: a PRIVACY WARNING, see the ledger)"
    elif spent > epsilon * (1 + 1e-9):
        text += f" (as printed: spends eps = {spent:.3g})"
    what = METHODS[method].what if method in METHODS else ""
    return text + (f" — {what}" if what else "")


def _same(col: pd.Series, value) -> pd.Series:
    """col == value, NaN matching NaN (ε of a non-private curve)."""
    return col.isna() if pd.isna(value) else col == value


def _title(g: pd.DataFrame) -> str:
    ratio = (g.d / g.n).unique()
    if g.d.nunique() == 1:
        d = str(g.d.iloc[0])
    else:
        d = ("n" if ratio[0] == 1 else f"{ratio[0]:g}n") if len(ratio) == 1 else "varies with n"
    problem = g.problem.iloc[0]
    parts = [] if PROBLEMS[problem].fixed_d is not None else [f"d = {d}"]
    parts += [] if g.s.isna().all() else [f"s* = {int(g.s.iloc[0])}"]
    if g.p.notna().any():
        ps = g.p.dropna().unique()
        parts.append(f"p = {ps[0]:g}" if len(ps) == 1 else "p varies with n")
    parts += [] if g.alpha.isna().all() else [f"alpha = {int(g.alpha.dropna().iloc[0])}"]
    return ", ".join([PROBLEMS[problem].text, *parts])


def _epsilon_panel(ax, g: pd.DataFrame, order: list, labels: Mapping[str, str]) -> None:
    """One n, error against ε: a private curve per (method, variant) with its 5–95 % band, each non-private baseline
    a horizontal line."""
    groups = g.groupby(["method", "variant"], sort=False, dropna=False)
    for (method, variant), c in sorted(groups, key=lambda kc: order.index(kc[0][0]) if kc[0][0] in order else 99):
        colour, marker = method_style(method)["color"], method_style(method)["marker"]
        proven = bool(c.proven.astype(bool).all())
        label = curve_label(method, variant, bool(c.private.iloc[0]), labels, proven=proven)
        if c.epsilon.isna().all():
            ax.axhline(float(c["mean"].iloc[0]), color=colour, ls=":", lw=1.2, label=label)
            continue
        c = c.sort_values("epsilon")
        ax.plot(c.epsilon, c["mean"], color=colour, marker=marker, ls="-" if proven else "--", ms=6, label=label)
        ax.fill_between(c.epsilon, c.q05, c.q95, color=colour, alpha=0.08, lw=0)


def figure(
    summary: pd.DataFrame,
    rates: pd.DataFrame,
    number: int,
    paths: Sequence[str],
    *,
    title: str,
    labels: Mapping[str, str],
    deltas: Mapping[str, object] | None = None,
    caption: Sequence[str] = (),
) -> None:
    """Figure ``number``: one panel per experiment of that figure, mean error against n on log–log axes with
    5–95 % bands, each curve's fitted rate c·rate(n) dashed in its colour (a second rate shape dotted).
    ``deltas``: the δ of the experiments that have their own, named in their panel's title; ``caption``: the
    setting, below the panels."""
    sub = summary[summary.figure == number]
    for col in ("p", "alpha", "proven"):
        if col not in sub:
            sub = sub.assign(**{col: np.nan if col != "proven" else True})
    panels = sorted(sub.panel.unique())
    cols = min(2, len(panels))
    rows = -(-len(panels) // cols)
    keys = ["method", "variant", "epsilon"]
    most = 2 * max(len(sub[sub.panel == p].groupby(keys, dropna=False)) for p in panels) + 2  # legend lines (they wrap)
    fig, axes = plt.subplots(rows, cols, figsize=(6.2 * cols, (4.0 + 0.17 * most) * rows), squeeze=False)
    for ax, panel in zip(axes.flat, panels, strict=False):
        g = sub[sub.panel == panel]
        exp = g.experiment.iloc[0]
        eps_all = sorted(g.epsilon.dropna().unique())
        shapes = []
        order = list(METHODS)  # the legend in the registry's order: the baseline first, then its private methods
        curves = sorted(
            g.groupby(keys, sort=False, dropna=False),
            key=lambda kc: order.index(kc[0][0]) if kc[0][0] in order else len(order),
        )
        by_eps = g.n.nunique() == 1 and len(eps_all) > 1  # one n, several ε (Wang & Gu's Fig. 2): error against ε
        if by_eps:
            _epsilon_panel(ax, g, order, labels)
        for (method, variant, eps), c in [] if by_eps else curves:
            fitted = rates[
                (rates.experiment == exp)
                & (rates.method == method)
                & (rates.variant == variant)
                & _same(rates.epsilon, eps)
            ]
            for shape in _curve(ax, c.sort_values("n"), (method, variant, eps), eps_all, labels, fitted):
                shapes += [shape] if shape not in shapes else []
        own = f", delta = {deltas[exp]}" if exp in (deltas or {}) else ""
        _finish_panel(ax, g, f"({panel}) {_title(g)}{own}", by_eps, shapes)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    finish(
        fig,
        paths,
        title=title,
        dpi=120,
        caption=[*caption, "Thin lines: the papers' rates with one fitted constant per curve."],
    )


def _curve(ax, c: pd.DataFrame, key: tuple, eps_all: list, labels: Mapping[str, str], fitted: pd.DataFrame) -> list:
    """One curve of a panel: the mean error against n with its 5–95 % band, in the method's colour and marker and
    its variant's (or ε's) line, and its fitted rates (``fitted``) thin; the rate shapes drawn, in order."""
    method, variant, eps = key
    style = method_style(method)
    colour, marker = style["color"], style["marker"]
    # no variant: the method's own line, so that two methods sharing a marker still differ in greyscale
    ls, fill = _VARIANT.get(variant, ("-", "full")) if variant else (style["ls"], "full")
    if len(eps_all) > 1 and not variant and not pd.isna(eps):
        ls, fill = _EPS_STYLE[eps_all.index(eps) % len(_EPS_STYLE)]
    label = curve_label(
        method,
        variant,
        bool(c.private.iloc[0]),
        labels,
        c.epsilon_spent.max(),
        c.epsilon.max(),
        proven=bool(c.proven.astype(bool).all()),
        show_epsilon=len(eps_all) > 1,
    )
    ax.plot(c.n, c["mean"], color=colour, marker=marker, ls=ls, fillstyle=fill, ms=6, label=label)
    ax.fill_between(c.n, c.q05, c.q95, color=colour, alpha=0.08, lw=0)
    shapes = []
    for k, (shape, rs) in enumerate(
        fitted.groupby("shape", sort=False) if "shape" in fitted else [("minimax", fitted)]
    ):
        ax.plot(rs.n, rs.fitted, color=colour, ls=_SHAPE_LINES[min(k, 1)], lw=0.9, alpha=0.8)
        shapes.append(shape)
    return shapes


def _finish_panel(ax, g: pd.DataFrame, title: str, by_eps: bool, shapes: list) -> None:
    """A panel's legend (its curves, then what each thin rate line is, once), title, axes and labels."""
    handles, texts = ax.get_legend_handles_labels()
    for k, shape in enumerate(shapes):  # what the thin lines are, once per panel
        handles.append(Line2D([], [], color="#555555", ls=_SHAPE_LINES[min(k, 1)], lw=0.9))
        texts.append(f"{SHAPE_TEXT.get(shape, shape)}, one fitted constant per curve")
    ax.set_title(textwrap.fill(title, 70), fontsize=10)
    if not by_eps:  # Wang & Gu's Fig. 2: epsilon on a linear axis
        log_m_axis(ax)
    ax.set_yscale("log")
    log_axis(ax.yaxis)
    ax.set_xlabel("epsilon" if by_eps else "number of items n" if g.problem.iloc[0] == "btl" else "sample size n")
    ax.set_ylabel(r"mean relative $\ell_2$ error" if PROBLEMS[g.problem.iloc[0]].kt_loss else r"mean $\ell_2$ error")
    ax.grid(True, which="both", alpha=0.3)
    texts = [textwrap.fill(t, 75, subsequent_indent="  ") for t in texts]  # long labels stay under their panel
    ax.legend(handles, texts, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.19), frameon=False)


def ledger(plans: Sequence[dict], *, quantile_share: float) -> dict:
    """Every private curve's plan per (experiment, n), and what is not private."""
    return {
        "neighbours": "replace one record",
        "delta_is_evaluated_at": "n, the number of records of the draw (BTL: its number of items)",
        "not_private": [
            "variant R=none: R is the data's own largest |value| (noise scaled to the data): NOT private; kept to "
            "reproduce Figure 1 and labelled there",
            "the designs, sizes and every constant of simulation.tuning are public choices made without the data",
        ],
        "not_proven": [
            "a release whose calibration or sensitivity raised a PRIVACY WARNING (a paper's, outside its proven "
            "range, run because on_invalid is warn): proven = false in the tables, NOT PROVEN in the legends, its "
            "plan record's warnings say why",
        ],
        "above_the_stated_level": [
            "variant s=cv_expmech (004 §5.2 as printed): its total_epsilon / total_delta (in its plan records) are "
            "what the whole procedure spends, far above the stated (epsilon, delta); kept to reproduce Figure 2",
        ],
        "quantile_share": quantile_share,
        "plans": list(plans),
    }
