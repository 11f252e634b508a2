"""Private confidence intervals over a regression analysis's m grid and repetitions: the coverage of the
full-data OLS coefficient, the width against the non-private OLS interval's, and the power privacy costs.

At every (m, rep) the rows are the error curves' subsample (``design.subsample``, the draw the engine makes,
:func:`dpcost.analysis.engine.releases`), and each method releases its private interval (:func:`dpcost.inference.
interval`): its own release, the estimate and the interval together inside the method's (ε, δ), with noise from a
stream whose identity holds the method, m, rep, "interval", the level and the route (:func:`interval_rng`) — never
the error curve's. The reference is OLS on the same m rows, classical and HC3, with the finite-population correction
1 − m/n: the target is the OLS fit on the n rows the subsamples are drawn from (every row of the table, or its
training rows where some are held out), and m rows are a sample without replacement from them
(:func:`dpcost.inference.ols_interval`). A method without a procedure gets a row saying why, never an interval.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import ConfigError, DPCostError
from ..inference import PROCEDURES, interval
from ..inference.reference import ols_intervals
from ..progress import Progress
from .streams import rng_for

NO_PROCEDURE = "no private interval procedure (dpcost.inference.PROCEDURES): no interval released"
BASELINE = "non-private baseline: its intervals are the OLS reference rows (route classical, hc3)"
PRIVATE_TUNING = "tuning_mode private chooses the constants inside every release: no interval procedure runs that"
REFERENCE = ("classical", "hc3")  # the non-private OLS intervals, FPC applied; hc3 is the width ratio's yardstick
# HC3 without the FPC: the superpopulation interval, the yardstick of width_ratio_super (the FPC shrinks OLS's interval
# by √(1 − m/n): ×0.18 at m = 20,000 of 20,640, which inflates width_ratio there); β_N is not its target
SUPER = "hc3_super"
# a row under-covers when its coverage is below FLOOR by more than 2 standard errors of a coverage of FLOOR over its
# repetitions (issue 38's target; a one-sided test of coverage >= FLOOR at about 2.3 %)
FLOOR = 0.90
REFERENCE_NOTE = "non-private reference, finite-population correction 1 - m/n"
SUPER_NOTE = (
    "non-private superpopulation interval (HC3, no finite-population correction): the yardstick of "
    "width_ratio_super; the full-data OLS is not its target"
)
# what each private route's interval leaves out (the note column): the bias it cannot see
BIAS_NOTES = {
    "delta": "bias-aware where the ridge is on (its bias bounded from released values, docs/proofs.md); ignores "
    "clipping bias (not computable from released values)",
    "bootstrap": "basic bootstrap: the ridge's bias corrected to first order only; ignores clipping bias",
    "blocks": "blocks sized by the n_b*mu measured to cover on known truth (dpcost.inference.blocks); ignores the "
    "clipping and shrinkage bias that remains (not boundable from released values)",
    "censored": "blocks of unclipped OLS (no row clipping); ignores the gap between the block-average functional "
    "and full-data OLS (misspecification with heavy leverage) and, by default, the censoring's bias",
}
TIDY = ["method", "route", "m", "rep", "coefficient", "lower", "upper", "centre", "target", "level"]
SUMMARY = [
    "method",
    "route",
    "private",
    "m",
    "coefficient",
    "level",
    "n_reps",
    "coverage",
    "coverage_se",
    "undercovers",
    "mean_bias",
    "mean_half_width",
    "mean_width",
    "width_ratio",
    "width_ratio_super",
    "power",
    "ols_power",
    "epsilon",
    "delta",
    "note",
]


def runs(block: Mapping | None, methods: Sequence[str], where: str = "inference") -> list[str]:
    """The methods of ``methods`` (the analysis's, or the benchmark's) that release intervals under the ``inference``
    block: its ``methods`` (default: every one with a procedure), none when it is off. A listed method without a
    procedure, or a route a method does not have, is a :class:`ConfigError` naming the key (under ``where``)."""
    if not block or not block.get("enabled", False):
        return []
    listed = block.get("methods")
    for name in listed or ():
        if name not in PROCEDURES:
            raise ConfigError(
                f"{where}.methods: {name!r} has no private interval procedure; those that have one: "
                f"{sorted(PROCEDURES)}"
            )
    for name, route in (block.get("routes") or {}).items():
        if route not in PROCEDURES.get(name, ()):
            raise ConfigError(
                f"{where}.routes.{name}: {route!r} is not a route of {name} ({PROCEDURES.get(name, 'no procedure')})"
            )
    return [k for k in methods if k in PROCEDURES and (listed is None or k in listed)]


def options(block: Mapping, method: str) -> dict:
    """The arguments of one method's interval job: level, route (the block's, or the method's default; None for a
    method without a procedure, e.g. the reference's "ols"), share and the repetitions (None: all)."""
    route = (block.get("routes") or {}).get(method, PROCEDURES.get(method, (None,))[0])
    return {
        "level": float(block["level"]),
        "route": route,
        "share": float(block["share"]),
        "inference_reps": block.get("reps"),
    }


