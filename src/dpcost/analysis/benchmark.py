"""The real-data benchmark of private regression: every method on many real tables at a few ε, scored by the
relative error against the full-data OLS, by the superpopulation RMSE (the yardstick of its ratio to OLS, which does
not vanish as m nears the table's rows: docs/methods.md, "The yardstick") and by held-out R², then counted across
data sets as the literature does (Tang et al., SaTML 2024; Dick et al., NeurIPS 2023: on how many data sets a method
is best, within 2× of OLS, and has R² > 0; a method that abstained in most repetitions of a cell counts nowhere).

Each data set is split once, from the run's seed, into training rows (the only rows any subsample draws) and
held-out rows (R² only). Each (data set, method) is a privacy-map run (:func:`dpcost.analysis.privacy_map.run_map`)
over the ε of the benchmark at one or two m, under the release identity ``benchmark:<data set>`` so that its noise
and subsamples are fresh, not those of the data set's own analysis. Every cell is a separate (ε, δ(m))-DP analysis
of the training rows; the table is a comparison of alternatives, not one release.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..data.prepare import held_out_rows
from ..dp.privacy import Privacy
from ..errors import DataError, DPCostError
from ..estimators.registry import Method
from . import intervals, privacy_map
from . import tuning as tuning_steps
from .designs import HeldOutRegressionDesign, RegressionDesign
from .intervals import PRIVATE_TUNING, pooled, run_intervals, run_reference
from .streams import rng_for
from .summaries import abstaining
from .tuning import TuningSpec

WITHIN = 2.0  # "within 2× of OLS"
log = logging.getLogger("benchmark")


def held_out(design: RegressionDesign, fraction: float, rng: np.random.Generator) -> HeldOutRegressionDesign:
    """The design with round(fraction · n) rows, drawn by ``rng``, moved to a held-out split (R² only)."""
    n = len(design.y)
    test = held_out_rows(n, fraction, rng)
    if test.sum() < 2:
        raise DataError(f"test_fraction {fraction} leaves {int(test.sum())} held-out rows of {n}; need at least 2")
    return HeldOutRegressionDesign(
        design.X[~test], design.y[~test], design.truth, X_test=design.X[test], y_test=design.y[test]
    )


def training(analysis, inputs: Mapping[str, str], params: Mapping, test_fraction: float, seed: int):
    """(the benchmark's view of a data set, its training design): the design with its held-out rows set aside by
    :func:`held_out` (drawn once per data set from the seed: every benchmark job of the data set sets aside the same
    rows) and the analysis renamed ``benchmark:<data set>`` loading it, so its streams are the benchmark's own."""
    full = analysis.load(inputs, dict(params))
    design = held_out(full, test_fraction, rng_for(seed, analysis.name, "benchmark test split"))
    return dataclasses.replace(analysis, name=f"benchmark:{analysis.name}", load=lambda inputs, params: design), design


def m_of(grid: Sequence[int], n_train: int, small_m: int | None = None) -> list[int]:
    """The benchmark's m of a data set: the largest grid point the training rows can serve (4 rows stay outside, as
    the score attack's analysis needs), and ``small_m`` below it when given."""
    fits = [m for m in grid if m <= n_train - 4]
    if not fits:
        raise DataError(f"no m of the grid {list(grid)} fits the {n_train} training rows")
    top = max(fits)
    return sorted({top, *([small_m] if small_m and small_m < top else [])})


def run_benchmark(
    analysis,
    method: Method,
    inputs: Mapping[str, str],
    spec: TuningSpec,
    *,
    epsilons: Sequence[float],
    grid: Sequence[int],
    small_m: int | None,
    reps: int,
    test_fraction: float,
    params: Mapping,
    seed: int,
    privacy: Privacy,
) -> tuple[pd.DataFrame, dict]:
    """One (data set, method) job: the tidy rows (method, epsilon, m, rep, error, r2) and the record (tuning and plans
    per ε, the m run, the split's sizes)."""
    bench, design = training(analysis, inputs, params, test_fraction, seed)
    m_grid = m_of(grid, len(design.y), small_m)
    table, record = privacy_map.run_map(
        bench,
        method,
        inputs,
        spec,
        epsilons=epsilons,
        m_grid=m_grid,
        reps=reps,
        params=dict(params),
        seed=seed,
        privacy=privacy,
    )
    with open(inputs["meta"]) as fh:
        variance = json.load(fh)["truth_sampling_variance"]
    record |= {
        "dataset": analysis.name,
        "m": m_grid,
        "n_train": len(design.y),
        "n_test": len(design.y_test),
        "d": design.d,
        "truth_norm": float(np.linalg.norm(design.truth)),
        "truth_sampling_variance": variance,
    }
    return table.assign(dataset=analysis.name), record


def summarize(errors: pd.DataFrame, records: Sequence[Mapping], methods: Mapping[str, Method]) -> pd.DataFrame:
    """One row per (data set, method, ε, m): the mean relative error ‖β̂ − β‖/‖β‖ and its standard error, the
    superpopulation RMSE (:func:`~dpcost.analysis.summaries.superpopulation_rmse`, from the data set's record), the
    mean held-out R² and prediction RMSE, the abstention rate, the superpopulation RMSE relative to OLS's at the same
    (data set, m) (``ratio_to_ols``), whether the method is private and its plans proven (no unproven calibration, no
    floating-point noise), and the tuning mode it ran under."""
    from .ledger import float_noise_reason

    norms = {r["dataset"]: r["truth_norm"] for r in records}
    variances = {r["dataset"]: r["truth_sampling_variance"] for r in records}
    proven = {}
    for r in records:
        plans = [p for ps in r["plans"].values() for p in ps]
        ok = bool(plans) and all(p["proven"] and not float_noise_reason(p) for p in plans)
        proven[(r["dataset"], r["method"])] = methods[r["method"]].private and ok
    keys = [errors.dataset, errors.method, errors.epsilon.fillna(-1.0), errors.m]  # NaN ε: the non-private rows
    g = errors.groupby(keys)
    rel = (errors["error"] / errors["dataset"].map(norms)).groupby(keys)
    out = pd.DataFrame(
        {
            "n_reps": g.size(),
            "error": rel.mean(),
            "error_se": rel.std(ddof=1) / np.sqrt(g.size()),
            "sp_rmse": np.sqrt((errors["error"] ** 2).groupby(keys).mean()),  # the data set's τ² added below
            "r2": g["r2"].mean(),
            "r2_se": g["r2"].std(ddof=1) / np.sqrt(g.size()),
            "rmse": g["rmse"].mean() if "rmse" in errors else np.nan,
            "abstain_rate": g["abstained"].mean() if "abstained" in errors else 0.0,
        }
    ).reset_index()
    out["epsilon"] = out["epsilon"].where(out["epsilon"] >= 0)
    out["sp_rmse"] = np.sqrt(out["sp_rmse"] ** 2 + out["dataset"].map(variances))
    ols = out[out.method == "ols"].set_index(["dataset", "m"])["sp_rmse"]
    out["ratio_to_ols"] = [e / ols.get((d, m), np.nan) for d, m, e in zip(out.dataset, out.m, out.sp_rmse, strict=True)]
    out["private"] = out.method.map(lambda k: methods[k].private)
    out["proven"] = [proven[(d, k)] for d, k in zip(out.dataset, out.method, strict=True)]
    # the mode each (data set, method) ran under (a tuning-free method: none, whatever the benchmark's mode)
    modes = {(r["dataset"], r["method"]): next(iter(r["tuning"].values()), {}).get("mode") for r in records}
    out["tuning_mode"] = [modes[(d, k)] for d, k in zip(out.dataset, out.method, strict=True)]
    return out.sort_values(["dataset", "m", "epsilon", "error"]).reset_index(drop=True)


def wins(summary: pd.DataFrame) -> pd.DataFrame:
    """Per private method and ε, at each data set's largest m: on how many data sets it is the best private method
    (lowest superpopulation RMSE), within 2× of OLS's, and has held-out R² > 0 — with the data sets named. A cell
    where the method abstained in most repetitions (:data:`~dpcost.analysis.summaries.ABSTAINING`) counts in none:
    its fallback is not a fit (``abstained_on`` names those data sets)."""
    top = summary[summary.m == summary.groupby("dataset").m.transform("max")]
    private = top[top.private]
    usable = private[~abstaining(private)]
    best = usable.loc[usable.groupby(["dataset", "epsilon"]).sp_rmse.idxmin()]
    rows = []
    for (method, eps), g in private.groupby(["method", "epsilon"]):
        won = best[(best.method == method) & (best.epsilon == eps)].dataset
        out = abstaining(g)
        near = g[~out & (g.ratio_to_ols <= WITHIN)].dataset
        fit = g[~out & (g.r2 > 0)].dataset
        rows.append(
            {
                "method": method,
                "epsilon": eps,
                "datasets": g.dataset.nunique(),
                "proven": bool(g.proven.all()),
                "best": len(won),
                f"within_{WITHIN:g}x_ols": len(near),
                "r2_positive": len(fit),
                "median_ratio_to_ols": float(g[~out].ratio_to_ols.median()),
                "median_r2": float(g[~out].r2.median()),
                "abstained": int(out.sum()),
                "best_on": ";".join(sorted(won)),
                f"within_{WITHIN:g}x_on": ";".join(sorted(near)),
                "abstained_on": ";".join(sorted(g[out].dataset)),
            }
        )
    return pd.DataFrame(rows).sort_values(["epsilon", "best", "median_ratio_to_ols"], ascending=[True, False, True])


def run_benchmark_intervals(
    analysis,
    method: Method,
    inputs: Mapping[str, str],
    spec: TuningSpec,
    *,
    epsilons: Sequence[float],
    grid: Sequence[int],
    small_m: int | None,
    reps: int,
    test_fraction: float,
    params: Mapping,
    seed: int,
    privacy: Privacy,
    level: float,
    route: str,
    share: float,
) -> tuple[pd.DataFrame, dict]:
    """One (data set, method) of the benchmark's private intervals (:mod:`dpcost.analysis.intervals`) at each ε and
    m of its cells, on its subsamples (the identity ``benchmark:<data set>``, training rows only, with each ε's
    tuning as :func:`run_benchmark` chooses it), and the OLS reference on the same subsamples: the tidy rows with
    ``epsilon`` (NaN: the reference) and the record (plans and refusals per ε)."""
    bench, design = training(analysis, inputs, params, test_fraction, seed)
    name = bench.name
    m_grid = m_of(grid, len(design.y), small_m)
    with open(inputs["meta"]) as fh:
        names = json.load(fh)["covariates"]
    kw = dict(m_grid=m_grid, reps=reps, seed=seed, dataset=name, level=level, names=names)
    tables = [run_reference(design, **kw).assign(epsilon=np.nan)]
    record = {
        "dataset": analysis.name,
        "method": method.name,
        "route": route,
        "level": level,
        "share": share,
        "m": m_grid,
        "plans": {},
        "refused": {},
        "why": None,
    }
    for eps in epsilons:
        p = dataclasses.replace(privacy, epsilon=float(eps))
        try:
            tuned = tuning_steps.tune(bench, method, inputs, spec, params=params, m_grid=m_grid, seed=seed, privacy=p)
            if tuned["mode"] == "private":
                record["why"] = PRIVATE_TUNING
                break
            _, _, by_m = tuning_steps.runner(method, tuned, m_grid)
            table, plans, refused = run_intervals(
                design, method.name, tuning_by_m=by_m, privacy=p, route=route, share=share, **kw
            )
        except DPCostError as exc:  # a calibration refused at this ε
            record["refused"][f"epsilon = {eps}"] = str(exc)
            continue
        record["plans"][str(eps)] = plans
        record["refused"].update({f"epsilon = {eps}, m = {m}": why for m, why in refused.items()})
        tables.append(table.assign(epsilon=float(eps)))
    return pd.concat(tables, ignore_index=True).assign(dataset=analysis.name), record


def summarize_intervals(per_rep: pd.DataFrame, records: Sequence[Mapping], methods: Sequence[str] = ()) -> pd.DataFrame:
    """Per data set × method × ε × m: coverage (the mean over the coefficients, and the lowest), ``undercovers``,
    median width over the OLS (HC3) interval's with and without the finite-population correction, power beside
    OLS's (:func:`dpcost.analysis.intervals.pooled`), and a note: the bias the route's interval ignores, and for the
    (data set, method) that made no interval at some ε or m, why; one row per data set and method of ``methods``
    (the benchmark's) that released none, saying why."""
    parts = []
    for dataset, d in per_rep.groupby("dataset", sort=True):
        ref = d[d.method == "ols"].drop(columns=["dataset", "epsilon"])  # every job of the data set made it
        ref = ref.drop_duplicates(["route", "m", "rep", "coefficient"])
        parts.append(pooled(intervals.summarize(ref.iloc[:0], ref)).assign(dataset=dataset))
        for eps, g in d[d.method != "ols"].groupby("epsilon", sort=True):
            cells = pooled(intervals.summarize(g.drop(columns=["dataset", "epsilon"]), ref))
            parts.append(cells[cells.method != "ols"].assign(dataset=dataset, epsilon=eps))
    out = pd.concat(parts, ignore_index=True)
    notes = {
        (r["dataset"], r["method"]): r["why"] or "; ".join(f"{k}: {w}" for k, w in r["refused"].items())
        for r in records
    }
    out["note"] = [
        "; ".join(t for t in (notes.get((d, k), "") if k != "ols" else "", intervals.note(k, r)) if t)
        for d, k, r in zip(out.dataset, out.method, out.route, strict=True)
    ]
    ran = {(r["dataset"], r["method"]) for r in records}
    missing = [
        {"dataset": d, "method": k, "note": intervals.NO_PROCEDURE}
        for d in sorted(set(out.dataset))
        for k in methods
        if k != "ols" and (d, k) not in ran
    ]
    out = pd.concat([out, pd.DataFrame(missing)], ignore_index=True) if missing else out
    first = ["dataset", "method", "route", "epsilon", "m"]
    return out[first + [c for c in out.columns if c not in first]].sort_values(first).reset_index(drop=True)


def run_benchmark_targeted(
    analysis,
    method: Method,
    inputs: Mapping[str, str],
    spec: TuningSpec,
    *,
    epsilons: Sequence[float],
    grid: Sequence[int],
    test_fraction: float,
    params: Mapping,
    seed: int,
    privacy: Privacy,
    options: Mapping,
) -> pd.DataFrame:
    """One (data set, method) of the benchmark's targeted attacks (:func:`dpcost.analysis.targeted.run_targeted`):
    the training rows are the population, the attack runs at the data set's largest benchmark m (:func:`m_of`), at
    every ε of the benchmark (OLS once), with each ε's constants as :func:`run_benchmark` chooses them and the
    identity ``benchmark:<data set>``. ``options``: the data set's ``targeted`` block (k_top, k_random, shadows,
    test_releases, reconstruction_nfev, alpha). The informed reconstruction runs for OLS only: matching a private
    release costs as much as the test, and housing's is measured by measurements/targeted_attacks.py. An ε whose
    calibration is refused is left out (logged). Columns: :data:`~dpcost.analysis.targeted.COLUMNS`, dataset, n_rows
    (the population), mean_leverage ((d + 1)/n_rows: the intercept counts) and residual_z (the target's residual on
    the population's OLS fit over the residuals' s.d.: with leverage, what exposes a row to OLS — a heavy row that
    sits on the fitted plane moves the fit little)."""
    from . import targeted

    bench, design = training(analysis, inputs, params, test_fraction, seed)
    name = bench.name
    m = max(m_of(grid, len(design.y)))
    keys = ("k_top", "k_random", "shadows", "test_releases", "reconstruction_nfev", "alpha")
    tables = []
    for eps in epsilons if method.private else [np.nan]:
        p = dataclasses.replace(privacy, epsilon=float(eps)) if method.private else privacy
        try:
            tuned = tuning_steps.tune(bench, method, inputs, spec, params=params, m_grid=[m], seed=seed, privacy=p)
            if tuned["mode"] == "private":
                return pd.DataFrame(columns=[*targeted.COLUMNS, "dataset", "n_rows", "mean_leverage", "residual_z"])
            _, _, by_m = tuning_steps.runner(method, tuned, [m])
            kw = {k: options[k] for k in keys}
            Xi = targeted.with_intercept(design.X)
            tables.append(
                targeted.run_targeted(
                    Xi,
                    design.y,
                    method,
                    tuning_by_m=by_m,
                    params=dict(params),
                    privacy=p,
                    seed=seed,
                    dataset=name,
                    targeted_m=[m],
                    reconstruct_private=False,
                    **kw,
                )
            )
        except DPCostError as exc:  # a calibration refused at this ε
            log.warning("%s at epsilon=%s refused: %s", method.name, eps, exc)
    n, d = design.X.shape
    Xi = targeted.with_intercept(design.X)
    resid = design.y - Xi @ np.linalg.lstsq(Xi, design.y, rcond=None)[0]
    z = resid / np.sqrt(resid @ resid / (n - d - 1))
    out = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=list(targeted.COLUMNS))
    return out.assign(
        dataset=analysis.name, n_rows=n, mean_leverage=(d + 1) / n, residual_z=z[out.target.to_numpy(dtype=int)]
    )


