"""The bootstrap engine: for every m and repetition, draw the subsample, estimate, score — reproducibly.

δ is resolved once per m, with n = m (the number of records the estimator sees), as in Cai, Wang & Zhang (2021) §6.
The plan of each m is computed once, from public quantities, and returned beside the table so that the ledger is
built from what ran instead of recomputing it.
"""

from __future__ import annotations

import functools
import logging
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..dp.privacy import Privacy
from ..errors import ConfigError
from ..estimators.registry import Method
from ..progress import Progress
from .streams import noise_rng

log = logging.getLogger(__name__)


def unwarned(caught) -> bool:
    """False if a release raised a PRIVACY WARNING (recorded in its plan); every other caught warning is passed on,
    each text once per process (not once per repetition)."""
    proven = True
    for w in caught:
        text = f"{w.filename}:{w.lineno}: {w.message}"
        if "PRIVACY WARNING" in str(w.message):
            proven = False
        elif text not in _SHOWN:
            _SHOWN.add(text)
            warnings.warn(text, w.category, stacklevel=2)
    return proven


_SHOWN: set[str] = set()


def plan_record(method: Method, privacy: Privacy, m: int, d: int, tuning: dict, params: dict) -> dict:
    """The plan of sample size m as a JSON-ready record, with every PRIVACY WARNING it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plan = method.make_plan(privacy, m, d, tuning, params)
    messages = sorted({str(w.message) for w in caught})
    for msg in messages:
        log.warning("%s, m=%d: %s", method.name, m, msg)
    return {"m": m, **plan.to_dict(), "warnings": messages}


class Draw(NamedTuple):
    """One release of :func:`releases`: its (m, rep), the estimate, the selected indices (or None), why the method
    abstained (released its fallback; None if it did not) and the subsample's rows (the design's)."""

    m: int
    rep: int
    estimate: np.ndarray
    support: np.ndarray | None
    abstained: str | None
    rows: object


def releases(
    design,
    method: Method,
    *,
    tuning: Mapping,
    params: Mapping,
    m_grid: Sequence[int],
    reps: int,
    seed: int,
    privacy: Privacy,
    dataset: str,
    tuning_by_m: Mapping[int, Mapping] | None = None,
):
    """Yield a :class:`Draw` for every m and repetition: the one place a release's subsample, constants and noise
    stream are derived, so that the error curves and the attacks on them (:mod:`dpcost.analysis.attack`) see the
    very same releases. Arguments as :func:`run_grid`. A method whose release reads only clipped sums
    (``Method.sums``), on a design that offers its rows clipped once (``clipped_rows``), is run through them
    (:meth:`Method.estimate_rows`): the same releases bit for bit, without a clip and a plan per repetition."""
    if reps < 1:
        raise ConfigError(f"reps must be >= 1, got {reps}")
    params, by_m = dict(params), dict(tuning_by_m or {})
    # a repetition at m costs about m rows' work for every method here (their fits are linear in m)
    progress = Progress(f"{dataset}, {method.name}", reps * sum(m_grid))
    fit = _fitter(design, method)
    for m in m_grid:
        tuning_m = dict(by_m.get(m, tuning))
        p_m = privacy.at(m) if method.private else None
        t0 = time.perf_counter()
        plans: dict = {}
        with warnings.catch_warnings():
            # said once per m by the plan (run_grid); the estimator repeats it on every call
            warnings.filterwarnings("ignore", message="PRIVACY WARNING")
            for rep in range(reps):
                rng = noise_rng(seed, dataset, method.name, m, rep, privacy=privacy, tuning=tuning_m, params=params)
                rows = design.subsample(m, rep, seed=seed, dataset=dataset)
                out = fit(rows, privacy=p_m, rng=rng, tuning=tuning_m, params=params, plans=plans)
                # a method-like without Outcome (a privately tuned method's own estimate) never abstains
                yield Draw(m, rep, *out, getattr(out, "abstained", None), rows)
                progress.advance(m)
        log.info("%s: m=%d, %d reps in %.2f s", method.name, m, reps, time.perf_counter() - t0)


def _fitter(design, method):
    """``fit(rows, *, privacy, rng, tuning, params, plans)``: the method's release on the subsample ``rows``."""
    if getattr(method, "sums", None) is not None and hasattr(design, "clipped_rows"):
        return functools.partial(method.estimate_rows, design.clipped_rows())

    def fit(rows, *, plans, **kw):
        return method.estimate(*design.draw_at(rows), **kw)

    return fit


def run_grid(
    design,
    method: Method,
    *,
    tuning: Mapping,
    params: Mapping,
    m_grid: Sequence[int],
    reps: int,
    seed: int,
    privacy: Privacy,
    dataset: str,
    tuning_by_m: Mapping[int, Mapping] | None = None,
    on_release: Callable[[Draw], None] | None = None,
) -> tuple[pd.DataFrame, list[dict]]:
    """One tidy row per (m, rep) — method, m, rep, ε, δ(m), the design's score columns and whether the method
    abstained (released its fallback: :class:`~dpcost.estimators.method.Abstention`) — and the plans per m.

    ``tuning`` must already be resolved (:meth:`Method.resolve_tuning`); ``tuning_by_m`` (resolved too) replaces it
    at the m it holds (the tuning step's choices). ``params`` are the analysis parameters (e.g. the sparsity s).
    Non-private methods get NaN for ε and δ and no plan. ``on_release``, if given, sees every :class:`Draw` as it is
    made (the score attack is scored there, in the same pass: :class:`dpcost.analysis.attack.ScoreAttack`).
    """
    if reps < 1:
        raise ConfigError(f"reps must be >= 1, got {reps}")
    by_m = dict(tuning_by_m or {})
    plans = [
        plan_record(method, privacy.at(m), m, design.d, dict(by_m.get(m, tuning)), dict(params))
        for m in m_grid
        if method.private
    ]
    rows = []
    for r in releases(
        design,
        method,
        tuning=tuning,
        params=params,
        m_grid=m_grid,
        reps=reps,
        seed=seed,
        privacy=privacy,
        dataset=dataset,
        tuning_by_m=by_m,
    ):
        eps_m, d_m = (privacy.epsilon, privacy.at(r.m).delta) if method.private else (np.nan, np.nan)
        scores = design.score(r.estimate, r.support, r.rows)
        rows.append((method.name, r.m, r.rep, eps_m, d_m, *scores, r.abstained is not None))
        if on_release is not None:
            on_release(r)
    columns = ["method", "m", "rep", "epsilon", "delta", *design.columns, "abstained"]
    return pd.DataFrame(rows, columns=columns), plans
