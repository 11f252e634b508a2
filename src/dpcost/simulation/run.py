"""One job of the simulation study: the repetitions of one (experiment, n) — all, or one run of them
(``simulation.reps_per_job``) —, every curve on the same draw.

Streams: the data of (problem, design, n, d, s*, setting, rep) from :func:`dpcost.simulation.designs.draw`; the
noise of each release from :func:`dpcost.analysis.streams.noise_rng` with the curve's method, variant and ε, the
problem and sizes in its identity, and the resolved constants (R included) — so no two releases share noise and no
result depends on job order, core count or executor.

``proven`` is False for a release whose calibration raised a PRIVACY WARNING (a paper's calibration or sensitivity
outside its proven range, run because ``on_invalid`` is ``warn``; or a paper's procedure whose guarantee has a gap,
such as ``dpsl_kt_paper``, which always warns): its guarantee is NOT PROVEN, and the tables, the legends and the
ledger say so.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace

import numpy as np
import pandas as pd

from ..analysis.engine import plan_record, unwarned
from ..analysis.formula import evaluate
from ..analysis.streams import noise_rng
from ..dp import quantiles
from ..dp.privacy import Privacy
from ..errors import ConfigError, DPCostError
from ..estimators.registry import METHODS, get
from . import sparsity
from .designs import Design, analysis_params, draw, error, plan_facts, public_features
from .experiments import R_VARIANTS, Curve, Experiment, constants
from .problems import PROBLEMS

log = logging.getLogger(__name__)

# what distinguishes one curve's point of the study (its experiment and design); the tables' keys start with these
DESIGN_KEYS = ["experiment", "figure", "panel", "problem", "method", "variant", "private", "n", "d", "s", "p", "alpha"]
COLUMNS = [*DESIGN_KEYS, "rep", "epsilon", "delta", "R", "s_used", "epsilon_spent", "delta_spent", "proven", "error"]


def _truncated_values(problem: str, data: tuple) -> np.ndarray:
    """What R bounds, one value per record: y for a regression; for a mean, coordinate i mod d of record i (a public
    assignment). One value per record keeps the quantiles' sensitivity at 1; pooling all n·d coordinates would make
    it d (the rank of every candidate moves by up to d when a record is replaced)."""
    if PROBLEMS[problem].family == "regression":
        return data[1]
    X = data[0]
    return X[np.arange(len(X)), np.arange(len(X)) % X.shape[1]]


@dataclass(frozen=True)
class _Job:
    """What every curve of one job shares: the experiment at this n (its sizes and setting), the design, the noise
    streams' seed and identity (``where``), the problem's parameters and the truncation variants' constants."""

    exp: Experiment
    n: int
    d: int
    s: int | None
    setting: Mapping
    design: Design
    seed: int
    where: str
    params: dict
    grid: np.ndarray
    theory_R: str
    quantile_share: float


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
    s_tuning: sparsity.STuning | None = None,
    reps: range | None = None,
) -> tuple[pd.DataFrame, list[dict]]:
    """The tidy rows of every (curve, rep) at this n, and one plan record per private curve (its first repetition's:
    under ``R=dp_quantile`` and ``R=none`` R changes with the data, and the record says so). ``s_used`` is the
    sparsity the estimate was made with (ŝ under the sparsity variants); ``epsilon_spent``/``delta_spent`` what the
    whole procedure spends (above the stated level for ``s=cv_expmech``; NaN where not private).

    ``reps``: the repetitions to run (default all), one job's share of them; the rows are those of the same
    repetitions of the whole run. Only the share holding repetition 0 returns plan records, so that the ledger
    lists each curve's plan once however the repetitions are split."""
    reps = range(exp.reps) if reps is None else reps
    if not (reps.step == 1 and 0 <= reps.start < reps.stop <= exp.reps):
        raise ConfigError(f"{exp.name}: repetitions {reps.start}-{reps.stop - 1} are not among its 0-{exp.reps - 1}")
    with_plans = reps.start == 0
    d, s = exp.dims(n)
    setting = exp.setting_at(n)
    grid = quantiles.geometric_grid(**quantile_grid)
    params = analysis_params(exp.problem, n=n, s=s)
    base = {
        c.method: constants(
            get(c.method), exp.tuning_for(c.method, tuning), n=n, d=d, s=s, sigma=design.sigma, setting=setting
        )
        for c in exp.curves
    }
    # each curve's privacy: the study's, or the experiment's δ and the curve's ε (in its noise stream's identity)
    privacies = {c: exp.privacy(privacy, c) for c in exp.curves}
    rows, plans, t0 = [], {}, time.perf_counter()
    where = f"simulation:{exp.problem}:{design.identity(exp.problem)}:d={d}:s={s}"
    if setting:
        where += ":" + ":".join(f"{k}={v!r}" for k, v in setting.items())
    job = _Job(exp, n, d, s, setting, design, seed, where, params, grid, theory_R, quantile_share)
    tuners = {
        c: _STuner(exp, c, n, d, s, privacies[c].at(n), tuning, design.sigma, s_tuning, seed, where)
        for c in exp.curves
        if c.variant in sparsity.S_VARIANTS[1:]
    }
    for rep in reps:
        data, truth, facts, public = _draw(job, rep)
        for curve in exp.curves:
            need_plan = with_plans and curve not in plans
            if curve in tuners:  # a sparsity variant: ŝ chosen, then the estimate at ŝ (simulation.sparsity)
                est, s_used, spent, proven = tuners[curve].estimate(data, rep)
                if need_plan:
                    plans[curve] = tuners[curve].plan()
                R = base[curve.method].get("R", np.nan)
                err = error(exp.problem, est, truth)
                rows.append(
                    _row(exp, curve, True, n, d, s, setting, rep, privacies[curve].at(n), R, s_used, spent, proven, err)
                )
                continue
            row, plan = _estimate(
                job, curve, privacies[curve], dict(base[curve.method]), rep, data, truth, facts, public, need_plan
            )
            rows.append(row)
            if plan is not None:
                plans[curve] = plan
        del data
        done = rep + 1 - reps.start
        if done % max(1, len(reps) // 10) == 0:
            span, took = f"{reps.start}-{reps.stop - 1}", time.perf_counter() - t0
            log.info("%s n=%d: %d/%d repetitions (%s), %.1f s", exp.name, n, done, len(reps), span, took)
    return pd.DataFrame(rows, columns=COLUMNS), list(plans.values())


def _draw(job: _Job, rep: int) -> tuple[tuple, np.ndarray, dict, dict]:
    """(data, truth, facts, public) of repetition ``rep``: the draw every curve shares, read-only; the plan facts it
    implies; and the public data beside it (knowledge transfer's X̃), given to the estimators but not in the noise
    identity (it is a function of the draw's identity, which is)."""
    exp = job.exp
    kw = {"n": job.n, "d": job.d, "s": job.s, "rep": rep, "seed": job.seed}
    data, truth = draw(job.design, exp.problem, **kw, setting=job.setting)
    facts = plan_facts(exp.problem, data)
    public = {"X_public": public_features(job.design, exp.problem, **kw)} if PROBLEMS[exp.problem].kt_loss else {}
    for a in (*data, *public.values()):  # shared by every curve: read-only, so work on it is memoised by identity
        if isinstance(a, np.ndarray):  # (losses.frozen: e.g. one clipped copy and one ||X~||_op a repetition)
            a.flags.writeable = False
    return data, truth, facts, public


def _estimate(
    job: _Job,
    curve: Curve,
    p_c: Privacy,
    tun: dict,
    rep: int,
    data: tuple,
    truth,
    facts: dict,
    public: dict,
    need_plan: bool,
) -> tuple[tuple, dict | None]:
    """(row, plan) of one curve on one draw: the truncation variant's R (:func:`_truncation`), the estimate from the
    curve's own noise stream, whether a PRIVACY WARNING left its guarantee unproven, and, when ``need_plan``, the
    plan record of a private curve (None otherwise)."""
    exp, n = job.exp, job.n
    method = get(curve.method)
    p_n = p_c.at(n)
    spent = (p_n.epsilon, p_n.delta) if method.private and curve.variant != "R=none" else (np.nan, np.nan)
    rng, p_est, extra = _truncation(job, curve, method, p_c, p_n, tun, rep, data)
    if rng is None:
        rng = noise_rng(
            job.seed, job.where, f"{curve.method}[{curve.variant}]", n, rep, privacy=p_c, tuning=tun, params=job.params
        )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            est, _ = method.estimate(
                *data,
                privacy=p_est if method.private else None,
                rng=rng,
                tuning=tun,
                params={**job.params, **public},
            )
        except DPCostError as exc:  # e.g. a paper calibration refused at this n: say which curve
            raise type(exc)(f"{exp.name}, {curve.label}, n={n}: {exc}") from None
    proven = unwarned(caught)  # a PRIVACY WARNING: this release's guarantee is not proven
    plan = None
    if need_plan and method.private:
        plan = _plan(curve, method, p_est, n, job.d, tun, {**job.params, **facts, **public}, job.quantile_share)
        if facts:  # e.g. the comparison graph's d_max, which the estimator reads from each draw's graph
            plan.setdefault("note", f"the plan shown is the first repetition's: {sorted(facts)} change with the draw")
    private = method.private and curve.variant != "R=none"
    R = extra.get("R", tun.get("R", np.nan))
    p_row = p_n if method.private else None
    err = error(exp.problem, est, truth)
    return _row(exp, curve, private, n, job.d, job.s, job.setting, rep, p_row, R, job.s, spent, proven, err), plan


def _truncation(
    job: _Job, curve: Curve, method, p_c: Privacy, p_n: Privacy, tun: dict, rep: int, data: tuple
) -> tuple[np.random.Generator | None, Privacy, dict]:
    """(rng, privacy of the estimate, extra): a truncation variant (``R_VARIANTS``) of a private method sets its
    truncation constant in ``tun``: R=theory the public formula ``theory_R``, R=none the data's largest magnitude
    (not private), R=dp_quantile a private quantile at ``quantile_share``·ε, the estimate then at the rest of ε (the
    quantile and the estimate draw from one stream, returned). Any other curve: (None, ``p_n``, {})."""
    if not (curve.variant in R_VARIANTS and method.private):
        return None, p_n, {}
    rng, p_est = None, p_n
    key = METHODS[curve.method].truncation  # the constant the R= variants replace
    values = _truncated_values(job.exp.problem, data)
    if curve.variant == "R=theory":
        tun[key] = evaluate(job.theory_R, n=job.n, d=job.d, sigma=job.design.sigma)
    elif curve.variant == "R=none":
        tun[key] = float(np.abs(values).max())
    else:
        rng = noise_rng(
            job.seed,
            job.where,
            f"{curve.method}[{curve.variant}]",
            job.n,
            rep,
            privacy=p_c,
            tuning={**tun, "quantile_share": job.quantile_share},
            params=job.params,
        )
        p_q = replace(p_n, epsilon=job.quantile_share * p_n.epsilon)
        tun[key] = quantiles.truncation_level(values, privacy=p_q, rng=rng, candidates=job.grid)
        p_est = replace(p_n, epsilon=(1 - job.quantile_share) * p_n.epsilon)
    return rng, p_est, {"R": tun[key]}


def _row(exp, curve, private, n, d, s, setting, rep, p_n, R, s_used, spent, proven, err) -> tuple:
    nan = np.nan
    return (
        exp.name,
        exp.figure,
        exp.panel,
        exp.problem,
        curve.method,
        curve.variant,
        private,
        n,
        d,
        nan if s is None else s,
        setting.get("p", nan),
        setting.get("alpha", nan),
        rep,
        nan if p_n is None else p_n.epsilon,
        nan if p_n is None else p_n.delta,
        R,
        nan if s_used is None else s_used,
        spent[0],
        spent[1],
        proven,
        err,
    )


class _STuner:
    """One sparsity-variant curve at one n (:mod:`dpcost.simulation.sparsity`): its candidates, its budget (computed
    once: public), its streams and its plan record."""

    def __init__(self, exp, curve, n, d, s_star, p_n, tuning, sigma, s_tuning, seed, where):
        self.method, self.curve, self.problem, self.n, self.d, self.p_n, self.s_tuning = (
            get(curve.method),
            curve,
            exp.problem,
            n,
            d,
            p_n,
            s_tuning,
        )
        self.grid = s_tuning.candidates(s_star, d)
        own = exp.tuning_for(curve.method, tuning)
        self._tun = {s: constants(self.method, own, n=n, d=d, s=s, sigma=sigma) for s in self.grid}
        self.seed, self.where = seed, where
        self.budget = None
        if curve.variant != "s=cv_expmech":
            self.budget = sparsity.selection_budget(
                self.method,
                n,
                d,
                grid=self.grid,
                s_tuning=s_tuning,
                privacy=p_n,
                tuning_at=self.tuning_at,
                compose=curve.variant == "s=composed_selection",
            )

    def tuning_at(self, s: int) -> dict:
        return self._tun[s]

    def _stream(self, rep: int):
        label = f"{self.curve.method}[{self.curve.variant}]"
        # everything that distinguishes the releases: the selection's settings and every candidate's constants
        tun = {"s_tuning": asdict(self.s_tuning), "constants": {str(s): self._tun[s] for s in self.grid}}

        def stream(*release):
            return noise_rng(
                self.seed,
                self.where,
                label,
                self.n,
                rep,
                privacy=self.p_n,
                tuning=tun,
                params={"release": [str(r) for r in release]},
            )

        return stream

    def estimate(self, data, rep: int):
        kw = {"grid": self.grid, "tuning_at": self.tuning_at, "stream": self._stream(rep)}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")  # a PRIVACY WARNING is recorded in the plan and marks the row
            try:
                if self.curve.variant == "s=cv_expmech":
                    est, s_hat = sparsity.cv_expmech(
                        self.method, self.problem, data, s_tuning=self.s_tuning, privacy=self.p_n, **kw
                    )
                    spent = sparsity.cv_expmech_total(self.p_n, len(self.grid), self.s_tuning.folds)
                elif self.curve.variant == "s=private_selection":
                    est, s_hat = sparsity.private_selection(
                        self.method, self.problem, data, s_tuning=self.s_tuning, budget=self.budget, **kw
                    )
                else:
                    est, s_hat = sparsity.composed_selection(self.method, self.problem, data, budget=self.budget, **kw)
                if self.budget is not None:
                    spent = (self.budget.epsilon, self.p_n.delta)
            except DPCostError as exc:
                raise type(exc)(f"{self.curve.label}, n={self.n}: {exc}") from None
        return est, s_hat, spent, unwarned(caught)

    def plan(self) -> dict:
        m, n, d, grid, s_tuning = self.method, self.n, self.d, self.grid, self.s_tuning
        rec = {"method": self.curve.method, "variant": self.curve.variant, "candidates_s": list(grid)}
        if self.budget is None:
            eps, delta = sparsity.cv_expmech_total(self.p_n, len(grid), s_tuning.folds)
            fits = (s_tuning.folds - 1) * len(grid) + 1
            rec |= plan_record(m, self.p_n, n, d, self.tuning_at(grid[len(grid) // 2]), {"s": grid[len(grid) // 2]})
            rec["procedure"] = {
                "as_printed": "004 §5.2: 5-fold CV over the grid, validation losses truncated at a private "
                f"{s_tuning.loss_quantile} quantile, s by the exponential mechanism, the final fit with s-hat",
                "stated_level_holds": False,
                "total_epsilon": eps,
                "total_delta": delta,
                "argument": f"basic composition, conditioning on the fold fits: each record trains {fits - 1} fold "
                f"fits, plus the final fit, each at (epsilon, delta); the quantile (epsilon, 0) and the "
                f"exponential mechanism (epsilon, 0, sensitivity L/n given the fits)",
            }
            rec["note"] = "the plan shown is one fit's (the middle candidate's); the procedure spends total_epsilon"
            return rec
        b = self.budget
        rec |= plan_record(m, b.fit, n, d, self.tuning_at(max(grid)), {"s": max(grid), "s_max": b.s_max})
        rec["procedure"] = {
            "selection": "Papernot & Steinke (2022), Thm 2, RepeatAndSelect in dp-accounting's RDP accountant"
            if b.s_max is not None
            else "every candidate fitted and scored once; RDP composition of the candidates (dp-accounting)",
            "mean_K": s_tuning.mean_K if b.s_max is not None else None,
            "eta": s_tuning.eta if b.s_max is not None else None,
            "candidate_fit_epsilon": b.fit.epsilon,
            "score_epsilon": b.score_epsilon,
            "score": "centred loss + Laplace (dpcost.simulation.sparsity)",
            "stated_level_holds": True,
            "total_epsilon": b.epsilon,
            "total_delta": self.p_n.delta,
        }
        rec["note"] = "the plan shown is one candidate fit's (the largest s); the selection's total is total_epsilon"
        return rec


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
