"""A method as the workflow sees it: an estimator, its privacy plan, and what the registry reads from its signature
(the tuning keys and their defaults, the analysis parameters). The registry (:mod:`.registry`) lists them."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from ..dp.plan import PrivacyPlan
from ..dp.privacy import Privacy
from ..errors import ConfigError
from .cost import Cost
from .sums import ClippedRows, Sums, batch_of

# parameters an analysis gives every method that takes them (not tuning: they define the estimand, or, X_public,
# are the public data the analysis holds beside the private records); one with a default in the estimator is
# optional: an analysis that has none leaves the default (e.g. loss "squared" for the regression family)
ANALYSIS_PARAMS = ("s", "n_items", "loss", "X_public")
# parameters a workflow step sets, never the config: s_max calibrates a sparse estimator's noise for up to s_max
# selections, so that one noise law covers every candidate of a private selection of s (dpcost.simulation.sparsity)
CALIBRATION_PARAMS = ("s_max",)
_NOT_TUNING = ("privacy", "rng", *ANALYSIS_PARAMS, *CALIBRATION_PARAMS)


@dataclass(frozen=True)
class Abstention:
    """What an estimator returns when it releases its public fallback in place of an estimate (TukeyEM when its
    propose-test-release check fails: the public 0): the fallback, which is what was released, and why. The workflow
    counts these (``abstained`` in errors.parquet, ``abstain_rate`` in summary.csv) and no ranking counts a method
    that abstained in most repetitions as a result. Recording it is post-processing: the fallback is the release."""

    fallback: np.ndarray
    why: str


class Outcome(tuple):
    """A run's (estimate, selected indices or None), which unpacks as that pair, and ``abstained``: why the method
    released its fallback instead (:class:`Abstention`), or None."""

    def __new__(cls, estimate, support, abstained: str | None = None):
        self = super().__new__(cls, (estimate, support))
        self.abstained = abstained
        return self


@dataclass(frozen=True)
class Method:
    """An estimator as the workflow sees it.

    ``fn(*data, privacy=..., rng=..., **tuning)`` (non-private: ``fn(*data, **tuning)``) returns the estimate, or
    (estimate, selected indices). ``plan(privacy, n, d, **tuning)`` is its privacy plan, the one ``fn`` calls;
    None for a non-private baseline. ``peer`` names the library a peer method needs. ``support`` says how the
    selected coordinates of a sparse estimate are read: ``"returned"`` or ``"nonzero"`` (None: not sparse).
    ``group`` is one of :data:`GROUPS`. ``simulation_only``: run by the simulation study alone (its designs give the
    constants these need, e.g. a known sparsity), not offered to the m-grid analyses of its family (the LIBSVM
    knowledge-transfer study, :mod:`dpcost.analysis.transfer`, lists the methods it runs itself). ``batch`` is
    ``batch(*data, privacy=..., rngs=[...], tunings=[...], plans={}, **analysis_params)``: ``fn`` with many tuning
    sets on the same data, returning the separate calls' estimates bit for bit (see :meth:`estimate_batch`; a method
    with ``sums`` and no batch of its own gets :func:`.sums.batch_of`).
    ``blocks`` is ``blocks(Xs, ys, privacy=..., rng=..., **tuning)``: ``fn`` on k equal-sized blocks stacked on a
    leading axis at once, a (k, d) array of k releases, each ``fn``'s on its block with fresh noise (the blocks
    interval's fast path, :mod:`dpcost.inference.blocks`).
    ``label`` is the short name and citation (ledgers, tables, legends); ``what``, one phrase saying what the method
    does (e.g. "noisy X'X and X'y, with a ridge chosen privately"), which the figures' legends print after it.
    """

    name: str
    family: str
    label: str
    fn: Callable
    plan: Callable[..., PrivacyPlan] | None = None
    peer: str | None = None
    support: str | None = None
    group: str = "paper"
    simulation_only: bool = False
    also: tuple[str, ...] = ()  # further families whose problems the method runs on (with their analysis params)
    # every constant a data-independent rule of (n, d, ε, δ) in code, or chosen privately inside the release: it runs
    # under tuning_mode none, and as "none" under any mode when the config's tuning block sets none of its keys
    tuning_free: bool = False
    batch: Callable | None = None
    blocks: Callable | None = None
    what: str = ""
    # Every other fact about the method, here and nowhere else (no table keyed by method names outside the registry):
    # its private interval routes, the default first — "delta" and "bootstrap" read its ``statistics`` (the SSP
    # family's released X'X, X'y and ridge), "blocks" runs it on k disjoint blocks (any private estimator), "censored"
    # is blocks_ols's own (dpcost.inference); () when it has none
    intervals: tuple[str, ...] = ()
    statistics: Callable | None = None
    # the blocks route's smallest n_b·μ at which its block estimates were measured to cover (dpcost.inference.blocks)
    blocks_rows_mu: float | None = None
    # how its release reads only the clipped sums X'X, X'y of its rows (.sums.Sums): the engine then forms them from
    # the design clipped once (estimate_rows) and a targeted attack its shadows' sums (dpcost.analysis.targeted)
    sums: Sums | None = None
    # its CPU per plan, fit and row fitted at width d, measured (dpcost.run.workload); None: the workload's default
    cost: Cost | None = None
    # a yardstick of comparison.csv's ratio columns (dpcost.analysis.summaries.compare)
    reference: bool = False
    # the constant it truncates the data with, which the simulation study's R= variants replace (dpcost.simulation)
    truncation: str | None = None
    # what a paper published for it, {data set: ((mean, sd) per ε of the paper's table)} (dpcost.analysis.transfer)
    published: Mapping | None = None

    @property
    def private(self) -> bool:
        return self.plan is not None

    @functools.cached_property  # read once: the engine asks on every repetition
    def _keywords(self) -> dict[str, inspect.Parameter]:
        sig = inspect.signature(self.fn).parameters
        return {k: p for k, p in sig.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}

    @functools.cached_property
    def _plan_keywords(self) -> frozenset[str]:
        return frozenset(inspect.signature(self.plan).parameters) if self.plan else frozenset()

    def tuning_keys(self) -> tuple[str, ...]:
        return tuple(k for k in self._keywords if k not in _NOT_TUNING)

    def tuning_defaults(self) -> dict:
        """The tuning constants that have a default in code (the others are required from the config)."""
        kw = self._keywords
        return {k: kw[k].default for k in self.tuning_keys() if kw[k].default is not inspect.Parameter.empty}

    def required_tuning(self) -> tuple[str, ...]:
        return tuple(k for k in self.tuning_keys() if k not in self.tuning_defaults())

    def analysis_params(self) -> tuple[str, ...]:
        return tuple(k for k in self._keywords if k in ANALYSIS_PARAMS)

    def required_analysis_params(self) -> tuple[str, ...]:
        """The analysis parameters without a default: an analysis must give them."""
        kw = self._keywords
        return tuple(k for k in self.analysis_params() if kw[k].default is inspect.Parameter.empty)

    def calibration_params(self) -> tuple[str, ...]:
        return tuple(k for k in self._keywords if k in CALIBRATION_PARAMS)

    def resolve_tuning(self, tuning: Mapping | None, where: str = "") -> dict:
        """The defaults overlaid with ``tuning``; an unknown or missing key is a :class:`ConfigError` naming it."""
        tuning = dict(tuning or {})
        where = where or f"tuning.{self.name}"
        unknown = sorted(set(tuning) - set(self.tuning_keys()))
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {unknown}; {self.name} takes {list(self.tuning_keys())}")
        missing = [k for k in self.required_tuning() if k not in tuning]
        if missing:
            raise ConfigError(f"{where}: {self.name} is missing required key(s) {missing}")
        return {**self.tuning_defaults(), **tuning}

    def _params(self, params: Mapping) -> dict:
        kw = {k: params[k] for k in self.analysis_params() if k in params}
        return kw | {k: params[k] for k in self.calibration_params() if k in params}

    def estimate(self, *data, privacy: Privacy | None, rng: np.random.Generator, tuning: dict, params: dict):
        """Run the estimator; returns its :class:`Outcome`: (estimate, selected indices or None), and whether it
        abstained."""
        kw = {**tuning, **self._params(params)}
        out = self.fn(*data, privacy=privacy, rng=rng, **kw) if self.private else self.fn(*data, **kw)
        return self._with_support(out)

    def estimate_batch(self, *data, privacy: Privacy, rngs: list, tunings: list[dict], params: dict, plans: dict):
        """[:meth:`estimate` with ``rngs[i]`` and ``tunings[i]`` for every i], on the same data: through ``batch``
        when the method has one (the same numbers, with the runs' deterministic work shared and their plans kept in
        ``plans``, a memo owned by the caller), else one call each. A PrivacyError of any run is raised."""
        batch = self.batch or (batch_of(self.sums) if self.sums is not None else None)
        if batch is None:
            return [
                self.estimate(*data, privacy=privacy, rng=r, tuning=t, params=params)
                for r, t in zip(rngs, tunings, strict=True)
            ]
        outs = batch(*data, privacy=privacy, rngs=rngs, tunings=tunings, plans=plans, **self._params(params))
        return [self._with_support(out) for out in outs]

    def estimate_rows(
        self, table: ClippedRows, rows, *, privacy: Privacy, rng, tuning: dict, params: dict, plans: dict
    ):
        """:meth:`estimate` on the subsample ``rows`` of ``table``'s design, the same numbers, through ``sums`` (a
        method that has one): its clipped sums formed from the design clipped once (:class:`.sums.ClippedRows`), its
        plan computed once into ``plans`` (a memo owned by the caller)."""
        kw = {**tuning, **self._params(params)}
        G, b = table.sums(rows, kw[self.sums.row], kw[self.sums.out], (self.sums.row, self.sums.out))
        return self._with_support(self.sums.release(G, b, len(rows), privacy=privacy, rng=rng, plans=plans, **kw))

    def _with_support(self, out) -> Outcome:
        why = None
        if isinstance(out, Abstention):
            out, why = out.fallback, out.why
        if isinstance(out, tuple):
            return Outcome(*out, why)
        return Outcome(out, np.flatnonzero(out) if self.support == "nonzero" else None, why)

    def make_plan(self, privacy: Privacy, n: int, d: int, tuning: dict, params: dict) -> PrivacyPlan:
        """The plan for sample size n and dimension d (the plan takes the tuning keys it names, and ``s``)."""
        kw = {k: v for k, v in {**tuning, **params}.items() if k in self._plan_keywords}
        return self.plan(privacy, n, d, **kw)