def why_not(methods: Sequence[str], private: Mapping[str, bool], ran: Sequence[str]) -> dict[str, str]:
    """Why each method of the analysis that released no interval did not."""
    return {k: (BASELINE if not private.get(k, True) else NO_PROCEDURE) for k in methods if k not in ran}


def interval_rng(
    seed: int,
    dataset: str,
    method: str,
    m: int,
    rep: int,
    *,
    level: float,
    route: str,
    privacy,
    tuning: Mapping,
    share: float,
) -> np.random.Generator:
    """The noise stream of one interval release: "interval", the level and the route are part of its identity, so it
    never shares noise with the error curve's release of the same (method, m, rep) (:func:`~.streams.noise_rng`)."""
    text = json.dumps(
        {"privacy": privacy.to_dict(), "tuning": dict(tuning), "share": share}, sort_keys=True, default=repr
    )
    return rng_for(seed, dataset, "interval", method, m, rep, level, route, text)


def full_data_ols(design) -> np.ndarray:
    """The target: OLS on the n rows the subsamples are drawn from."""
    return np.linalg.lstsq(design.X, design.y, rcond=None)[0]


def run_intervals(
    design,
    method: str,
    *,
    tuning_by_m: Mapping[int, Mapping],
    m_grid: Sequence[int],
    reps: int,
    seed: int,
    privacy,
    dataset: str,
    level: float,
    route: str,
    share: float,
    names: Sequence[str] | None = None,
) -> tuple[pd.DataFrame, list[dict], dict[str, str]]:
    """The tidy rows (:data:`TIDY`, one per (m, rep, coefficient)), the plan of each m's release (one record per m,
    as :func:`dpcost.analysis.engine.plan_record`), and the m whose release the procedure refused, with why."""
    target = full_data_ols(design)
    names = list(names) if names is not None else [f"b{j}" for j in range(design.d)]
    rows, plans, refused = [], [], {}
    progress = Progress(f"{dataset}, {method} intervals ({route})", reps * sum(m_grid))  # as run_grid's: rows
    for m in m_grid:
        constants = dict(tuning_by_m[m])
        extra = {"share": share} if route != "blocks" else {}
        plan_m = None
        try:
            for rep in range(reps):
                X, y = design.draw_at(design.subsample(m, rep, seed=seed, dataset=dataset))
                rng = interval_rng(
                    seed,
                    dataset,
                    method,
                    m,
                    rep,
                    level=level,
                    route=route,
                    privacy=privacy,
                    tuning=constants,
                    share=share,
                )
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    iv = interval(
                        method, X, y, privacy=privacy, rng=rng, level=level, route=route, **constants, **extra
                    )
                if plan_m is None:
                    said = sorted({str(w.message) for w in caught if "PRIVACY WARNING" in str(w.message)})
                    plan_m = {"m": int(m), **iv.plan.to_dict(), "warnings": said}
                rows += [
                    (method, route, int(m), rep, names[j], iv.lower[j], iv.upper[j], iv.centre[j], target[j], level)
                    for j in range(design.d)
                ]
                progress.advance(m)
        except DPCostError as exc:  # e.g. too few rows for k blocks at the smallest m
            refused[str(m)] = str(exc)
            rows = [r for r in rows if r[2] != m]
            continue
        plans.append(plan_m)
    return pd.DataFrame(rows, columns=TIDY), plans, refused


