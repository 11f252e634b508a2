"""The simulated data of Cai, Wang & Zhang (2021) §5, of their 2019 preprint §5 and of the Score Attack paper's four
problems (§3–§6), each draw from its own stream, and how an estimate is scored against the draw's truth.

A draw is identified by its problem, design, n, d, s*, the problem's setting (BTL: the comparison probability p;
Sobolev: the smoothness α) and repetition — not by the experiment or the method — so every method, and every
experiment with the same problem and sizes, sees the same data and the same truth (paired comparisons; Figures 1
and 3 share their draws).

Mean (``mean``, ``sparse_mean``): x_i ~ N_d(μ, σ²I); μ has d (or its first s*) coordinates U(−a, a) (``mu: uniform``,
2021: a = 10) or equal to 1 (``mu: ones``, 2019), the rest 0.
Regression (``ols``, ``sparse_ols``): y = Xβ + σz; X entries U(−1/√d, 1/√d) (``x: uniform``, 2021, so ‖x_i‖₂ ≤ 1) or
Bernoulli(p) (``x: bernoulli``, 2019, p = 0.15); β uniform on the unit sphere of R^d (or of its first s* coordinates)
(``beta: sphere``, 2021) or 1 on them (``beta: ones``, 2019).
Logistic (``logistic``, ``sparse_logistic``; family glm): X entries U(−b, b), b = ``glm_x_bound`` (the public σ_x of
(D1)); β uniform on the sphere of radius ``glm_beta_norm`` of R^d (or of its first s* coordinates);
y_i ~ Bernoulli(sigmoid(x_i'β)).
BTL (``btl``; family ranking; d = n items): θ_i ~ U(−1, 1), centred and projected on Θ = {‖θ‖∞ ≤ 1, 1'θ = 0}; an
Erdős–Rényi comparison graph with edge probability p; one outcome per edge. Data (edges, y).
Knowledge transfer (``kt_linear``, ``kt_logistic``; family sparse_learning; Wang & Gu 2020, §5.1): X entries
U(−1, 1); θ* has s* N(0, 1) coordinates on a support drawn uniformly (the paper: "randomly generated"); y = Xθ* +
N(0, ``kt_noise_var``) or y ~ Bernoulli(σ(x'θ*)) (the paper prints σ(−x'θ*), a sign typo); public features X̃ of
the same law, n rows, from their own stream (:func:`public_features`). The error is relative.
Sobolev (``sobolev``; family nonparametric; d = 1): X ~ U[0, 1], Y = f(X) + σξ, f = Σ_{j ≤ J} θ_jφ_j with θ =
``sobolev_coefficients(α, J, C)`` (J = ``sobolev_J``, C = ``sobolev_C``): near the worst case of the class W̃(α, C).
The error is the L2 distance of the functions, exactly, by Parseval (:func:`error`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy import special

from ..analysis.streams import rng_for
from ..errors import ConfigError
from ..estimators import btl, sobolev
from .problems import PROBLEMS, problem_of

# the design fields each family's draw reads (its identity): the mean and regression identities are those the study
# had before the Score Attack problems joined, so their draws did not change
_BEFORE = ("beta", "mu", "mu_range", "p", "sigma", "x")
_FIELDS = {
    "mean": _BEFORE,
    "regression": _BEFORE,
    "glm": ("glm_beta_norm", "glm_x_bound"),
    "ranking": (),
    "nonparametric": ("sigma", "sobolev_C", "sobolev_J"),
    "sparse_learning": ("kt_noise_var",),
}


@dataclass(frozen=True)
class Design:
    """How data are generated (config block ``simulation.design``)."""

    sigma: float = 1.0
    mu: str = "uniform"
    mu_range: float = 10.0
    x: str = "uniform"
    p: float = 0.15
    beta: str = "sphere"
    glm_x_bound: float = 1.0
    glm_beta_norm: float = 1.0
    sobolev_C: float = 10.0
    sobolev_J: int = 1000
    kt_noise_var: float = 0.1

    @classmethod
    def from_config(cls, block: Mapping) -> Design:
        design = cls(**block)
        if not design.sigma > 0 or not design.mu_range > 0 or not 0 < design.p < 1:
            raise ConfigError("simulation.design: sigma and mu_range must be > 0 and p in (0, 1)")
        if not (
            design.glm_x_bound > 0 and design.glm_beta_norm > 0 and design.sobolev_C > 0 and design.kt_noise_var > 0
        ):
            raise ConfigError("simulation.design: glm_x_bound, glm_beta_norm, sobolev_C and kt_noise_var must be > 0")
        if isinstance(design.sobolev_J, bool) or not isinstance(design.sobolev_J, int) or design.sobolev_J < 2:
            raise ConfigError(f"simulation.design.sobolev_J must be an integer >= 2, got {design.sobolev_J!r}")
        for key, allowed in (
            ("mu", ("uniform", "ones")),
            ("x", ("uniform", "bernoulli")),
            ("beta", ("sphere", "ones")),
        ):
            if getattr(design, key) not in allowed:
                raise ConfigError(f"simulation.design.{key} must be one of {allowed}, got {getattr(design, key)!r}")
        return design

    def identity(self, problem: str = "mean") -> str:
        """The fields the problem's draw reads, as text (a field another family reads does not change the draw)."""
        return repr([(k, getattr(self, k)) for k in _FIELDS[PROBLEMS[problem].family]])


def _sphere(rng: np.random.Generator, k: int) -> np.ndarray:
    u = rng.normal(size=k)
    return u / np.linalg.norm(u)


