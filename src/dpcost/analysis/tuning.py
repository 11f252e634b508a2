"""Tuning as a workflow step: which constants every method runs with at every m, and which data chose them.

Three modes, the same for every method of an analysis (config key ``tuning_mode``):

``fixed``    the constants of the config's ``tuning`` block (code defaults fill the rest), at every m. Whoever wrote
             them may have looked at the real data: the analysis's ``not_private`` note says what is known.
``decoy``    for every m, the candidate of the config's ``search`` block (a grid over the ``tuning`` base) with the
             smallest geometric-mean error on *decoy* analyses, pooled over neighbouring m: the real full design X
             with synthetic responses (:class:`Decoys`: linear, heteroscedastic, misspecified or with a slope that
             changes with the row norm, clipped to the response's public range), the truth of each decoy its
             full-design OLS (as the real truth is). The real y is never read. What the choice still sees: the real
             design — all rows, with its conditioning and heavy rows — so it is NOT private with respect to X; the
             kinds, radii, noise levels and range are public constants of the config.
``private``  the choice is made inside each repetition, on the repetition's own subsample, by private selection
             from private candidates (:mod:`dpcost.dp.selection`), charged inside the same (ε, δ).
``none``     nothing is chosen by looking at data: only the tuning-free methods run (``Method.tuning_free``: every
             constant a data-independent rule of (n, d, ε, δ) in their code, or chosen privately inside the release),
             with no constant from the config. A tuning-free method whose config block sets none of its keys runs so
             under any mode, and is recorded as ``none``.

The evaluations of a candidate use their own streams (the dataset name carries the decoy), so tuning never shares
noise or subsamples with the reported runs.
"""

from __future__ import annotations

import functools
import itertools
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np
import pandas as pd

from ..dp.accountant import gaussian_epsilon
from ..dp.plan import PrivacyPlan, Release, noise_of
from ..dp.privacy import Privacy
from ..dp.samplers import add_noise, grid_scale
from ..dp.selection import candidate_mu_for, check_eta, check_mean_K, select_best
from ..errors import ConfigError, PrivacyError
from ..estimators.base import take_rows
from ..estimators.registry import Method
from .decoys import Decoys, decoy_choice, decoy_errors, decoy_search, merge_errors

log = logging.getLogger(__name__)

MODES = ("fixed", "decoy", "private", "none")


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ConfigError(f"tuning_mode must be one of {MODES}, got {mode!r}")
    return mode


def candidates(method: Method, base: Mapping | None, search: Mapping | None, where: str) -> list[dict]:
    """Every combination of the ``search`` lists over the resolved ``base`` constants, in grid order (the first
    key varies slowest); each checked by the registry (an unknown key or an empty list is a :class:`ConfigError`)."""
    base = method.resolve_tuning(base, where)
    search = dict(search or {})
    for key, values in search.items():
        if key not in method.tuning_keys():
            raise ConfigError(
                f"{where}: search over unknown key {key!r}; {method.name} takes {list(method.tuning_keys())}"
            )
        if not isinstance(values, (list, tuple)) or not values:
            raise ConfigError(f"{where}: search.{key} must be a non-empty list of candidate values")
    keys = list(search)
    return [{**base, **dict(zip(keys, combo, strict=True))} for combo in itertools.product(*search.values())]


# ---- private mode ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PrivateTuning:
    """Private selection from private candidates, per repetition (config block ``private_tuning``).

    mean_K      E[K], the expected number of candidate runs
    eta         shape of K's truncated negative binomial law (0: logarithmic, 1: geometric; Papernot & Steinke 2022)
    validation  share of the repetition's rows held out to score a candidate (the rest fit it)
    loss_cap    squared residuals are capped at this public bound before averaging (the score's sensitivity)
    """

    mean_K: float
    eta: float
    validation: float
    loss_cap: float

    @classmethod
    def from_config(cls, block: Mapping) -> PrivateTuning:
        private = cls(float(block["mean_K"]), float(block["eta"]), float(block["validation"]), float(block["loss_cap"]))
        if not (0 < private.validation < 1 and private.loss_cap > 0):
            raise ConfigError("private_tuning: validation must lie in (0, 1) and loss_cap be > 0")
        check_mean_K(private.mean_K)
        check_eta(private.eta)
        return private

    def to_dict(self) -> dict:
        return dict(mean_K=self.mean_K, eta=self.eta, validation=self.validation, loss_cap=self.loss_cap)


