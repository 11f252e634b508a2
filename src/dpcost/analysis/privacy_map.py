"""The privacy–utility map: every method's error over a grid of (m, ε), and what ε the best private method needs to
come within a factor of the non-private error (as superpopulation RMSEs: docs/methods.md, "The yardstick").

Each ε is its own run, with its own tuning (the analysis's tuning mode, at that ε) and its own noise streams (ε is
part of a release's identity); the subsamples of (m, rep) are those of every other run, so the cells are paired.
Non-private methods do not depend on ε and run once. Every cell is a separate (ε, δ(m))-DP analysis: the map as a
whole is a table of alternatives, not one release.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from ..dp.privacy import Privacy
from ..errors import PrivacyError
from ..estimators.registry import Method
from . import tuning as tuning_steps
from .engine import run_grid
from .summaries import abstaining, cost_column, superpopulation_rmse

log = logging.getLogger(__name__)

FACTORS = (2.0, 1.25)  # "within 2× (and 1.25×) of non-private"


def run_map(
    analysis,
    method: Method,
    inputs: Mapping[str, str],
    spec: tuning_steps.TuningSpec,
    *,
    epsilons: Sequence[float],
    m_grid: Sequence[int],
    reps: int,
    params: Mapping,
    seed: int,
    privacy: Privacy,
) -> tuple[pd.DataFrame, dict]:
    """One method over the (ε, m) grid: the tidy table (method, epsilon, m, rep, error, …) and a record of every ε's
    tuning choices and plans, and of the ε a calibration refused (their cells are left out, with the reason)."""
    design = analysis.load(inputs, params)
    tables, record = [], {"method": method.name, "tuning": {}, "plans": {}, "refused": {}}
    for eps in epsilons if method.private else [math.nan]:
        p = replace(privacy, epsilon=float(eps)) if method.private else privacy
        try:
            tuned = tuning_steps.tune(
                analysis, method, inputs, spec, params=params, m_grid=m_grid, seed=seed, privacy=p
            )
            tuned.pop("table")
            runner, base, by_m = tuning_steps.runner(method, tuned, m_grid)
            table, plans = run_grid(
                design,
                runner,
                tuning=base,
                tuning_by_m=by_m,
                params=params,
                m_grid=m_grid,
                reps=reps,
                seed=seed,
                privacy=p,
                dataset=analysis.name,
            )
        except PrivacyError as exc:  # e.g. a paper calibration outside its range at this ε
            log.warning("%s at epsilon=%s refused: %s", method.name, eps, exc)
            record["refused"][str(eps)] = str(exc)
            continue
        record["tuning"][str(eps)] = {k: v for k, v in tuned.items() if k != "candidates"}
        record["plans"][str(eps)] = plans
        tables.append(table.assign(epsilon=float(eps)))
        log.info("%s: epsilon=%s done", method.name, eps)
    if not tables:
        raise PrivacyError(f"{method.name}: every epsilon of the map was refused (see the log)")
    return pd.concat(tables, ignore_index=True), record


def summarize_map(
    errors: pd.DataFrame, private: Mapping[str, bool], sampling_variance: float | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per (method, ε, m) the mean error and its standard error, the superpopulation RMSE given the full-data fit's
    ``sampling_variance`` (:func:`~dpcost.analysis.summaries.superpopulation_rmse`) and the abstention rate; and per
    (ε, m) the best private method's error relative to the best non-private one's (``ratio``), with both methods
    named. The ratio is of superpopulation RMSEs where the variance is given (a cost that does not vanish as m → N),
    else of mean errors; a method that abstained in most repetitions of a cell is not a candidate there."""
    keys = [errors.method, errors.epsilon.fillna(-1.0), errors.m]  # NaN ε (non-private rows) as one group
    g = errors.groupby(keys)["error"]
    summary = pd.DataFrame({"n_reps": g.size(), "mean": g.mean(), "se": g.std(ddof=1) / np.sqrt(g.size())})
    if sampling_variance is not None:
        summary["sp_rmse"], summary["sp_rmse_se"] = superpopulation_rmse(
            (errors["error"] ** 2).groupby(keys), sampling_variance
        )
    if "abstained" in errors:
        summary["abstain_rate"] = errors.groupby(keys)["abstained"].mean()
    summary = summary.reset_index()
    summary["epsilon"] = summary["epsilon"].where(summary["epsilon"] >= 0)
    col = cost_column(summary)
    nonpriv = summary[~summary.method.map(private)].sort_values(col).groupby("m").first()
    priv = summary[summary.method.map(private) & ~abstaining(summary)]
    best = priv.loc[priv.groupby(["epsilon", "m"])[col].idxmin()]
    ratios = best.rename(columns={"method": "best_private", col: "best_private_error"})[
        ["epsilon", "m", "best_private", "best_private_error"]
    ]
    ratios["non_private"] = ratios.m.map(nonpriv["method"])
    ratios["non_private_error"] = ratios.m.map(nonpriv[col])
    ratios["ratio"] = ratios.best_private_error / ratios.non_private_error
    ratios["yardstick"] = "superpopulation RMSE" if col == "sp_rmse" else "mean error against the full-data fit"
    return summary, ratios.sort_values(["m", "epsilon"]).reset_index(drop=True)


def epsilon_needed(ratios: pd.DataFrame, factors: Sequence[float] = FACTORS) -> pd.DataFrame:
    """Per m, the smallest ε of the grid at which the best private method is within each factor of non-private
    (NaN: not reached on the grid), and which method it is."""
    rows = []
    for m, g in ratios.sort_values("epsilon").groupby("m"):
        row = {"m": int(m)}
        for f in factors:
            hit = g[g.ratio <= f]
            row[f"epsilon_within_{f:g}x"] = float(hit.epsilon.iloc[0]) if len(hit) else math.nan
            row[f"method_within_{f:g}x"] = hit.best_private.iloc[0] if len(hit) else None
        rows.append(row)
    return pd.DataFrame(rows)


NOT_REACHED = "not reached"


def needed_table(needed: pd.DataFrame) -> pd.DataFrame:
    """:func:`epsilon_needed` as epsilon_needed.csv writes it: "not reached" (on the grid) in place of an empty
    cell, the ε in their shortest form."""
    out = needed.astype(object)
    for col in needed.columns:
        if col.startswith("epsilon_within_"):
            out[col] = [NOT_REACHED if pd.isna(e) else f"{e:g}" for e in needed[col]]
        elif col.startswith("method_within_"):
            out[col] = needed[col].fillna(NOT_REACHED)
    return out
