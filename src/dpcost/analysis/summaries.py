"""Summaries of tidy error tables: per (method, m) statistics, and every method's error relative to the best."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def summarize(errors: pd.DataFrame) -> pd.DataFrame:
    """Per (method, m): number of reps, mean error, its standard error, median and the 5 % / 95 % quantiles
    (and the mean number of true top-s coordinates recovered, where the table records it)."""
    g = errors.groupby(["method", "m"], sort=True)
    e = g["error"]
    out = pd.DataFrame(
        {
            "n_reps": e.size(),
            "mean": e.mean(),
            "se": e.std(ddof=1) / np.sqrt(e.size()),
            "median": e.median(),
            "q05": e.quantile(0.05),
            "q95": e.quantile(0.95),
        }
    )
    if "support_recovered" in errors:
        out["support_recovered"] = g["support_recovered"].mean()
    return out.reset_index()


def compare(
    summary: pd.DataFrame, ours: Sequence[str], references: Sequence[str] = ("adassp", "diffprivlib")
) -> pd.DataFrame:
    """Per m, each method's mean error divided by the best (lowest mean) of ``ours`` — the private methods of this
    package, peers excluded — and by each of the ``references``' (column ``ratio_to_<name>``; NaN where it did not
    run)."""
    rows = []
    for m, g in summary.groupby("m", sort=True):
        means = g.set_index("method")["mean"]
        mine = means[[k for k in means.index if k in ours]]
        best = mine.idxmin() if len(mine) else None
        refs = [means.get(r, np.nan) for r in references]
        for method, mean in means.items():
            rows.append((method, m, mean, best, mean / mine.min() if best else np.nan, *(mean / r for r in refs)))
    columns = ["method", "m", "mean", "best_dp_method", "ratio_to_best_dp", *(f"ratio_to_{r}" for r in references)]
    return pd.DataFrame(rows, columns=columns)
