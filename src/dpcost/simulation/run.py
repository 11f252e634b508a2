"""One job of the simulation study: every repetition of one (experiment, n), every curve on the same draw.

Streams: the data of (problem, design, n, d, s*, rep) from :func:`dpcost.simulation.designs.draw`; the noise of each
release from :func:`dpcost.analysis.streams.noise_rng` with the curve's method and variant, the problem and sizes in
its identity, and the resolved constants (R included) — so no two releases share noise and no result depends on job
order, core count or executor.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import pandas as pd

from ..analysis.engine import plan_record
from ..analysis.streams import noise_rng
from ..dp import quantiles
from ..dp.spec import Privacy
from ..errors import DPCostError
from ..estimators.registry import get
from .designs import FAMILY, Design, draw
from .experiments import TRUNCATION, Curve, Experiment, constants
from .formula import evaluate

log = logging.getLogger(__name__)

COLUMNS = ["experiment", "figure", "panel", "problem", "method", "variant", "private", "n", "d", "s", "rep",
           "epsilon", "delta", "R", "error"]  # fmt: skip


def _truncated_values(problem: str, data: tuple) -> np.ndarray:
    """What R bounds, one value per record: y for a regression; for a mean, coordinate i mod d of record i (a public
    assignment). One value per record keeps the quantiles' sensitivity at 1; pooling all n·d coordinates would make
    it d (the rank of every candidate moves by up to d when a record is replaced)."""
    if FAMILY[problem] == "regression":
        return data[1]
    X = data[0]
    return X[np.arange(len(X)), np.arange(len(X)) % X.shape[1]]


def run_job(
    exp: Experiment,
    n: int,
    *,
    design: Design,
    tuning: Mapping,
    privacy: Privacy,
    theory_R: str,
    quantile_share: float,
    quantile_grid: Mapping,
    seed: int,
) -> tuple[pd.DataFrame, list[dict]]:
    """The tidy rows of every (curve, rep) at this n, and one plan record per private curve (its first repetition's:
    under ``R=dp_quantile`` and ``R=none`` R changes with the data, and the record says so)."""
    d, s = exp.dims(n)
    p_n = privacy.at(n)
    grid = quantiles.geometric_grid(**quantile_grid)
    params = {"s": s} if s is not None else {}
    base = {c.method: constants(get(c.method), tuning.get(c.method), n=n, d=d, s=s, sigma=design.sigma)
            for c in exp.curves}  # fmt: skip
    rows, plans, t0 = [], {}, time.perf_counter()
    where = f"simulation:{exp.problem}:{design.identity()}:d={d}:s={s}"
    for rep in range(exp.reps):
        data, truth = draw(design, exp.problem, n=n, d=d, s=s, rep=rep, seed=seed)
        for curve in exp.curves:
            method = get(curve.method)
            tun, p_est, extra = dict(base[curve.method]), p_n, {}
            rng = None
            if curve.variant and method.private:
                key = TRUNCATION[curve.method]
                values = _truncated_values(exp.problem, data)
                if curve.variant == "R=theory":
                    tun[key] = evaluate(theory_R, n=n, d=d, sigma=design.sigma)
                elif curve.variant == "R=none":
                    tun[key] = float(np.abs(values).max())
                else:
                    rng = noise_rng(seed, where, f"{curve.method}[{curve.variant}]", n, rep, privacy=privacy,
                                    tuning={**tun, "quantile_share": quantile_share}, params=params)  # fmt: skip
                    p_q = replace(p_n, epsilon=quantile_share * p_n.epsilon)
                    tun[key] = quantiles.truncation_level(values, privacy=p_q, rng=rng, candidates=grid)
                    p_est = replace(p_n, epsilon=(1 - quantile_share) * p_n.epsilon)
                extra = {"R": tun[key]}
            if rng is None:
                rng = noise_rng(seed, where, f"{curve.method}[{curve.variant}]", n, rep,
                                privacy=privacy, tuning=tun, params=params)  # fmt: skip
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="PRIVACY WARNING")  # recorded once in the plan below
                try:
                    est, _ = method.estimate(*data, privacy=p_est if method.private else None, rng=rng, tuning=tun,
                                             params=params)  # fmt: skip
                except DPCostError as exc:  # e.g. a paper calibration refused at this n: say which curve
                    raise type(exc)(f"{exp.name}, {curve.label}, n={n}: {exc}") from None
            if method.private and curve not in plans:
                plans[curve] = _plan(curve, method, p_est, n, d, tun, params, quantile_share)
            private = method.private and curve.variant != "R=none"
            rows.append((exp.name, exp.figure, exp.panel, exp.problem, curve.method, curve.variant, private, n, d,
                         s if s is not None else np.nan, rep, p_n.epsilon if method.private else np.nan,
                         p_n.delta if method.private else np.nan, extra.get("R", tun.get("R", np.nan)),
                         float(np.linalg.norm(est - truth))))  # fmt: skip
        del data
        if (rep + 1) % max(1, exp.reps // 10) == 0:
            log.info("%s n=%d: %d/%d repetitions, %.1f s", exp.name, n, rep + 1, exp.reps, time.perf_counter() - t0)
    return pd.DataFrame(rows, columns=COLUMNS), list(plans.values())


def _plan(curve: Curve, method, p_est: Privacy, n: int, d: int, tun: dict, params: dict, share: float) -> dict:
    record = {"method": curve.method, "variant": curve.variant, **plan_record(method, p_est, n, d, tun, params)}
    if curve.variant == "R=none":
        record["not_private"] = "R is the data's own largest |value|: the noise is scaled to the data, NOT private"
    elif curve.variant == "R=dp_quantile":
        record["quantile_step"] = {
            "epsilon": share * p_est.epsilon / (1 - share),
            "delta": 0.0,
            "mechanism": "two private quantiles (exponential mechanism on a public grid, dpcost.dp.quantiles)",
            "composition": "basic: the quantiles at share*epsilon, the estimator at (1 - share)*epsilon and delta",
        }
        record["note"] = "R is data-driven (private): the plan shown is the first repetition's"
    return record
