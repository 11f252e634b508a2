"""Summaries of tidy error tables: per (method, m) statistics, and every method's error relative to the best."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..dp.privacy import Privacy


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


# the columns that say under which privacy setting a row was computed (:func:`annotate`)
SETTING = ("private", "proven", "epsilon", "delta", "calibration", "tuning_mode", "end_to_end")
# the tuning modes under which no constant looked at the data (analysis.tuning.LOOKED_AT): with a proven plan and a
# public d, such a method's output is private from end to end (the preprocessing aside, which its record states)
END_TO_END = ("none", "private")


def annotate(
    summary: pd.DataFrame,
    *,
    privacy: Privacy,
    private: Mapping[str, bool],
    proven: Mapping[str, bool],
    tuning_mode: str | Mapping[str, str],
    d_public: bool = True,
) -> pd.DataFrame:
    """``summary`` with the setting of every row (:data:`SETTING`): whether the method is private (run with a privacy
    budget), whether its ledger entry proves that guarantee on a computer (``proven``: False for an unproven
    calibration or floating-point noise, and for a non-private method), and for a private one the ε, the δ resolved
    at the row's m (a formula in n is evaluated at n = m) and the calibration; a non-private row leaves those empty.
    ``tuning_mode``: every row's, or each method's (its tuning record's mode: a tuning-free method runs as ``none``
    under any mode). ``end_to_end``: proven, and no constant looked at the data (mode none or private) — which needs
    the dimension d to be public too (``d_public``: False for a table whose categorical levels were read from it)."""
    is_private = summary["method"].map(lambda k: bool(private[k]))
    delta = summary["m"].map(lambda m: privacy.at(int(m)).delta)
    is_proven = summary["method"].map(lambda k: bool(proven[k]))
    modes = summary["method"].map(tuning_mode) if isinstance(tuning_mode, Mapping) else tuning_mode
    return summary.assign(
        private=is_private,
        proven=is_proven,
        epsilon=np.where(is_private, privacy.epsilon, np.nan),
        delta=delta.where(is_private),
        calibration=np.where(is_private, privacy.calibration, ""),
        tuning_mode=modes,
        end_to_end=is_proven & pd.Series(modes, index=summary.index).isin(END_TO_END) & bool(d_public),
    )


def compare(
    summary: pd.DataFrame,
    ours: Sequence[str],
    references: Sequence[str] = ("adassp", "diffprivlib"),
    missing: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Per m, each method's mean error divided by the best (lowest mean) of ``ours`` — the private methods of this
    package, peers excluded — and by each of the ``references``' (column ``ratio_to_<name>``). A reference that did
    not run leaves its column empty and the ``note`` column says why: ``missing[name]`` (e.g. "not installed"), or
    that it is not among the analysis's methods. The setting columns of ``summary`` (:data:`SETTING`) are kept."""
    ran = set(summary["method"])
    rows = []
    for m, g in summary.groupby("m", sort=True):
        means = g.set_index("method")["mean"]
        mine = means[[k for k in means.index if k in ours]]
        best = mine.idxmin() if len(mine) else None
        refs = [means.get(r, np.nan) for r in references]
        why = "; ".join(
            f"ratio_to_{r} empty: {r} did not run "
            + (f"at m = {m}" if r in ran else f"({(missing or {}).get(r, 'not among the methods')})")
            for r in references
            if r not in means.index
        )
        for method, mean in means.items():
            rows.append((method, m, mean, best, mean / mine.min() if best else np.nan, *(mean / r for r in refs), why))
    columns = ["method", "m", "mean", "best_dp_method", "ratio_to_best_dp", *(f"ratio_to_{r}" for r in references)]
    out = pd.DataFrame(rows, columns=[*columns, "note"])
    setting = [c for c in SETTING if c in summary]
    return out.merge(summary[["method", "m", *setting]], on=["method", "m"], how="left")[[*columns, *setting, "note"]]
