"""The simulation study's outputs: the tidy error table, its summary, the figures (one per paper figure, panels
(a)–(d) with each curve's fitted minimax rate dashed) and the privacy ledger."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

KEYS = ["experiment", "figure", "panel", "problem", "method", "variant", "private", "n", "d", "s", "epsilon",
        "epsilon_spent"]  # fmt: skip
# one style per curve across every figure: (colour, marker, line) by method, the variant changes the marker fill
_STYLE = {
    "sample_mean": ("#000000", "o"), "top_s_mean": ("#000000", "o"), "ols": ("#000000", "o"), "iht": ("#000000", "o"),
    "dp_mean": ("#0072B2", "s"), "peeling": ("#0072B2", "s"), "noisy_gd": ("#0072B2", "s"), "dp_iht": ("#0072B2", "s"),
    "karwa_vadhan": ("#D55E00", "^"), "sheffet_jl": ("#D55E00", "^"), "frank_wolfe": ("#D55E00", "^"),
    "frank_wolfe_lasso": ("#D55E00", "^"),
}  # fmt: skip
_VARIANT = {"": ("-", "full"), "R=theory": ("-", "full"), "R=none": (":", "none"), "R=dp_quantile": ("-.", "left"),
            "s=true": ("-", "full"), "s=cv_expmech": (":", "none"), "s=private_selection": ("-.", "left"),
            "s=composed_selection": ("--", "right")}  # fmt: skip
_VARIANT_COLOUR = {"R=theory": "#009E73", "R=none": "#999999", "R=dp_quantile": None, "s=cv_expmech": "#999999",
                   "s=private_selection": "#009E73", "s=composed_selection": "#E69F00"}  # fmt: skip
PROBLEM_TEXT = {"mean": "mean", "sparse_mean": "sparse mean", "ols": "linear regression",
                "sparse_ols": "sparse linear regression"}  # fmt: skip


def summarize(errors: pd.DataFrame) -> pd.DataFrame:
    """Per curve and n: repetitions, mean error, its standard error and the 5 % / 95 % quantiles."""
    g = errors.groupby(KEYS, sort=True, dropna=False)  # s and ε are NaN where they do not apply
    e = g["error"]
    return pd.DataFrame({"n_reps": e.size(), "mean": e.mean(), "se": e.std(ddof=1) / np.sqrt(e.size()),
                         "q05": e.quantile(0.05), "q95": e.quantile(0.95),
                         "s_used_mean": g["s_used"].mean()}).reset_index()  # fmt: skip


def curve_label(method: str, variant: str, private: bool, labels: Mapping[str, str], spent: float = np.nan,
                epsilon: float = np.nan) -> str:  # fmt: skip
    """The legend text; a curve that is not private, or spends more than the stated ε, says so."""
    text = labels.get(method, method) + (f", {variant}" if variant else "")
    if not private and method not in ("sample_mean", "top_s_mean", "ols", "iht"):
        return text + " (NOT private)"
    if spent > epsilon * (1 + 1e-9):
        return text + f" (as printed: spends eps = {spent:.3g})"
    return text


def figure(summary: pd.DataFrame, rates: pd.DataFrame, number: int, paths: Sequence[str], *, title: str,
           labels: Mapping[str, str]) -> None:  # fmt: skip
    """Figure ``number``: one panel per experiment of that figure, mean error against n on log–log axes with
    5–95 % bands, each curve's fitted rate c·rate(n) dashed in its colour."""
    sub = summary[summary.figure == number]
    panels = sorted(sub.panel.unique())
    cols = min(2, len(panels))
    rows = -(-len(panels) // cols)
    most = max(len(sub[sub.panel == p].groupby(["method", "variant"])) for p in panels)  # legend lines under a panel
    fig, axes = plt.subplots(rows, cols, figsize=(6.2 * cols, (4.0 + 0.17 * most) * rows), squeeze=False)
    for ax, panel in zip(axes.flat, panels, strict=False):
        g = sub[sub.panel == panel]
        exp = g.experiment.iloc[0]
        for (method, variant), c in g.groupby(["method", "variant"], sort=False):
            c = c.sort_values("n")
            colour, marker = _STYLE.get(method, ("#CC79A7", "D"))
            colour = _VARIANT_COLOUR.get(variant) or colour
            ls, fill = _VARIANT.get(variant, ("-", "full"))
            ax.plot(c.n, c["mean"], color=colour, marker=marker, ls=ls, fillstyle=fill, ms=6,
                    label=curve_label(method, variant, bool(c.private.iloc[0]), labels, c.epsilon_spent.max(),
                                      c.epsilon.max()))  # fmt: skip
            ax.fill_between(c.n, c.q05, c.q95, color=colour, alpha=0.08, lw=0)
            r = rates[(rates.experiment == exp) & (rates.method == method) & (rates.variant == variant)]
            ax.plot(r.n, r.fitted, color=colour, ls=(0, (2, 2)), lw=0.9, alpha=0.8)
        ratio = (g.d / g.n).unique()
        if g.d.nunique() == 1:
            d = str(g.d.iloc[0])
        else:
            d = ("n" if ratio[0] == 1 else f"{ratio[0]:g}n") if len(ratio) == 1 else "varies with n"
        s = "" if g.s.isna().all() else f", s* = {int(g.s.iloc[0])}"
        ax.set_title(f"({panel}) {PROBLEM_TEXT[g.problem.iloc[0]]}, d = {d}{s}", fontsize=10)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("sample size n")
        ax.set_ylabel(r"mean $\ell_2$ error")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.19), frameon=False)  # below: no overlap
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    fig.suptitle(title + "\n(dashed: the minimax rate with one fitted constant per curve)", fontsize=10)
    fig.tight_layout()
    for p in paths:
        fig.savefig(p, dpi=120)
    plt.close(fig)


def ledger(plans: Sequence[dict], *, quantile_share: float) -> dict:
    """Every private curve's plan per (experiment, n), and what is not private."""
    return {
        "neighbours": "replace one record",
        "delta_is_evaluated_at": "n, the number of records of the draw",
        "not_private": [
            "variant R=none: R is the data's own largest |value| (noise scaled to the data): NOT private; kept to "
            "reproduce Figure 1 and labelled there",
            "the designs, sizes and every constant of simulation.tuning are public choices made without the data",
        ],
        "above_the_stated_level": [
            "variant s=cv_expmech (004 §5.2 as printed): its total_epsilon / total_delta (in its plan records) are "
            "what the whole procedure spends, far above the stated (epsilon, delta); kept to reproduce Figure 2",
        ],
        "quantile_share": quantile_share,
        "plans": list(plans),
    }
