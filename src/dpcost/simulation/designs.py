"""The simulated data of Cai, Wang & Zhang (2021) §5 and of their 2019 preprint §5, each draw from its own stream.

A draw is identified by its problem, design, n, d, s* and repetition — not by the experiment or the method — so every
method, and every experiment with the same problem and sizes, sees the same data and the same truth (paired
comparisons; Figures 1 and 3 share their draws).

Mean (``mean``, ``sparse_mean``): x_i ~ N_d(μ, σ²I); μ has d (or its first s*) coordinates U(−a, a) (``mu: uniform``,
2021: a = 10) or equal to 1 (``mu: ones``, 2019), the rest 0.
Regression (``ols``, ``sparse_ols``): y = Xβ + σz; X entries U(−1/√d, 1/√d) (``x: uniform``, 2021, so ‖x_i‖₂ ≤ 1) or
Bernoulli(p) (``x: bernoulli``, 2019, p = 0.15); β uniform on the unit sphere of R^d (or of its first s* coordinates)
(``beta: sphere``, 2021) or 1 on them (``beta: ones``, 2019).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..analysis.streams import rng_for
from ..errors import ConfigError

PROBLEMS = ("mean", "sparse_mean", "ols", "sparse_ols")
FAMILY = {"mean": "mean", "sparse_mean": "mean", "ols": "regression", "sparse_ols": "regression"}


@dataclass(frozen=True)
class Design:
    """How data are generated (config block ``simulation.design``)."""

    sigma: float = 1.0
    mu: str = "uniform"
    mu_range: float = 10.0
    x: str = "uniform"
    p: float = 0.15
    beta: str = "sphere"

    @classmethod
    def from_config(cls, block: Mapping) -> Design:
        spec = cls(**block)
        if not spec.sigma > 0 or not spec.mu_range > 0 or not 0 < spec.p < 1:
            raise ConfigError("simulation.design: sigma and mu_range must be > 0 and p in (0, 1)")
        for key, allowed in (
            ("mu", ("uniform", "ones")),
            ("x", ("uniform", "bernoulli")),
            ("beta", ("sphere", "ones")),
        ):
            if getattr(spec, key) not in allowed:
                raise ConfigError(f"simulation.design.{key} must be one of {allowed}, got {getattr(spec, key)!r}")
        return spec

    def identity(self) -> str:
        return repr(sorted(self.__dict__.items()))


def _sphere(rng: np.random.Generator, k: int) -> np.ndarray:
    u = rng.normal(size=k)
    return u / np.linalg.norm(u)


def draw(design: Design, problem: str, *, n: int, d: int, s: int | None, rep: int, seed: int):
    """(data, truth) of one repetition: data is ``(X,)`` for a mean problem and ``(X, y)`` for a regression.

    The stream is (seed, "simulation", problem, design, n, d, s*, rep). Arrays are float64; the largest default
    draw (n = 4,000, d = 8,000) is 256 MB."""
    if problem not in PROBLEMS:
        raise ConfigError(f"unknown simulation problem {problem!r}; expected one of {PROBLEMS}")
    sparse = problem.startswith("sparse")
    if sparse and not (s and 1 <= s <= d):
        raise ConfigError(f"{problem}: the sparsity s*={s} must lie in 1 … d={d}")
    k = s if sparse else d
    rng = rng_for(seed, "simulation", problem, design.identity(), n, d, s if sparse else "", rep)
    truth = np.zeros(d)
    if FAMILY[problem] == "mean":
        truth[:k] = rng.uniform(-design.mu_range, design.mu_range, size=k) if design.mu == "uniform" else 1.0
        X = rng.standard_normal(size=(n, d))
        X *= design.sigma
        X += truth
        return (X,), truth
    truth[:k] = _sphere(rng, k) if design.beta == "sphere" else 1.0
    if design.x == "uniform":
        X = rng.uniform(-1 / math.sqrt(d), 1 / math.sqrt(d), size=(n, d))
    else:
        X = (rng.random(size=(n, d)) < design.p).astype(float)
    y = X[:, :k] @ truth[:k] if sparse else X @ truth
    y += design.sigma * rng.standard_normal(size=n)
    return (X, y), truth
