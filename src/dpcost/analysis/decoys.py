"""Decoy analyses for ``tuning_mode: decoy``: synthetic responses on the real design, and the search that scores
every candidate on them (geometric-mean error, pooled over neighbouring m).

The real response is never read: a decoy is the real full design X with a response drawn from public constants
(kinds, radii, noise levels, the response's public range). What the choice still sees is X itself — all rows — so
it is NOT private with respect to X (the tuning record and the ledger say so).
"""

from __future__ import annotations

import functools
import itertools
import logging
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..dp.privacy import Privacy
from ..errors import ConfigError, PrivacyError
from ..estimators.ols import ols
from ..estimators.registry import Method
from ..progress import Progress
from .designs import RegressionDesign
from .engine import plan_record
from .streams import noise_rng, rng_for

log = logging.getLogger(__name__)


DECOY_KINDS = ("linear", "heteroscedastic", "misspecified", "interaction")


@dataclass(frozen=True)
class Decoys:
    """Decoy responses on the real design, one per (kind, radius, noise level); ``reps`` subsamples each per m.

    With β uniform on the sphere of the radius r and z standard normal (d covariates):
    linear           y = Xβ + σz
    heteroscedastic  y = Xβ + σ(‖x‖₂/√d)z          (noise grows with the row norm, as in skewed real data)
    misspecified     y = Xβ + tanh(XW)a + σz        (W: d × 20 with N(0, 1/d) entries, a ~ N(0, r²/20)): a
                                                     non-linear part, so clipping heavy rows biases as on real data
    interaction      y = Xβ + (‖x‖₂/√d − 1)Xv + σz  (v uniform on the sphere of radius r): heavy rows follow their
                                                     own slope
    With ``y_range`` = (lo, hi) every decoy response is then clipped to [lo, hi]: a response known to be bounded or
    top-coded (house values are capped at $500,001) gives its heavy rows a flatter slope, which is what makes early
    stopping and clipping matter on real data; unclipped decoys reward runs to convergence instead.

    ``pool``: the choice at an m scores each candidate over the decoy runs at m and at its ``pool`` neighbours on each
    side in the m grid, so that choices do not flip between neighbouring m on decoy noise.
    """

    kinds: tuple[str, ...]
    radius: tuple[float, ...]
    noise_sd: tuple[float, ...]
    reps: int
    y_range: tuple[float, float] | None = None
    pool: int = 0

    @classmethod
    def from_config(cls, block: Mapping) -> Decoys:
        kinds, radius, noise = tuple(block["kinds"]), tuple(block["radius"]), tuple(block["noise_sd"])
        if set(kinds) - set(DECOY_KINDS) or not kinds:
            raise ConfigError(f"decoys.kinds must be a non-empty list of {DECOY_KINDS}, got {list(kinds)}")
        if not radius or not noise or min(radius + noise) <= 0 or int(block["reps"]) < 1:
            raise ConfigError("decoys: radius and noise_sd must be non-empty lists of positive numbers, reps >= 1")
        y_range = block.get("y_range")
        if y_range is not None:
            if len(y_range) != 2 or not float(y_range[0]) < float(y_range[1]):
                raise ConfigError(f"decoys.y_range must be [lo, hi] with lo < hi, got {y_range}")
            y_range = (float(y_range[0]), float(y_range[1]))
        pool = int(block.get("pool", 0))
        if pool < 0:
            raise ConfigError(f"decoys.pool must be >= 0, got {pool}")
        return cls(kinds, radius, noise, int(block["reps"]), y_range, pool)

    def designs(self, X: np.ndarray, *, seed: int, dataset: str) -> list[RegressionDesign]:
        """The decoy analyses on the real full design X, decoy k from the stream (dataset, "decoy", k); the truth of
        each is its full-design OLS."""
        out = []
        n, d = X.shape
        for k, (kind, r, s) in enumerate(itertools.product(self.kinds, self.radius, self.noise_sd)):
            rng = rng_for(seed, dataset, "decoy", k)
            u = rng.normal(size=d)
            noise = s * rng.normal(size=n)
            if kind == "heteroscedastic":
                noise *= np.linalg.norm(X, axis=1) / math.sqrt(d)
            y = X @ (r * u / np.linalg.norm(u)) + noise
            if kind == "interaction":  # the slope changes with the row norm: heavy rows follow their own line
                v = rng.normal(size=d)
                y += (np.linalg.norm(X, axis=1) / math.sqrt(d) - 1) * (X @ (r * v / np.linalg.norm(v)))
            if kind == "misspecified":
                W, a = rng.normal(scale=1 / math.sqrt(d), size=(d, 20)), rng.normal(scale=r / math.sqrt(20), size=20)
                y += np.tanh(X @ W) @ a
            if self.y_range is not None:
                y = np.clip(y, *self.y_range)
            out.append(RegressionDesign(X, y, ols(X, y)))
        return out


