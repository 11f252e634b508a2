"""The score attack's figure (``attack.png``): AUC and TPR at FPR 5 % against m per method, the ceiling (ε, δ)-DP
puts on the AUC, and a caption that says how to read it — and, when nothing is traceable, that it proves nothing."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .layout import finish, log_m_axis, plt
from .style import caption, legend_label, method_style, repetitions


def reach_z(points: int) -> float:
    """The z a mean AUC must pass to be told apart from guessing when ``points`` (method, m) points are tested at
    once: Bonferroni's two-sided 5 % family-wise level, Φ⁻¹(1 − 0.025/points) — 2.24 for 2 points, 3.62 for 180
    (at 2 s.e. each, 180 points of pure guessing put about 8 beyond by chance, and the verdict would flip)."""
    from scipy import special  # here: slow to import

    return float(special.ndtri(1 - 0.025 / max(int(points), 1)))


def untraceable(summary: pd.DataFrame) -> bool:
    """True when no method, the non-private ones included, is told apart from guessing at any m: every mean AUC
    within :func:`reach_z` (of the number of points) standard errors of 0.5, the standard error being the larger of
    the repetitions' and the one guessing gives (Mann–Whitney's null variance (n₁ + n₂ + 1)/(12 n₁ n₂),
    n₁ = n₂ = n_candidates, over n_reps repetitions: with 2 repetitions their own spread is no estimate)."""
    k = summary["n_candidates"].astype(float)
    null_se = np.sqrt((2 * k + 1) / (12 * k**2) / summary["n_reps"])
    reach = reach_z(len(summary)) * np.maximum(summary["auc_se"].fillna(0), null_se)
    return bool(((summary["auc"] - 0.5).abs() <= reach).all())


def attack_figure(
    summary: pd.DataFrame,
    paths: Sequence[str],
    *,
    title: str,
    xlabel: str,
    epsilon: float,
    delta,
    calibration: str,
    tuning: str,
    targeted: str | None = None,
) -> None:
    """The score attack per method against m: AUC (left; 0.5 = guessing; the grey line is the ceiling (ε, δ)-DP
    puts on it) and TPR at FPR 5 % (right; 0.05 = guessing), mean over repetitions ± 2 standard errors, each method
    in its :func:`method_style`. The caption says how to read it, and when nothing is traceable (:func:`untraceable`)
    that the attack sees nothing of any method at these m, which bounds nothing — unless the targeted attack sees a
    row (``targeted``: its sentence, :func:`dpcost.analysis.targeted.exposure_note`), which the caption then says."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.4), dpi=150)
    handles = []
    for method, df in summary.sort_values("m").groupby("method", sort=True):
        style = dict(ms=5, capsize=2, **method_style(method))
        for ax, col in zip(axes, ("auc", "tpr_fpr05"), strict=True):
            bars = ax.errorbar(
                df["m"], df[col], yerr=2 * df[f"{col}_se"].fillna(0), label=legend_label(method), **style
            )
        bars.lines[0].set_label(bars.get_label())  # the legend shows the line and marker: the caption says "bars"
        handles.append(bars.lines[0])
    ceiling = summary.groupby("m")["auc_ceiling"].first()
    handles += axes[0].plot(
        ceiling.index,
        ceiling.to_numpy(),
        color="#999999",
        lw=2.5,
        alpha=0.6,
        label="largest AUC any (ε, δ(m))-DP release allows",
    )
    for ax, chance, name in ((axes[0], 0.5, "AUC (0.5: guessing)"), (axes[1], 0.05, "TPR at FPR 5 % (0.05: guessing)")):
        guess = ax.axhline(chance, color="#555555", ls=(0, (1, 3)), lw=1.2, label="guessing")
        log_m_axis(ax)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(f"score attack: {name}")
        ax.grid(True, which="both", alpha=0.3)
    handles.append(guess)
    axes[0].set_ylim(0.4, 1.02)
    axes[1].set_ylim(-0.02, 1.02)
    read = (
        "How to read: a curve above 'guessing' means the attack tells members of the subsample from other "
        "records; a private curve can never rise above the grey ceiling."
    )
    at = (
        f"AUC within {reach_z(len(summary)):.2f} s.e. of 0.5, a 5 % family-wise allowance over the "
        f"{len(summary)} points"
    )
    if untraceable(summary) and targeted:
        read += (
            f" Here every method, the non-private one included, sits at guessing ({at}): an average over rows, "
            "which hides the rows that stand out. " + targeted
        )
    elif untraceable(summary):
        read += (
            f" Here every method, the non-private one included, sits at guessing ({at}): the attack cannot see "
            "these estimates at these m, so the figure shows no leak and proves no privacy; the guarantee is "
            "the ledger's."
        )
    how = caption(
        epsilon=epsilon, delta=delta, calibration=calibration, tuning=tuning, reps=repetitions(summary["n_reps"])
    )
    finish(
        fig,
        paths,
        title=title,
        caption=[read, how + " Bars: ±2 s.e. over repetitions."],
        legend=(handles, [h.get_label() for h in handles]),
    )