def _gaussian_mu2(plan: PrivacyPlan) -> float:
    """μ² of a plan whose releases are its whole mechanism and all additive Gaussian noise in l2,
    Σ count·((Δ + rounding)/σ)² (the grid's rounding is part of the shift between neighbours); else an error."""
    if not plan.whole_mechanism:
        raise ConfigError(
            f"{plan.method}: private selection needs releases that are the whole mechanism: {plan.whole_mechanism_why}"
        )
    mu2 = 0.0
    for r in plan.releases:
        if r.kind != "gaussian" or r.norm != "l2" or not r.sensitivity or not r.noise_scale:
            raise PrivacyError(
                f"private tuning needs candidates whose releases are all additive Gaussian noise; {plan.method} "
                f"releases {r.mechanism!r} ({r.kind}, {r.norm})"
            )
        mu2 += r.count * ((r.sensitivity + r.rounding) / r.noise_scale) ** 2
    return mu2


class PrivatelyTuned:
    """A registry method whose constants are chosen inside every repetition by private selection from private
    candidates (Liu & Talwar 2019; Papernot & Steinke 2022, Thm 2) — the engine runs it like a method.

    Each run k of the selection draws a candidate j uniformly, fits it on the training rows with the candidate's
    own Gaussian releases at (ε_c, δ_c), and scores it on the held-out rows by −(mean of the squared residuals
    capped at L) + N(0, σ_q²), sensitivity L/n_v. The split is drawn once per repetition, independently of the data,
    so a replaced record lies on one side: the run is μ_c-GDP (fit and score both μ_c-GDP, on disjoint rows).
    K ~ truncated negative binomial with E[K] = mean_K; the best-scoring fit is released. The whole procedure is
    (ε, δ)-DP with μ_c from :func:`dpcost.dp.selection.candidate_mu_for` (RDP accounting by dp-accounting).
    Only methods whose plans say their releases are their whole mechanism (``whole_mechanism``) and all Gaussian
    qualify (their μ is read from their plan and checked ≤ μ_c; another candidate is a ConfigError when its plan is
    made); the tune step runs the others at their fixed constants and says so.
    """

    private = True

    def __init__(self, method: Method, cands: Sequence[dict], selection: PrivateTuning):
        self.method, self.cands, self.selection = method, [dict(c) for c in cands], selection
        self.name, self.label, self.family = method.name, method.label, method.family

    def identity(self) -> dict:
        """What distinguishes this procedure's releases (part of its noise stream's identity)."""
        return {"mode": "private", "candidates": self.cands, **self.selection.to_dict()}

    def _rows(self, n: int) -> tuple[int, int]:
        n_v = max(1, round(self.selection.validation * n))
        if n - n_v < 2:
            raise PrivacyError(f"n={n} rows are too few to hold out {n_v} for validation")
        return n - n_v, n_v

    @functools.lru_cache(maxsize=64)  # noqa: B019 — a handful of instances, each asked once per m and repetition
    def budget(self, privacy: Privacy, n: int, d: int, params: tuple) -> dict:
        """The candidates' common budget at sample size n and every candidate's plan on the training rows."""
        if privacy.neighbours != "replace":
            raise PrivacyError("private tuning is analysed under replace-one neighbours (its split is positional)")
        n_t, n_v = self._rows(n)
        mu_c = candidate_mu_for(privacy.epsilon, privacy.delta, self.selection.mean_K, self.selection.eta)
        p_c = replace(privacy, epsilon=gaussian_epsilon(mu_c, privacy.delta))
        plans = [self.method.make_plan(p_c, n_t, d, c, dict(params)) for c in self.cands]
        for c, plan in zip(self.cands, plans, strict=True):
            if math.sqrt(_gaussian_mu2(plan)) > mu_c * (1 + 1e-9):
                raise PrivacyError(f"{self.name} {c}: its releases spend more than the candidate budget mu={mu_c:.4g}")
        sens = self.selection.loss_cap / n_v
        sigma_q = grid_scale(sens / mu_c, sens, 1, "l2", "gaussian", privacy.sampler)
        return {"mu_c": mu_c, "privacy_c": p_c, "n_train": n_t, "n_val": n_v, "sigma_q": sigma_q, "plans": plans}

    def make_plan(self, privacy: Privacy, n: int, d: int, tuning: Mapping, params: Mapping) -> PrivacyPlan:
        b = self.budget(privacy, n, d, tuple(sorted(params.items())))
        s = self.selection
        comp = (
            f"private selection from private candidates (Papernot & Steinke 2022, Thm 2; dp-accounting "
            f"RepeatAndSelect, RDP): K ~ truncated negative binomial (eta = {s.eta:g}), E[K] = {s.mean_K:g}, each run "
            f"mu_c-GDP with mu_c = {b['mu_c']:.6g}: a candidate of {len(self.cands)} fit on {b['n_train']} rows at "
            f"(eps_c, delta_c) = ({b['privacy_c'].epsilon:.4g}, {privacy.delta:.3g}) and its capped validation loss "
            f"on the other {b['n_val']} rows (Gaussian, sensitivity loss_cap/n_val)"
        )
        assumption = (
            f"each candidate enforces its own bounds (e.g. {b['plans'][0].assumption}); squared residuals capped at "
            f"{s.loss_cap}; a split of the rows drawn independently of the data"
        )
        rel = Release(
            "private selection: the best of K candidate runs (Papernot & Steinke 2022)",
            None,
            "none",
            None,
            kind="repeat_and_select",
            noise=noise_of(privacy.sampler),
        )
        params_out = {
            "tuning_mode": "private",
            "candidates": len(self.cands),
            "candidate_mu": b["mu_c"],
            "candidate_epsilon": b["privacy_c"].epsilon,
            "score_noise": b["sigma_q"],
            **s.to_dict(),
        }
        proven = all(p.proven for p in b["plans"])
        why = (
            "private selection from private candidates: the candidates' runs (K of them, K random) are not recorded "
            "as releases; entered at the plan's RDP accounting"
        )
        return PrivacyPlan(
            self.name,
            privacy.epsilon,
            privacy.delta,
            privacy.calibration,
            comp,
            assumption,
            (rel,),
            privacy.relation,
            params_out,
            proven,
            whole_mechanism=False,
            whole_mechanism_why=why,
        )

    def estimate(self, X, y, *, privacy: Privacy, rng: np.random.Generator, tuning: Mapping, params: Mapping):
        n, d = X.shape
        b = self.budget(privacy, n, d, tuple(sorted(params.items())))
        perm = rng.permutation(n)
        val, train = perm[: b["n_val"]], perm[b["n_val"] :]
        base = int(rng.integers(0, 2**63))
        # gathered once for the K runs, read-only: no run can change another's data, and a method's memo of its
        # clipped design (FrozenMemo) serves every run
        X_train, y_train, X_val, y_val = (take_rows(a, i) for a, i in ((X, train), (y, train), (X, val), (y, val)))
        for a in (X_train, y_train, X_val, y_val):
            if isinstance(a, np.ndarray):  # a sparse design (LIBSVM tables) has no flags
                a.setflags(write=False)

        def run(j: int, k: int):
            r = np.random.default_rng([base, k])  # run k's own stream: fresh noise for every run
            fit, _ = self.method.estimate(
                X_train, y_train, privacy=b["privacy_c"], rng=r, tuning=self.cands[j], params=params
            )
            loss = np.minimum((y_val - X_val @ fit) ** 2, self.selection.loss_cap).mean()
            return fit, -float(add_noise(loss, "gaussian", b["sigma_q"], r, privacy.sampler))

        chosen = select_best(run, len(self.cands), self.selection.mean_K, self.selection.eta, rng)
        if chosen.output is None:  # K = 0 (Poisson K only): nothing was run; the estimate 0 is data-independent
            return np.zeros(d), None
        return chosen.output, None