def decoy_search(
    design: RegressionDesign,
    method: Method,
    cands: Sequence[dict],
    decoys: Decoys,
    *,
    params: Mapping,
    m_grid: Sequence[int],
    seed: int,
    privacy: Privacy,
    dataset: str,
) -> tuple[dict[int, dict], pd.DataFrame]:
    """The candidate with the smallest decoy score at every m, and the tidy table of every evaluation (candidate, m,
    mean error and its standard error over the decoy runs, ``score``, ``pooled``).

    ``score`` is the mean log error over the decoy runs (a geometric mean: every decoy counts by its relative error,
    so the hardest decoy does not decide alone); ``pooled`` averages it over m and its ``decoys.pool`` neighbours in
    the grid. The choice minimises ``pooled``. The same as :func:`decoy_choice` of the :func:`decoy_errors` of the
    parts of the m grid (the tune job split over parts does that)."""
    errors = decoy_errors(
        design, method, cands, decoys, params=params, m_grid=m_grid, seed=seed, privacy=privacy, dataset=dataset
    )
    return decoy_choice(errors, method, cands, decoys, m_grid=m_grid, dataset=dataset)


def decoy_errors(
    design: RegressionDesign,
    method: Method,
    cands: Sequence[dict],
    decoys: Decoys,
    *,
    params: Mapping,
    m_grid: Sequence[int],
    seed: int,
    privacy: Privacy,
    dataset: str,
    part: Sequence[int] | None = None,
) -> dict[int, np.ndarray]:
    """{candidate: its decoy errors (decoy, m, rep)} at the m of ``part`` (None: the whole grid), for every candidate
    that no plan and no run at those m refused. A run's subsample and noise streams are named by (decoy, m, rep), so
    the errors at an m do not depend on which other m are evaluated: the parts of a grid, put side by side
    (:func:`merge_errors`, which drops a candidate refused in any part), are the errors of the whole grid bit for
    bit. Each part plans only its own m: planning is most of noisy SGD's search (an RDP calibration per candidate
    and m), and three parts that each planned the whole grid took three times the unsplit job's time."""
    part = list(m_grid if part is None else part)
    fakes = decoys.designs(design.X, seed=seed, dataset=dataset)
    engine_log = logging.getLogger(plan_record.__module__)
    level = engine_log.level
    engine_log.setLevel(max(level, logging.WARNING))  # the tune log: one line per candidate, not one per m
    try:
        live = _planned(method, cands, privacy, part, fakes[0].d, params)
        return _evaluate(method, cands, live, fakes, decoys.reps, params, part, seed, privacy, dataset)
    finally:
        engine_log.setLevel(level)


def merge_errors(parts: Sequence[Mapping[int, np.ndarray]]) -> dict[int, np.ndarray]:
    """The errors of a grid from those of its consecutive parts: a candidate refused in any part is left out (as the
    unsplit search drops it), the others' arrays joined along the m axis."""
    kept = [c for c in parts[0] if all(c in p for p in parts[1:])]
    return {c: np.concatenate([p[c] for p in parts], axis=1) for c in kept}


def decoy_choice(
    errors: Mapping[int, np.ndarray],
    method: Method,
    cands: Sequence[dict],
    decoys: Decoys,
    *,
    m_grid: Sequence[int],
    dataset: str,
) -> tuple[dict[int, dict], pd.DataFrame]:
    """The choices and table of :func:`decoy_search` from the candidates' errors over the whole grid. Every
    candidate's errors are summarised by one groupby over (candidate, m) (the candidates in ascending order, as
    ``errors`` holds them): each group's rows are the candidate's errors at that m in run_grid's order, so its
    mean, sd and score are those of a groupby of its own errors."""
    if not errors:
        raise ConfigError(f"{dataset}.search.{method.name}: every candidate was refused (see the log)")
    parts = []
    for c, errs in errors.items():
        n_decoys, _, reps = errs.shape
        grid = np.tile(np.repeat(np.asarray(m_grid), reps), n_decoys)  # the order of run_grid's rows, decoy by decoy
        parts.append(pd.DataFrame({"candidate": c, "m": grid, "error": errs.ravel()}))
        log.info("%s: candidate %d/%d %s evaluated on %d decoys", method.name, c + 1, len(cands), cands[c], n_decoys)
    err = pd.concat(parts, ignore_index=True)
    err["log"] = np.log(err.error)
    err = err.groupby(["candidate", "m"]).agg(
        mean=("error", "mean"), sd=("error", "std"), n=("error", "size"), score=("log", "mean")
    )
    rows = [
        {"candidate": c, "m": int(m), "error": mean, "se": sd / math.sqrt(count), "score": score, **cands[c]}
        for (c, m), (mean, sd, count, score) in zip(err.index, err.itertuples(index=False), strict=True)
    ]
    table = pooled(pd.DataFrame(rows), decoys.pool)
    best = table.loc[table.groupby("m").pooled.idxmin()]  # ties: the first candidate in grid order
    choices = {int(r.m): cands[int(r.candidate)] for r in best.itertuples()}
    return choices, table


