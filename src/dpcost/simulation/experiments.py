"""Experiments of the simulation study: one figure panel each — a problem, its sizes, and the curves (a method under
a tuning variant) drawn on it — and how each curve's constants are resolved at (n, d, s*).

Variants (the ``variant`` column; empty where none applies):
``R=theory``       the truncation level of the theory, ``simulation.theory_R`` (2021: 4σ√log n; 2019: 2σ√log n)
``R=none``         no truncation: R is the largest |value| of the data it bounds — NOT private (the noise is scaled
                   to the data's own range); kept to reproduce Figure 1, labelled in the tables, figures and ledger
``R=dp_quantile``  R = max(|q̂₀.₀₂₅|, |q̂₀.₉₇₅|) by private quantiles (:mod:`dpcost.dp.quantiles`) at a share
                   ``quantile_share`` of ε; the estimator runs at the rest, (1 − share)ε and δ (basic composition)
The truncated values are the coordinates of x for the means and y for the regressions.
The sparsity variants (``s=true``, ``s=cv_expmech``, ``s=private_selection``, ``s=composed_selection``) of the
sparse estimators are in :mod:`dpcost.simulation.sparsity`.

An experiment may draw its private curves at several ε (``epsilon``, a number or a list; default the study's
``simulation.privacy.epsilon``): one curve per (method, variant, ε), each with its own noise stream (ε is in the
stream's identity); and at its own δ (``delta``, a number or a formula in n), e.g. where n counts items, not
records. BTL needs the comparison probability ``p`` (a number or a formula in n) and Sobolev the smoothness
``alpha`` (``Problem.setting``, :mod:`dpcost.simulation.problems`); both are formula variables of the constants.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from ..analysis.formula import evaluate, evaluate_int
from ..dp.delta import resolve_delta
from ..dp.privacy import Privacy
from ..errors import ConfigError, PrivacyError
from ..estimators.registry import METHODS, Method, get
from .designs import analysis_params
from .problems import PROBLEMS, SETTINGS, problem_of
from .sparsity import S_VARIANTS, TUNABLE, STuning

R_VARIANTS = ("R=theory", "R=none", "R=dp_quantile")
# counts: evaluated as whole numbers (as is every key whose code default is an int, e.g. dp_fourier's alpha) — except
# T of the nonparametric family, a truncation level there
INT_KEYS = ("T", "r", "block_size", "passes", "batch", "K")
TEXT_KEYS = ("family", "sensitivity", "mechanism")  # categorical constants: passed as written, never formulas


@dataclass(frozen=True)
class Curve:
    method: str
    variant: str = ""
    epsilon: float | None = None  # None: the study's simulation.privacy.epsilon

    @property
    def label(self) -> str:
        tags = [t for t in (self.variant, "" if self.epsilon is None else f"eps={self.epsilon:g}") if t]
        return f"{self.method} [{', '.join(tags)}]" if tags else self.method


@dataclass(frozen=True)
class Experiment:
    name: str
    figure: int
    panel: str
    problem: str
    d: int | str
    s: int | None
    n: tuple[int, ...]
    curves: tuple[Curve, ...]
    reps: int
    setting: tuple[tuple[str, int | float | str], ...] = ()  # (("p", 0.5),) or (("alpha", 2),): the problem's setting
    delta: float | str | None = None  # None: the study's simulation.privacy.delta
    tuning: tuple = ()  # ((method, ((key, value), ...)), ...): this experiment's constants, in place of the study's
    reps_per_job: int | None = None  # None: the study's simulation.reps_per_job

    def tuning_for(self, method: str, study: Mapping) -> dict:
        """The method's constants here: this experiment's ``tuning`` entry for it if it has one — in place of the
        study's ``simulation.tuning`` entry, not merged with it (a study key left over, such as IHT's ball radius
        C = 1 of the 2021 designs, would silently change another design's estimator) — else the study's."""
        own = dict(self.tuning)
        return dict(own[method]) if method in own else dict(study.get(method) or {})

    @classmethod
    def from_config(cls, name: str, block: Mapping, *, reps: int) -> Experiment:
        where = f"simulation.experiments.{name}"
        problem = block["problem"]
        entry = problem_of(problem, f"{where}.problem")
        sparse = entry.sparse
        s = block.get("s")
        if sparse != (s is not None):
            raise ConfigError(f"{where}: s is required for the sparse problems and only for them")
        setting = _setting(where, problem, block)
        variants = tuple(block.get("variants") or ())
        r_vars, s_vars = [v for v in variants if v in R_VARIANTS], [v for v in variants if v in S_VARIANTS]
        if len(r_vars) + len(s_vars) < len(variants) or (r_vars and s_vars):
            raise ConfigError(
                f"{where}.variants must be among {R_VARIANTS} or among {S_VARIANTS} (not both), got {list(variants)}"
            )
        if s_vars and not sparse:
            raise ConfigError(f"{where}: the sparsity variants {s_vars} need a sparse problem")
        eps = _epsilons(where, block.get("epsilon"))
        given = set(analysis_params(problem, n=2, s=s)) | ({"X_public"} if entry.kt_loss is not None else set())
        curves = []
        for m in block["methods"]:
            method = get(m, entry.family, simulation=True)
            missing = set(method.required_analysis_params()) - given
            if missing == {"s"}:
                raise ConfigError(f"{where}: {m} needs a sparsity s; use it in a sparse problem")
            if missing:
                raise ConfigError(f"{where}: {m} needs {sorted(missing)}, which problem {problem} does not give")
            own = variants if (METHODS[m].truncation and r_vars) or (m in TUNABLE and s_vars) else ("",)
            curves += [Curve(m, v, e) for v in own for e in (eps if method.private else (None,))]
        own = dict(block.get("tuning") or {})
        stray = sorted(set(own) - {c.method for c in curves})
        if stray:
            raise ConfigError(f"{where}.tuning: {stray} not among this experiment's methods")
        own_tuning = tuple((m, tuple(sorted(dict(v or {}).items()))) for m, v in sorted(own.items()))
        exp = cls(
            name,
            int(block["figure"]),
            str(block["panel"]),
            problem,
            block["d"],
            s,
            tuple(int(n) for n in block["n"]),
            tuple(curves),
            int(block.get("reps", reps)),
            setting,
            block.get("delta"),
            own_tuning,
            _reps_per_job(f"{where}.reps_per_job", block.get("reps_per_job")),
        )
        for n in exp.n:
            exp.dims(n)  # every size must resolve
            exp.setting_at(n)
            if exp.delta is not None:
                try:
                    resolve_delta(exp.delta, n)
                except (ConfigError, PrivacyError) as exc:
                    raise ConfigError(f"{where}.delta: {exc}") from None
        return exp

    def privacy(self, study: Privacy, curve: Curve) -> Privacy:
        """The privacy a curve runs at: the study's, with the experiment's δ and the curve's ε where they are set."""
        over = {"epsilon": curve.epsilon, "delta": self.delta}
        return replace(study, **{k: v for k, v in over.items() if v is not None})

    def dims(self, n: int) -> tuple[int, int | None]:
        """(d, s*) at sample size n (d may be a formula such as ``2*n``)."""
        d = evaluate_int(self.d, n=n)
        fixed = PROBLEMS[self.problem].fixed_d
        if fixed is not None and d != PROBLEMS[self.problem].d_for(n):
            raise ConfigError(f"simulation.experiments.{self.name}: {self.problem} needs d = {fixed}, got {d} at n={n}")
        if self.s is not None and not 1 <= self.s <= d:
            raise ConfigError(f"simulation.experiments.{self.name}: s*={self.s} exceeds d={d} at n={n}")
        return d, self.s

    def setting_at(self, n: int) -> dict:
        """The problem's parameter at sample size n: {"p": …} (a formula evaluated; in (0, 1]), {"alpha": …} or {}."""
        out = {}
        for key, value in self.setting:
            out[key] = evaluate(value, n=n) if key == "p" else value
            if key == "p" and not 0 < out[key] <= 1:
                raise ConfigError(f"simulation.experiments.{self.name}.p must lie in (0, 1], got {out[key]} at n={n}")
        return out