# ---- the workflow step ----------------------------------------------------------------------------------------------

LOOKED_AT = {
    "fixed": "the constants of the config's tuning block, written by people who may have seen the real data (see the "
    "analysis's not_private notes)",
    "decoy": "the real full design X (all rows: NOT private with respect to X) with decoy responses built from public "
    "constants; never the real y",
    "private": "only each repetition's own subsample, through private selection charged inside the same "
    "(epsilon, delta)",
    "none": "nothing: every constant is a data-independent rule of (n, d, epsilon, delta) in the method's code, or "
    "chosen privately inside the release",
}


def check_setup(family: str, mode: str, search: Mapping | None, where: str) -> None:
    """Refuse a mode the analysis's family cannot run (decoys and validation losses are defined for regression)."""
    check_mode(mode)
    if mode in ("decoy", "private") and search and family != "regression":
        raise ConfigError(f"{where}: tuning_mode {mode!r} is defined for regression analyses only; use 'fixed'")


def check_none(method: Method, tuning: Mapping | None, where: str) -> None:
    """Refuse what tuning_mode none cannot run: a private method with constants someone chose (not tuning-free), or
    a tuning-free one whose config block sets its constants."""
    if method.private and not method.tuning_free:
        raise ConfigError(
            f"{where}: tuning_mode none runs only the tuning-free methods (their constants are rules of n, d, epsilon, "
            f"delta); {method.name}'s constants are chosen, so run it under another mode"
        )
    if tuning:
        raise ConfigError(f"{where}: tuning_mode none reads no constants from the config; remove {sorted(tuning)}")


