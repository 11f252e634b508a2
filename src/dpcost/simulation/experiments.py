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
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import ConfigError
from ..estimators.registry import METHODS, Method, get
from .designs import FAMILY, PROBLEMS
from .formula import evaluate, evaluate_int
from .sparsity import S_VARIANTS, TUNABLE, STuning

R_VARIANTS = ("R=theory", "R=none", "R=dp_quantile")
# the constant each paper estimator truncates with (the variants replace it)
TRUNCATION = {"dp_mean": "R", "peeling": "R", "noisy_gd": "R", "dp_iht": "R"}
INT_KEYS = ("T", "r", "block_size", "passes", "batch")


@dataclass(frozen=True)
class Curve:
    method: str
    variant: str = ""

    @property
    def label(self) -> str:
        return f"{self.method} [{self.variant}]" if self.variant else self.method


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

    @classmethod
    def from_config(cls, name: str, block: Mapping, *, reps: int) -> Experiment:
        where = f"simulation.experiments.{name}"
        problem = block["problem"]
        if problem not in PROBLEMS:
            raise ConfigError(f"{where}.problem must be one of {PROBLEMS}, got {problem!r}")
        sparse = problem.startswith("sparse")
        s = block.get("s")
        if sparse != (s is not None):
            raise ConfigError(f"{where}: s is required for the sparse problems and only for them")
        variants = tuple(block.get("variants") or ())
        r_vars, s_vars = [v for v in variants if v in R_VARIANTS], [v for v in variants if v in S_VARIANTS]
        if len(r_vars) + len(s_vars) < len(variants) or (r_vars and s_vars):
            raise ConfigError(f"{where}.variants must be among {R_VARIANTS} or among {S_VARIANTS} (not both), "
                              f"got {list(variants)}")  # fmt: skip
        if s_vars and not sparse:
            raise ConfigError(f"{where}: the sparsity variants {s_vars} need a sparse problem")
        curves = []
        for m in block["methods"]:
            method = get(m, FAMILY[problem], simulation=True)
            if (m in TRUNCATION and r_vars) or (m in TUNABLE and s_vars):
                curves += [Curve(m, v) for v in variants]
            else:
                curves.append(Curve(m))
            if method.analysis_params() and not sparse:
                raise ConfigError(f"{where}: {m} needs a sparsity s; use it in a sparse problem")
        exp = cls(name, int(block["figure"]), str(block["panel"]), problem, block["d"], s,
                  tuple(int(n) for n in block["n"]), tuple(curves), int(block.get("reps", reps)))  # fmt: skip
        for n in exp.n:
            exp.dims(n)  # every size must resolve
        return exp

    def dims(self, n: int) -> tuple[int, int | None]:
        """(d, s*) at sample size n (d may be a formula such as ``2*n``)."""
        d = evaluate_int(self.d, n=n)
        if self.s is not None and not 1 <= self.s <= d:
            raise ConfigError(f"simulation.experiments.{self.name}: s*={self.s} exceeds d={d} at n={n}")
        return d, self.s


def constants(method: Method, block: Mapping | None, *, n: int, d: int, s: int | None, sigma: float) -> dict:
    """The method's constants at (n, d, s*): the config's numbers or formulas evaluated, checked by the registry."""
    env = {"n": n, "d": d, "sigma": sigma, **({"s": s} if s is not None else {})}
    out = {}
    for key, value in dict(block or {}).items():
        if value is None:
            out[key] = None
        else:
            out[key] = evaluate_int(value, **env) if key in INT_KEYS else evaluate(value, **env)
    return method.resolve_tuning(out, f"simulation.tuning.{method.name}")


@dataclass(frozen=True)
class SimulationSpec:
    """The config block ``simulation``, checked."""

    reps: int
    design: object
    theory_R: str | float
    quantile_share: float
    quantile_grid: dict
    experiments: dict
    tuning: dict
    s_tuning: STuning | None = None

    @classmethod
    def from_config(cls, block: Mapping) -> SimulationSpec:
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
                    constants(get(c.method), tuning.get(c.method), n=n, d=d, s=s, sigma=1.0)
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
                        constants(get(c.method), tuning.get(c.method), n=n, d=d, s=s_j, sigma=1.0)
        return cls(reps, Design.from_config(block.get("design") or {}), block["theory_R"], share,
                   dict(block["quantile_grid"]), exps, tuning, s_tuning)  # fmt: skip

    def jobs(self) -> list[tuple[str, int]]:
        """Every (experiment, n): one job each."""
        return [(name, n) for name, e in self.experiments.items() for n in e.n]