def _setting(where: str, problem: str, block: Mapping) -> tuple:
    key = PROBLEMS[problem].setting
    for other in set(SETTINGS) - {key}:
        if block.get(other) is not None:
            owners = [k for k, p in PROBLEMS.items() if p.setting == other]
            raise ConfigError(f"{where}: {other} is for problem(s) {owners}")
    if key is None:
        return ()
    value = block.get(key)
    if value is None:
        raise ConfigError(f"{where}: problem {problem} needs {key}")
    if key == "alpha" and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ConfigError(f"{where}.alpha must be an integer >= 1, got {value!r}")
    return ((key, value),)


def _reps_per_job(where: str, value) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ConfigError(f"{where} must be an integer >= 1, got {value!r}")
    return value


def _epsilons(where: str, value) -> tuple:
    """The experiment's ε list (numbers > 0, distinct), or (None,): the study's ε."""
    if value is None:
        return (None,)
    values = value if isinstance(value, (list, tuple)) else [value]
    if not values or any(isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0 for v in values):
        raise ConfigError(f"{where}.epsilon must be a number > 0 or a non-empty list of them, got {value!r}")
    if len(set(values)) < len(values):
        raise ConfigError(f"{where}.epsilon lists a value twice: {list(values)}")
    return tuple(float(v) for v in values)