@dataclass(frozen=True)
class TuningSpec:
    """How one method's constants are chosen: the mode, and the blocks of the analysis's config it reads (the
    method's ``tuning`` and ``search`` entries, ``decoys``, ``private_tuning``)."""

    mode: str = "fixed"
    tuning: Mapping | None = None
    search: Mapping | None = None
    decoys: Mapping | None = None
    private_tuning: Mapping | None = None

    @classmethod
    def of(cls, block: Mapping, method: str, *, decoys: Mapping | None = None) -> TuningSpec:
        """The spec of ``method`` in a dataset's config block; ``decoys`` replaces the block's (e.g. the map's)."""
        return cls(
            block.get("tuning_mode", "fixed"),
            block.get("tuning", {}).get(method),
            block.get("search", {}).get(method),
            decoys or block.get("decoys"),
            block.get("private_tuning"),
        )

    def to_dict(self) -> dict:
        return asdict(self)


def tune(
    analysis,
    method: Method,
    inputs: Mapping[str, str],
    spec: TuningSpec,
    *,
    params: Mapping,
    m_grid: Sequence[int],
    seed: int,
    privacy: Privacy,
    parts: Sequence[Mapping[int, np.ndarray]] | None = None,
) -> dict:
    """The tuning record of one (analysis, method): mode, what the choice looked at, the constants of every m (or the
    candidates of a private selection), and under ``table`` every candidate's decoy score (empty otherwise).

    A non-private method, one without a search space, and under ``private`` one whose releases are not its whole
    mechanism, run the config's constants (recorded as ``fixed``, with the mode that was asked for and why).
    ``parts``: the decoy errors of consecutive parts of the m grid (:func:`decoy_part`, one job each); the decoy
    search then chooses from them instead of running, and the record is the same bit for bit."""
    mode, tuning, search = spec.mode, spec.tuning, spec.search
    check_setup(analysis.family, mode, search, f"{analysis.name}.search.{method.name}")
    none = runs_as_none(method, spec)
    if none:
        check_none(method, tuning, f"{analysis.name}.tuning.{method.name}")
    base = method.resolve_tuning(tuning, f"{analysis.name}.tuning.{method.name}")
    record = {"dataset": analysis.name, "method": method.name, "mode": mode, "requested_mode": mode}
    empty = pd.DataFrame(columns=["candidate", "m", "error", "se", "score", "pooled"])
    if none:
        choices = {str(m): base for m in m_grid}
        return {**record, "mode": "none", "looked_at": LOOKED_AT["none"], "choices": choices, "table": empty}
    why_fixed = None
    if mode != "fixed" and (not method.private or not search):
        why_fixed = "no search space for this method"
    elif mode == "private":  # the method's plan says whether its releases are its whole mechanism
        plan = method.make_plan(privacy.at(min(m_grid)), min(m_grid), 1, base, params)
        if not plan.whole_mechanism:
            why_fixed = f"private selection needs releases that are the whole mechanism: {plan.whole_mechanism_why}"
    if mode == "fixed" or why_fixed:
        looked = LOOKED_AT["fixed"] + (f" ({why_fixed})" if why_fixed else "")
        choices = {str(m): base for m in m_grid}
        return {**record, "mode": "fixed", "looked_at": looked, "choices": choices, "table": empty}
    cands = candidates(method, tuning, search, f"{analysis.name}.search.{method.name}")
    record.update(looked_at=LOOKED_AT[mode], search=dict(search))
    if mode == "decoy":
        decoys = Decoys.from_config(spec.decoys or {})
        if parts:
            choices, table = decoy_choice(
                merge_errors(parts), method, cands, decoys, m_grid=m_grid, dataset=analysis.name
            )
        else:
            choices, table = decoy_search(
                analysis.load(inputs, params),
                method,
                cands,
                decoys,
                params=params,
                m_grid=m_grid,
                seed=seed,
                privacy=privacy,
                dataset=analysis.name,
            )
        return {
            **record,
            "decoys": dict(spec.decoys),
            "choices": {str(m): c for m, c in choices.items()},
            "table": table,
        }
    selection = PrivateTuning.from_config(spec.private_tuning or {})
    PrivatelyTuned(method, cands, selection).make_plan(privacy.at(min(m_grid)), min(m_grid), 1, {}, params)  # checks
    return {**record, "private_tuning": selection.to_dict(), "candidates": cands, "table": empty}