def analysis_params(problem: str, *, n: int, s: int | None) -> dict:
    """What the problem gives every method that takes it: the sparsity s (sparse problems), the number of items."""
    entry = PROBLEMS[problem]
    if entry.kt_loss is not None:
        return {"s": s, "loss": entry.kt_loss}
    if entry.sparse:
        return {"s": s}
    return {"n_items": n} if problem == "btl" else {}


def public_features(design: Design, problem: str, *, n: int, d: int, s: int | None, rep: int, seed: int) -> np.ndarray:
    """The knowledge-transfer problems' public auxiliary features X̃ (m = n rows of i.i.d. U(−1, 1), the paper's
    D̃): drawn from their own stream ("simulation-public", …), so independent of the private draw by construction."""
    if PROBLEMS[problem].kt_loss is None:
        raise ConfigError(f"{problem} has no public features")
    rng = rng_for(seed, "simulation-public", problem, design.identity(problem), n, d, s, rep)
    return rng.uniform(-1.0, 1.0, size=(n, d))


def plan_facts(problem: str, data: tuple) -> dict:
    """Public facts of a draw a plan needs beyond the tuning: the comparison graph's largest degree (BTL)."""
    if problem == "btl":
        return {"d_max": int(np.bincount(data[0].ravel()).max())}
    return {}


def error(problem: str, est, truth: np.ndarray) -> float:
    """‖θ̂ − θ‖₂. Sobolev: the L2 distance of f̂ = Σ_{j ≤ K} θ̂_jφ_j and f, exactly by Parseval — θ̂ ∈ R^K against the
    truth's first K coefficients, plus the truth's tail beyond K (the shorter vector padded with zeros). The
    knowledge-transfer problems: the relative error ‖θ̂ − θ‖₂/‖θ‖₂ (Wang & Gu 2020, Fig. 2)."""
    est = np.asarray(est, dtype=float)
    if problem == "sobolev":
        m = max(est.size, truth.size)
        est, truth = np.pad(est, (0, m - est.size)), np.pad(truth, (0, m - truth.size))
    if est.shape != truth.shape:
        raise ValueError(f"{problem}: an estimate of shape {est.shape} against a truth of shape {truth.shape}")
    err = float(np.linalg.norm(est - truth))
    return err / float(np.linalg.norm(truth)) if PROBLEMS[problem].kt_loss is not None else err


def draw(
    design: Design, problem: str, *, n: int, d: int, s: int | None, rep: int, seed: int, setting: Mapping | None = None
):
    """(data, truth) of one repetition: data is ``(X,)`` for a mean problem, ``(X, y)`` for a regression or GLM,
    ``(edges, y)`` for BTL and ``(X, Y)`` for Sobolev; ``setting`` holds the problem's
    parameter (its ``Problem.setting``).

    The stream is (seed, "simulation", problem, design, n, d, s*, [setting,] rep). Arrays are float64; the largest
    default draw (n = 4,000, d = 8,000) is 256 MB."""
    entry = problem_of(problem)
    sparse = entry.sparse
    if sparse and not (s and 1 <= s <= d):
        raise ConfigError(f"{problem}: the sparsity s*={s} must lie in 1 … d={d}")
    key = entry.setting
    if key and (setting or {}).get(key) is None:
        raise ConfigError(f"{problem}: the draw needs its {key}")
    if entry.fixed_d is not None and d != entry.d_for(n):
        raise ConfigError(f"{problem}: d must be {entry.fixed_d}, got d={d} at n={n}")
    extra = (f"{key}={setting[key]!r}",) if key else ()
    rng = rng_for(seed, "simulation", problem, design.identity(problem), n, d, s if sparse else "", *extra, rep)
    k = s if sparse else d
    family = entry.family
    if family == "ranking":
        u = rng.uniform(-1.0, 1.0, size=n)
        theta = btl.project_theta(u - u.mean())
        edges = btl.comparison_graph(n, float(setting["p"]), rng)
        return (edges, btl.btl_outcomes(theta, edges, rng)), theta
    if family == "nonparametric":
        theta = sobolev.sobolev_coefficients(int(setting["alpha"]), design.sobolev_J, C=design.sobolev_C)
        return sobolev.fourier_design(theta, n, sigma=design.sigma, rng=rng), theta
    truth = np.zeros(d)
    if family == "mean":
        truth[:k] = rng.uniform(-design.mu_range, design.mu_range, size=k) if design.mu == "uniform" else 1.0
        X = rng.standard_normal(size=(n, d))
        X *= design.sigma
        X += truth
        return (X,), truth
    if family == "sparse_learning":  # Wang & Gu §5.1: X i.i.d. U(−1, 1); θ* N(0, 1) on a random support
        truth[np.sort(rng.choice(d, size=k, replace=False))] = rng.standard_normal(k)
        X = rng.uniform(-1.0, 1.0, size=(n, d))
        u = X @ truth
        if problem == "kt_linear":
            return (X, u + math.sqrt(design.kt_noise_var) * rng.standard_normal(n)), truth
        return (X, (rng.random(n) < special.expit(u)).astype(float)), truth
    if family == "glm":
        truth[:k] = design.glm_beta_norm * _sphere(rng, k)
        X = rng.uniform(-design.glm_x_bound, design.glm_x_bound, size=(n, d))
        y = (rng.random(n) < special.expit(X[:, :k] @ truth[:k])).astype(float)
        return (X, y), truth
    truth[:k] = _sphere(rng, k) if design.beta == "sphere" else 1.0
    if design.x == "uniform":
        X = rng.uniform(-1 / math.sqrt(d), 1 / math.sqrt(d), size=(n, d))
    else:
        X = (rng.random(size=(n, d)) < design.p).astype(float)
    y = X[:, :k] @ truth[:k] if sparse else X @ truth
    y += design.sigma * rng.standard_normal(size=n)
    return (X, y), truth
