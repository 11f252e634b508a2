"""The knowledge-transfer study's figure (``table.png``): Wang & Gu (2020) Tables 2–3 as curves against ε, this run
beside the paper's numbers."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from .layout import finish, plt
from .style import caption, legend_label, method_style, repetitions


def transfer_figure(
    table: pd.DataFrame,
    paths: Sequence[str],
    *,
    title: str,
    ylabel: str,
    delta: float,
    calibration: str,
    note: str | None = None,
) -> None:
    """Wang & Gu (2020) Tables 2–3 as curves against ε: this run (left; mean ± sd over trials) and the paper's
    numbers (right), each method in its :func:`method_style` colour and marker; a non-private method is a horizontal
    dotted line, a release whose guarantee is not proven a dashed line labelled so. The constants are the config's
    (fixed tuning). ``note``: the data's size, after the setting in the caption."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), dpi=150, sharey=True)
    legend = {}
    for method in dict.fromkeys(table["method"]):
        g = table[table["method"] == method].sort_values("epsilon")
        style = {k: v for k, v in method_style(method).items() if k != "ls"} | {"ms": 5}  # ls: proven or not
        for ax, mean, sd in ((axes[0], "mean", "sd"), (axes[1], "paper_mean", "paper_sd")):
            if g[mean].isna().all():
                continue
            if not g["private"].iloc[0]:
                line = ax.axhline(
                    float(g[mean].dropna().iloc[0]),
                    color=style["color"],
                    ls=":",
                    lw=1.4,
                    label=legend_label(method, "non-private"),
                )
                legend.setdefault(line.get_label(), line)
                continue
            proven = ax is axes[1] or g["proven"].fillna(True).astype(bool).all()
            label = legend_label(method, "" if proven else "NOT PROVEN: see the ledger")
            line = ax.errorbar(
                g["epsilon"], g[mean], yerr=g[sd].fillna(0), ls="-" if proven else "--", capsize=2, label=label, **style
            )
            legend.setdefault(label, line.lines[0])  # the line and marker (the caption says what the bars are)
    ran = table.loc[table["trials"] > 0, "trials"]
    how = caption(
        epsilon="ε on the x axis",
        delta=f"{delta:g}",
        calibration=calibration,
        tuning="fixed",
        reps=repetitions(ran) if len(ran) else 0,
    )
    axes[0].set_title("this run", fontsize=9)
    axes[1].set_title("Wang & Gu (2020), as published", fontsize=9)
    for ax in axes:
        ax.set_xlabel("privacy budget ε")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel(ylabel)
    read = (
        "Left: this run, mean ± 1 sd over trials (the repetitions below); right: the paper's numbers (their "
        "DPSL-KT is our 'as printed'). Dotted: non-private; dashed: a guarantee not proven."
    )
    finish(fig, paths, title=title, caption=[read, how, note], legend=(list(legend.values()), list(legend)))