def run_reference(
    design,
    *,
    m_grid: Sequence[int],
    reps: int,
    seed: int,
    dataset: str,
    level: float,
    names: Sequence[str] | None = None,
) -> pd.DataFrame:
    """The non-private OLS intervals on the same subsamples (:data:`TIDY`, method "ols", route classical or hc3),
    with the finite-population correction for the n rows the subsamples are drawn from, and HC3 without it (route
    :data:`SUPER`, the superpopulation interval: the yardstick of ``width_ratio_super``)."""
    target = full_data_ols(design)
    n = len(design.y)
    names = list(names) if names is not None else [f"b{j}" for j in range(design.d)]
    rows = []
    progress = Progress(f"{dataset}, OLS reference intervals", reps * sum(m_grid))  # rows, as run_grid counts
    for m in m_grid:
        for rep in range(reps):
            X, y = design.draw_at(design.subsample(m, rep, seed=seed, dataset=dataset))
            routes = [*((c, c, n) for c in REFERENCE), ("hc3", SUPER, None)]
            fitted = ols_intervals(X, y, level=level, routes=[(cov, population) for cov, _, population in routes])
            for (_, route, _), iv in zip(routes, fitted, strict=True):  # one fit, its three intervals
                rows += [
                    ("ols", route, int(m), rep, names[j], iv.lower[j], iv.upper[j], iv.centre[j], target[j], level)
                    for j in range(design.d)
                ]
            progress.advance(m)
    return pd.DataFrame(rows, columns=TIDY)


def _cells(t: pd.DataFrame) -> pd.DataFrame:
    """Per (method, route, m, coefficient): level, n_reps, coverage and its s.e., whether it under-covers, the mean
    bias of the centre (centre − target, an evaluation statistic: the target is not released), mean half-width and
    width, power."""
    t = t.assign(
        covers=(t.lower <= t.target) & (t.target <= t.upper),
        width=t.upper - t.lower,
        excludes_zero=(t.lower > 0) | (t.upper < 0),
        error=t.centre - t.target,
    )
    g = t.groupby(["method", "route", "m", "coefficient"], sort=False)
    out = g.agg(
        level=("level", "first"),
        n_reps=("rep", "nunique"),
        coverage=("covers", "mean"),
        mean_bias=("error", "mean"),
        mean_width=("width", "mean"),
        power=("excludes_zero", "mean"),
    ).reset_index()
    out["coverage_se"] = np.sqrt(out.coverage * (1 - out.coverage) / out.n_reps)
    # the test's standard error is the null's, of a coverage of exactly FLOOR over n_reps: the observed one shrinks
    # with the coverage, so that at 4 repetitions a coefficient covered twice (0.50, s.e. 0.25) passed as covering
    out["undercovers"] = undercovers(out.coverage, np.sqrt(FLOOR * (1 - FLOOR) / out.n_reps))
    out["mean_half_width"] = out.mean_width / 2
    return out


def undercovers(coverage, se) -> np.ndarray:
    """Coverage below :data:`FLOOR` by more than 2 standard errors (NaN coverage: False)."""
    return np.asarray(np.asarray(coverage, dtype=float) < FLOOR - 2 * np.asarray(se, dtype=float))


def ratio(width: pd.Series, base: np.ndarray) -> np.ndarray:
    """width / base, NaN where base is 0 or missing."""
    base = np.nan_to_num(np.asarray(base, dtype=float), nan=0.0)
    ok = base > 0
    return np.where(ok, width / np.where(ok, base, 1.0), np.nan)


