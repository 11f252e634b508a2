"""Summaries of tidy error tables: per (method, m) statistics, and every method's error relative to the best."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..dp.privacy import Privacy
from ..estimators.registry import METHODS

# a method that abstained (released its fallback) in at least this share of a cell's repetitions has no result there:
# no ranking, best-of or win counts it (its error is still reported: the fallback is what it released)
ABSTAINING = 0.5


def summarize(errors: pd.DataFrame, sampling_variance: float | None = None) -> pd.DataFrame:
    """Per (method, m): number of reps, mean error, its standard error, median and the 5 % / 95 % quantiles — the
    papers' metric, the error against the full-data fit — and, where the table has them:

    * ``sp_rmse``, ``sp_rmse_se`` (given the full-data fit's ``sampling_variance``): the yardstick of every cost,
      :func:`superpopulation_rmse`;
    * ``r2_mean``, ``r2_se``, ``rmse_mean``: out-of-sample prediction (NaN where no row was left out);
    * ``abstain_rate``: the share of repetitions in which the method released its fallback;
    * ``support_recovered``: the mean number of true top-s coordinates recovered."""
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
    if sampling_variance is not None:
        sq = errors["error"] ** 2
        out["sp_rmse"], out["sp_rmse_se"] = superpopulation_rmse(
            sq.groupby([errors.method, errors.m]), sampling_variance
        )
    if "r2" in errors:
        out["r2_mean"] = g["r2"].mean()
        out["r2_se"] = g["r2"].std(ddof=1) / np.sqrt(g["r2"].count())
        out["rmse_mean"] = g["rmse"].mean()
    if "abstained" in errors:
        out["abstain_rate"] = g["abstained"].mean()
    if "support_recovered" in errors:
        out["support_recovered"] = g["support_recovered"].mean()
    return out.reset_index()


def superpopulation_rmse(squared, sampling_variance: float) -> tuple[pd.Series, pd.Series]:
    """The root mean squared error of an estimate of the superpopulation's parameter β*, and its standard error,
    from ``squared`` — the squared errors ‖β̂ − β_N‖² against the full-data fit β_N, grouped per cell — and
    τ² = ``sampling_variance`` = tr Var(β_N) (the full-data fit's sandwich):

        RMSE_sp = √(mean ‖β̂ − β_N‖² + τ²),   since ‖β̂ − β*‖² = ‖β̂ − β_N‖² + ‖β_N − β*‖² + 2(β̂ − β_N)'(β_N − β*)

    and the cross term has mean 0 to first order for a subsample without replacement (docs/proofs.md, "The
    yardstick"). Unlike the error against β_N it does not vanish as m → N (OLS at m = N: τ), so a ratio of two
    methods' RMSE_sp is a cost of privacy at every m. The standard error is the delta method's, τ² held fixed:
    sd(‖β̂ − β_N‖²)/(2 RMSE_sp √reps)."""
    if not (np.isfinite(sampling_variance) and sampling_variance >= 0):
        raise ValueError(f"sampling_variance must be finite and >= 0, got {sampling_variance!r}")
    rmse = np.sqrt(squared.mean() + sampling_variance)
    return rmse, squared.std(ddof=1) / np.sqrt(squared.count()) / (2 * rmse)


def cost_column(summary: pd.DataFrame) -> str:
    """The column a cost is a ratio of: the superpopulation RMSE where the summary has it, else the mean error."""
    return "sp_rmse" if "sp_rmse" in summary else "mean"


def abstaining(summary: pd.DataFrame) -> pd.Series:
    """Rows (cells) where the method abstained in at least :data:`ABSTAINING` of the repetitions: not a result."""
    if "abstain_rate" not in summary:
        return pd.Series(False, index=summary.index)
    return summary["abstain_rate"] >= ABSTAINING


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
    references: Sequence[str] | None = None,
    missing: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Per m, each method's error divided by the best of ``ours`` — the private methods of this package, peers
    excluded, none that abstained in most repetitions (:func:`abstaining`) — and by each of the ``references``'
    (column ``ratio_to_<name>``). The error is the cost's yardstick (:func:`cost_column`: ``sp_rmse``, the
    superpopulation RMSE, where the summary has it). A reference that did not run leaves its column empty and the
    ``note`` column says why: ``missing[name]`` (e.g. "not installed"), or that it is not among the analysis's
    methods. The prediction and abstention columns and the setting columns of ``summary`` (:data:`SETTING`) are
    kept. ``references``: default, the methods whose registry entry says they are one (``Method.reference``)."""
    if references is None:
        references = tuple(k for k, m in METHODS.items() if m.reference)
    col = cost_column(summary)
    ran = set(summary["method"])
    usable = summary[~abstaining(summary)]
    rows = []
    for m, g in summary.groupby("m", sort=True):
        errs = g.set_index("method")[col]
        ok = set(usable[usable.m == m].method)
        mine = errs[[k for k in errs.index if k in ours and k in ok]]
        best = mine.idxmin() if len(mine) else None
        refs = [errs.get(r, np.nan) for r in references]
        why = "; ".join(
            f"ratio_to_{r} empty: {r} did not run "
            + (f"at m = {m}" if r in ran else f"({(missing or {}).get(r, 'not among the methods')})")
            for r in references
            if r not in errs.index
        )
        for method, err in errs.items():
            rows.append((method, m, err, best, err / mine.min() if best else np.nan, *(err / r for r in refs), why))
    columns = ["method", "m", col, "best_dp_method", "ratio_to_best_dp", *(f"ratio_to_{r}" for r in references)]
    out = pd.DataFrame(rows, columns=[*columns, "note"])
    kept = [c for c in ("mean", "r2_mean", "rmse_mean", "abstain_rate", *SETTING) if c in summary and c != col]
    return out.merge(summary[["method", "m", *kept]], on=["method", "m"], how="left")[[*columns, *kept, "note"]]