def constants(
    method: Method,
    block: Mapping | None,
    *,
    n: int,
    d: int,
    s: int | None,
    sigma: float,
    setting: Mapping | None = None,
) -> dict:
    """The method's constants at (n, d, s*) and the problem's setting (p, alpha): the config's numbers or formulas
    evaluated (categorical keys such as ``family`` as written), checked by the registry."""
    env = {"n": n, "d": d, "sigma": sigma, **({"s": s} if s is not None else {}), **dict(setting or {})}
    out = {}
    for key, value in dict(block or {}).items():
        if value is None or key in TEXT_KEYS:
            out[key] = value
        else:
            out[key] = evaluate_int(value, **env) if _is_count(method, key) else evaluate(value, **env)
    return method.resolve_tuning(out, f"simulation.tuning.{method.name}")


def _is_count(method: Method, key: str) -> bool:
    default = method.tuning_defaults().get(key)
    if isinstance(default, (bool, float)):
        return False
    return isinstance(default, int) or (key in INT_KEYS and not (key == "T" and method.family == "nonparametric"))


@dataclass(frozen=True)
class SimulationStudy:
    """The config block ``simulation``, checked."""

    reps: int
    design: object
    theory_R: str | float
    quantile_share: float
    quantile_grid: dict
    experiments: dict
    tuning: dict
    s_tuning: STuning | None = None
    reps_per_job: int | None = None  # None: all of an experiment's repetitions in one job

    @classmethod
    def from_config(cls, block: Mapping) -> SimulationStudy:
        from .designs import Design

        reps = int(block["reps"])
        exps = {k: Experiment.from_config(k, v, reps=reps) for k, v in block["experiments"].items()}
        share = float(block["quantile_share"])
        if not 0 < share < 1:
            raise ConfigError(f"simulation.quantile_share must lie in (0, 1), got {share}")
        tuning = dict(block.get("tuning") or {})
        for e in exps.values():  # every constant must resolve at every size before any job starts
            for n in e.n:
                d, s = e.dims(n)
                for c in e.curves:
                    constants(
                        get(c.method), e.tuning_for(c.method, tuning), n=n, d=d, s=s, sigma=1.0, setting=e.setting_at(n)
                    )
        unknown = sorted(set(tuning) - set(METHODS))  # unused entries are fine: a preset cannot remove them
        if unknown:
            raise ConfigError(f"simulation.tuning: unknown method(s) {unknown}")
        uses_s = any(c.variant in S_VARIANTS for e in exps.values() for c in e.curves)
        if uses_s and not block.get("s_tuning"):
            raise ConfigError("simulation.s_tuning is required by the sparsity variants (s=...)")
        s_tuning = STuning.from_config(block["s_tuning"]) if block.get("s_tuning") else None
        for e in exps.values():  # the constants of every candidate s, too
            for c in (c for c in e.curves if c.variant in S_VARIANTS[1:]):
                for n in e.n:
                    d, s = e.dims(n)
                    for s_j in s_tuning.candidates(s, d):
                        constants(get(c.method), e.tuning_for(c.method, tuning), n=n, d=d, s=s_j, sigma=1.0)
        per_job = _reps_per_job("simulation.reps_per_job", block.get("reps_per_job"))
        return cls(
            reps,
            Design.from_config(block.get("design") or {}),
            block["theory_R"],
            share,
            dict(block["quantile_grid"]),
            exps,
            tuning,
            s_tuning,
            per_job,
        )

    def jobs(self) -> list[tuple[str, int, int, int]]:
        """Every (experiment, n, first, last): one job per size and run of at most ``reps_per_job`` repetitions
        (first … last, inclusive; the experiment's own, else the study's, else all), in repetition order. Every
        repetition draws from its own streams, so the split changes no number (only where the time goes)."""
        out = []
        for name, e in self.experiments.items():
            size = e.reps_per_job or self.reps_per_job or e.reps
            out += [(name, n, a, min(a + size, e.reps) - 1) for n in e.n for a in range(0, e.reps, size)]
        return out