def summarize(
    per_rep: pd.DataFrame,
    reference: pd.DataFrame,
    *,
    why: Mapping[str, str] | None = None,
    privacy: Mapping[str, tuple[float, float]] | None = None,
) -> pd.DataFrame:
    """inference.csv: per method × route × m × coefficient (:data:`SUMMARY`) the coverage of the full-data OLS
    coefficient over repetitions and its standard error √(c(1 − c)/reps), ``undercovers`` (below 0.90 by more than 2
    s.e. of a coverage of 0.90, √(0.09/reps)), the mean bias of the centre over repetitions (``mean_bias``: centre −
    full-data OLS, beside the mean half-width: a bias of the order of the half-width is why an interval under-covers),
    the mean width, the width over the OLS (HC3, FPC) interval's at the same m and coefficient (``width_ratio``; NaN
    where that width is 0, at m = n) and over the superpopulation HC3 interval's (``width_ratio_super``; NaN without
    :data:`SUPER` rows), the share of repetitions whose interval excludes 0 (``power``) beside the OLS (HC3) interval's
    (``ols_power``). The OLS reference rows (method ols, routes classical, hc3, hc3_super) come first; a private row's
    note says which bias its interval ignores (:data:`BIAS_NOTES`); ``why``: one row per method that released no
    interval, saying why; ``privacy``: (ε, δ(m)) of each private method's rows, by (method, m)."""
    cells = _cells(pd.concat([reference, per_rep], ignore_index=True))
    key = pd.MultiIndex.from_frame(cells[["m", "coefficient"]])

    def of(route):
        return cells[(cells.method == "ols") & (cells.route == route)].set_index(["m", "coefficient"]).reindex(key)

    hc3 = of("hc3")
    cells["width_ratio"] = ratio(cells.mean_width, hc3["mean_width"].to_numpy())
    cells["width_ratio_super"] = ratio(cells.mean_width, of(SUPER)["mean_width"].to_numpy())
    cells["ols_power"] = hc3["power"].to_numpy()
    cells["private"] = cells.method != "ols"
    eps = [(privacy or {}).get((k, m), (np.nan, np.nan)) for k, m in zip(cells.method, cells.m, strict=True)]
    cells["epsilon"], cells["delta"] = [e for e, _ in eps], [d for _, d in eps]
    cells["note"] = [note(k, r) for k, r in zip(cells.method, cells.route, strict=True)]
    notes = pd.DataFrame(
        [{"method": k, "route": "", "private": k != "ols", "note": text} for k, text in (why or {}).items()],
        columns=SUMMARY,
    )
    out = cells[SUMMARY] if notes.empty else pd.concat([cells[SUMMARY], notes], ignore_index=True)
    return out.reset_index(drop=True)


def note(method: str, route: str) -> str:
    """The note of a row of inference.csv: the reference's, or the bias a private route's interval ignores."""
    if method == "ols":
        return SUPER_NOTE if route == SUPER else REFERENCE_NOTE
    return BIAS_NOTES.get(route, "")


def pooled(summary: pd.DataFrame) -> pd.DataFrame:
    """Per method × route × m (and ε, where the table has several): the coverage averaged over the coefficients, the
    median width ratios, the mean power, and ``undercovers`` if any coefficient's does — what the figure and the
    benchmark show."""
    keys = [k for k in ("dataset", "method", "route", "epsilon", "m") if k in summary]
    rows = summary[summary.m.notna()].copy()
    rows["epsilon"] = rows["epsilon"].fillna(-1.0)
    g = rows.groupby(keys, sort=True)
    out = g.agg(
        level=("level", "first"),
        n_reps=("n_reps", "min"),
        coverage=("coverage", "mean"),
        min_coverage=("coverage", "min"),
        undercovers=("undercovers", "any"),
        width_ratio=("width_ratio", "median"),
        width_ratio_super=("width_ratio_super", "median"),
        power=("power", "mean"),
        ols_power=("ols_power", "mean"),
    ).reset_index()
    out["epsilon"] = out["epsilon"].where(out["epsilon"] >= 0)
    return out


def theory_floor(d: int, epsilon: float, delta: float, m) -> np.ndarray:
    """√(1 + d·log(1/δ)/(m·ε²)): the width a private interval needs over the non-private one by the minimax rate of
    private OLS (Cai, Wang & Zhang 2021: E‖β̂ − β‖² ≍ σ²(d/m + d²log(1/δ)/(m²ε²)), so each coordinate's variance
    grows by the factor 1 + d·log(1/δ)/(mε²) and its interval's width by the square root), with the rate's unknown
    constant set to 1: an order of magnitude, not a bound (1.002 at m = 20,000, d = 8, ε = 1, δ = 1e-5)."""
    m = np.asarray(m, dtype=float)
    return np.sqrt(1 + d * math.log(1 / delta) / (m * epsilon**2))