def pooled(table: pd.DataFrame, pool: int) -> pd.DataFrame:
    """``table`` with column ``pooled``: each candidate's ``score`` averaged over its m and the ``pool`` grid
    neighbours on either side (fewer at the ends of the grid)."""
    wide = table.pivot(index="candidate", columns="m", values="score")
    grid = list(wide.columns)
    smooth = {m: wide[grid[max(0, i - pool) : i + pool + 1]].mean(axis=1) for i, m in enumerate(grid)}
    out = table.copy()
    out["pooled"] = [smooth[m][c] for c, m in zip(out.candidate, out.m, strict=True)]
    return out


def _evaluate(method, cands, live, fakes, reps, params, m_grid, seed, privacy, dataset) -> dict[int, np.ndarray]:
    """Every live candidate's decoy errors (decoy, m, rep) at the m of ``m_grid`` (a candidate a run refuses is
    dropped).

    Each candidate's runs are those :func:`~dpcost.analysis.engine.run_grid` makes on each decoy (dataset
    ``<dataset>:decoy<k>``): the subsample stream of (decoy, m, rep), the candidate's own noise stream, its plan at
    every m. The loops are turned round so that what does not depend on the candidate is done once: each
    subsample is drawn once, made read-only (:func:`_frozen`: its checks are memoised) and every candidate fit on
    it (:meth:`Method.estimate_batch`, which also shares e.g. precond_gd's clipped X₀'X₀), and each plan is made and
    logged once per (candidate, m), not once per decoy.
    The table is the per-candidate one bit for bit (tests/unit/analysis/test_decoy_batch.py)."""
    errors = {c: np.empty((len(fakes), len(m_grid), reps)) for c in live}
    plans: dict = {}  # the estimators' plans, memoised for this search (each plan_record above gave its warnings)
    # a subsample at m costs about m rows' work for each candidate (as run_grid counts)
    progress = Progress(f"{dataset}, {method.name} decoy search", len(fakes) * reps * sum(m_grid))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PRIVACY WARNING")  # as in run_grid: said by the plan records
        for k, fake in enumerate(fakes):
            name = f"{dataset}:decoy{k}"
            for j, m in enumerate(m_grid):
                for rep in range(reps):
                    data = _frozen(fake.draw(m, rep, seed=seed, dataset=name))
                    stream = functools.partial(
                        noise_rng, seed, name, method.name, m, rep, privacy=privacy, params=params
                    )
                    fits = _fit_all(method, data, privacy.at(m), stream, {c: cands[c] for c in errors}, params, plans)
                    for c in [c for c in errors if c not in fits]:
                        del errors[c]
                    for c, fit in fits.items():
                        errors[c][k, j, rep] = fake.score(*fit)[0]
                    progress.advance(m)
    return errors


def _frozen(data: tuple) -> tuple:
    """A subsample's arrays made read-only (each owns its data: a fresh gather), so that what the estimators check
    or derive from them by identity (:class:`~dpcost.estimators.base.FrozenMemo`: e.g. that X is finite) is done
    once for the candidates that share them, not once per candidate."""
    for a in data:
        if isinstance(a, np.ndarray) and a.flags.owndata:
            a.flags.writeable = False
    return data


def _refused(method: Method, tuning: dict, exc: PrivacyError) -> None:
    log.warning("%s: candidate %s refused (%s); it cannot be chosen", method.name, tuning, exc)


def _planned(method, cands, privacy, m_grid, d, params) -> list[int]:
    """The candidates whose plan stands at every m, each plan logged with its PRIVACY WARNINGs as run_grid does (a
    candidate whose plan is refused, e.g. a paper calibration outside its range, is never a choice)."""
    live = []
    for c, tuning in enumerate(cands):
        try:
            for m in m_grid:
                plan_record(method, privacy.at(m), m, d, dict(tuning), dict(params))
        except PrivacyError as exc:
            _refused(method, tuning, exc)
            continue
        live.append(c)
    return live


def _fit_all(method, data, privacy, stream, tunings, params, plans) -> dict:
    """{candidate: (estimate, support)} of every candidate in ``tunings`` on one subsample, candidate c with the noise
    stream ``stream(tuning=...)``. A candidate whose run raises PrivacyError is logged as refused and left out:
    the batch is then rerun one candidate at a time from fresh streams, to find it."""
    try:
        fits = method.estimate_batch(
            *data,
            privacy=privacy,
            rngs=[stream(tuning=t) for t in tunings.values()],
            tunings=list(tunings.values()),
            params=params,
            plans=plans,
        )
        return dict(zip(tunings, fits, strict=True))
    except PrivacyError:
        pass  # some run refused: which one(s), below
    out = {}
    for c, tuning in tunings.items():
        try:
            out[c] = method.estimate(*data, privacy=privacy, rng=stream(tuning=tuning), tuning=tuning, params=params)
        except PrivacyError as exc:
            _refused(method, tuning, exc)
    return out