def runs_as_none(method: Method, spec: TuningSpec) -> bool:
    """Whether :func:`tune` runs ``method`` under mode none: asked for, or tuning-free with no constants set."""
    return spec.mode == "none" or (method.tuning_free and not spec.tuning)


def looks_at_data(method: Method, spec: TuningSpec) -> bool:
    """Whether :func:`tune` may read the data for ``method``: a decoy search or a private selection. Otherwise its
    record is the config's constants (modes none and fixed, or no search space), made where it is needed rather
    than by a tune job of its own."""
    return spec.mode in ("decoy", "private") and not runs_as_none(method, spec) and method.private and bool(spec.search)


def searches_decoys(method: Method, spec: TuningSpec) -> bool:
    """Whether :func:`tune` runs a decoy search for ``method`` (the only tuning a tune job can split over parts)."""
    return spec.mode == "decoy" and looks_at_data(method, spec)


def decoy_part(
    analysis,
    method: Method,
    inputs: Mapping[str, str],
    spec: TuningSpec,
    *,
    params: Mapping,
    m_grid: Sequence[int],
    part: Sequence[int],
    seed: int,
    privacy: Privacy,
) -> dict[int, np.ndarray]:
    """One part of a tune job split over its m grid: the decoy errors at the m of ``part`` (as :func:`tune` would
    compute them; it merges the parts), or {} when the method's tuning makes no decoy search."""
    check_setup(analysis.family, spec.mode, spec.search, f"{analysis.name}.search.{method.name}")
    if not searches_decoys(method, spec):
        return {}
    cands = candidates(method, spec.tuning, spec.search, f"{analysis.name}.search.{method.name}")
    return decoy_errors(
        analysis.load(inputs, params),
        method,
        cands,
        Decoys.from_config(spec.decoys or {}),
        params=params,
        m_grid=m_grid,
        seed=seed,
        privacy=privacy,
        dataset=analysis.name,
        part=part,
    )


def runner(method: Method, record: Mapping, m_grid: Sequence[int]):
    """What the engine runs for a tuning record: (the method or its private selection, the tuning constants, the
    constants of every m or None)."""
    if record["mode"] == "private":
        tuned = PrivatelyTuned(method, record["candidates"], PrivateTuning.from_config(record["private_tuning"]))
        return tuned, tuned.identity(), None
    by_m = {int(m): method.resolve_tuning(c) for m, c in record["choices"].items()}
    missing = [m for m in m_grid if m not in by_m]
    if missing:
        raise ConfigError(f"the tuning record of {method.name} has no constants for m = {missing}; rerun its tune job")
    return method, by_m[m_grid[0]], by_m
