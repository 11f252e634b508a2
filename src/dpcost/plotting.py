"""Figures: error curves readable in greyscale (marker and line style differ, not only colour)."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from .experiment import MEAN_METHODS, REGRESSION_METHODS  # noqa: E402

_STYLES = [("o", "-"), ("s", "--"), ("^", "-."), ("D", ":"), ("v", "-"), ("P", "--"), ("X", "-."), ("*", ":")]
_COLOURS = ["#000000", "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#999999"]


def method_label(name: str) -> str:
    spec = REGRESSION_METHODS.get(name) or MEAN_METHODS.get(name)
    return spec.label if spec else name


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
    reference: tuple[float, str] | None = None,
) -> None:
    """One log-log curve of the mean error per method, with its 5 %–95 % band; saved to every path in ``paths``.

    ``reference`` (value, label) draws a horizontal line, e.g. the error of the trivial estimate 0.
    """
    fig, ax = plt.subplots(figsize=(9.5, 4.8), dpi=150)
    for k, (method, df) in enumerate(summary.sort_values("m").groupby("method", sort=True)):
        marker, ls = _STYLES[k % len(_STYLES)]
        colour = _COLOURS[k % len(_COLOURS)]
        ax.plot(df["m"], df["mean"], marker=marker, ls=ls, color=colour, label=method_label(method), ms=5)
        ax.fill_between(df["m"], df["q05"], df["q95"], color=colour, alpha=0.12, lw=0)
    if reference is not None:
        ax.axhline(reference[0], color="#555555", ls=(0, (1, 3)), lw=1.2, label=reference[1])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(
        f"{title}\n(ε = {epsilon}, δ = {delta}, {calibration} calibration; bands: 5–95 % of repetitions)", fontsize=10
    )
    ax.grid(True, which="both", alpha=0.3)
    # outside the axes: with peers whose errors span 10⁻³ … 10⁶ there is no empty corner inside
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    for path in paths:
        fig.savefig(path)
    plt.close(fig)