def summarize_targeted(table: pd.DataFrame) -> pd.DataFrame:
    """results/benchmark/targeted.csv: one row per data set × method × ε (OLS: ε empty) — the attack on the data
    set's top-leverage row (its leverage, the mean leverage and their ratio; its residual_z; OLS's informed
    reconstruction of it, the relative error of (x, y); the membership test's AUC ± s.e., TPR at FPR 0.1 % and 1 %,
    ε_lb, the (ε, δ) ceilings, within) beside the highest AUC over the random targets (``auc_random``) and whether
    every target of the cell is within its ceiling (``all_within``). ``table``: the rows of
    :func:`run_benchmark_targeted`."""
    if table.empty:
        return pd.DataFrame()
    t = table.assign(eps_key=table.epsilon.fillna(-1.0))
    top = t[t.kind == "top"].sort_values("leverage", ascending=False).drop_duplicates(["dataset", "method", "eps_key"])
    ols = t[(t.method == "ols")].set_index(["dataset", "target"]).rel_error
    keys = ["dataset", "method", "eps_key"]
    rand = t[t.kind == "random"].groupby(keys).auc.max().rename("auc_random")
    every = t.groupby(keys).within.agg(lambda w: bool(w.dropna().all()) if w.notna().any() else pd.NA)
    out = top.join(rand, on=keys).join(every.rename("all_within"), on=keys)
    out["ols_rel_error"] = [ols.get((ds, tg), np.nan) for ds, tg in zip(out.dataset, out.target, strict=True)]
    out["leverage_ratio"] = out.leverage / out.mean_leverage
    cols = [
        "dataset",
        "method",
        "epsilon",
        "delta",
        "m",
        "n_rows",
        "target",
        "leverage",
        "mean_leverage",
        "leverage_ratio",
        "residual_z",
        "ols_rel_error",
        "auc",
        "auc_se",
        "tpr_fpr0001",
        "tpr_fpr001",
        "epsilon_lb",
        "auc_ceiling",
        "tpr_ceiling0001",
        "tpr_ceiling001",
        "within",
        "auc_random",
        "all_within",
    ]
    first = {c: {k: i for i, k in enumerate(dict.fromkeys(table[c]))} for c in ("dataset", "method")}
    out = out.sort_values(keys, key=lambda c: c.map(first[c.name]) if c.name in first else c)
    return out[cols].reset_index(drop=True)