def verdict(summary: pd.DataFrame) -> str:
    """The sentence a reader of inference.csv sees first: at the largest m, the narrowest private interval with no
    under-covering coefficient (its median width over the superpopulation OLS interval's, and its coverage), or, when
    every private interval under-covers some coefficient there, that none covers, in plain words: a table that shows
    "95 %" intervals covering 5 % beside ones that cover is one a hurried reader misuses."""
    cells = pooled(summary)
    private = cells[cells.method != "ols"]
    if private.empty:
        return "No method of this analysis has a private interval procedure."
    m = private.m.max()
    at = private[private.m == m]
    col, yardstick = "width_ratio_super", "the superpopulation OLS interval"
    if not at[col].notna().any():
        col, yardstick = "width_ratio", "OLS's interval with the finite-population correction"
    covering = at[~at.undercovers.astype(bool) & at[col].notna()]
    level = f"{float(at.level.iloc[0]):.0%}"
    if covering.empty:
        low = ", ".join(f"{r.method} ({r.route}) {r.min_coverage:.2f}" for r in at.sort_values("method").itertuples())
        return (
            f"At m = {int(m):,} no private interval covers every coefficient: each under-covers some coefficient "
            f"(coverage below {FLOOR:.2f} by more than 2 s.e.; lowest coverage: {low}). Do not read them as "
            f"{level} intervals: they are centred on a biased estimate."
        )
    best = covering.loc[covering[col].idxmin()]
    return (
        f"At m = {int(m):,} the narrowest private {level} interval that covers every coefficient is "
        f"{best.method} (route {best.route}): {best[col]:.3g}× the width of {yardstick} (median over the "
        f"coefficients), coverage {best.coverage:.2f} (lowest coefficient {best.min_coverage:.2f}); "
        f"{len(at) - len(covering)} of the {len(at)} private intervals there under-cover."
    )


def split_text(route: str, share: float, calibration: str) -> str:
    """How an interval's release shares the method's (ε, δ) (:mod:`dpcost.inference.budget`)."""
    if route == "blocks":
        return (
            "none: k blocks of the subsample, the estimator on each at the full (epsilon, delta), composed in "
            "parallel (one record is in one block)"
        )
    whole = "mu^2 (Gaussian DP)" if calibration == "tight" else "(epsilon, delta) (basic composition)"
    if route == "censored":  # blocks_ols: its interval's two releases of the censored blocks
        return (
            f"the estimate at 1 - {share:g} of {whole}, the censored blocks' mean square and censored fractions "
            f"(the interval's extra releases) at {share:g}"
        )
    return (
        f"the estimate at 1 - {share:g} of {whole}, the residual sum of squares (the interval's extra release) "
        f"at {share:g}"
    )


def refused_text(record: Mapping) -> str:
    """The m at which a method's interval job made no interval, and why."""
    return "; ".join(f"m = {m}: {w}" for m, w in record["refused"].items())


def ledger_entry(estimates: Sequence[dict], records: Sequence[dict]) -> dict:
    """The ledger's ``intervals``: each interval release's entry (:func:`~.ledger.method_entry` of its plans, with its
    route, level, split and extra releases), the methods that released none and why, and the table's composition
    with them: every interval is a release of its own on the same records, beside the error curves'."""
    from .ledger import method_entry, table_entry

    methods = {}
    for r in records:
        if not r["plans"]:
            methods[r["method"]] = {"label": r["label"], "released": False, "why": r.get("why") or refused_text(r)}
            continue
        entry = method_entry(r)
        for p, e in zip(r["plans"], entry["per_m"], strict=True):  # the σ̂² release (budget.residual_release)
            e["extra_releases"] = [rel for rel in p["releases"] if "sum of squared residuals" in rel["mechanism"]]
        methods[r["method"]] = {
            **entry,
            "released": True,
            "route": r["route"],
            "level": r["level"],
            "split": split_text(r["route"], r["share"], r["privacy"]["calibration"]),
            "refused": r["refused"],
        }
    renamed = [{**r, "method": f"{r['method']}+interval"} for r in records if r["plans"]]
    return {
        "what": "private confidence intervals (inference.csv): each method's interval is one release of its own on "
        "the subsample, the estimate and the interval inside the method's (epsilon, delta); publishing them beside the "
        "error curves composes with those",
        "methods": methods,
        "table_with_intervals": table_entry([*estimates, *renamed]),
    }
