"""Objective perturbation — Kifer, Smith & Thakurta (2012), Algorithm 1 (Gaussian version), the "ObjPert" comparator
of Wang (2018): the algorithm, its per-record gradient bound and its privacy plan."""

from __future__ import annotations

import math

import numpy as np

from ..dp.plan import PrivacyPlan, Release, check_bounds
from ..dp.privacy import Privacy
from ..dp.samplers import describe_float
from .base import clip_design, ridge_in_ball_eig
from .sums import plan_once

# How b is drawn, for the plan and the ledger: not by dpcost.dp.samplers, whatever privacy.sampler says. b enters an
# argmin, from which b can be recomputed given the data (to the solver's accuracy): noise on the exact sampler's grid
# would give away which data set it came from (dpcost.estimators.two_stage's docstring), and KST's proof is for
# continuous noise in exact arithmetic. No floating-point-safe objective perturbation is implemented.
NOISE = describe_float(
    "numpy float Gaussian b inside an argmin (privacy.sampler not applied: grid noise would be recoverable from the "
    "argmin)"
)


def objpert_plan(privacy: Privacy, n: int, d: int, *, B_X: float, B_Y: float, C: float) -> PrivacyPlan:
    """Objective perturbation for ½(y − x'θ)² on ‖θ‖ ≤ C.

    Per-record gradient bound ζ = B_X(B_X C + B_Y) on the ball, Hessian bound λ_H = B_X² (rank one), ridge
    Δ = 2λ_H/ε, b ~ N(0, ζ²(8 log(2/δ) + 4ε)/ε² I). KST's neighbours differ in one entry (replace-one). Under
    add/remove the reference code of Wang (2018) halves the noise std (one gradient changes instead of two); we do
    the same only when asked for add/remove. No tighter analysis is implemented: both calibrations use KST's.
    """
    p = privacy.at(n)
    epsilon, delta = p.epsilon, p.delta
    check_bounds(B_X=B_X, B_Y=B_Y, C=C)
    zeta = B_X * (B_X * C + B_Y)
    std = zeta * math.sqrt(8 * math.log(2 / delta) + 4 * epsilon) / epsilon
    k = 2 if p.neighbours == "replace" else 1
    if k == 1:
        std /= 2
    Delta = 2 * B_X**2 / epsilon
    rel = Release(
        "gaussian: linear term b of the objective",
        k * zeta,
        "l2",
        std,
        1,
        epsilon,
        delta,
        NOISE,
        kind="objective",
        noise="float",
        coordinates=d,
        norm_words="l2 (gradient)",
    )
    return PrivacyPlan(
        "objpert",
        epsilon,
        delta,
        p.calibration,
        "Kifer, Smith & Thakurta (2012) Theorem 2, Gaussian objective perturbation (both calibrations)",
        f"rows clipped to ||x||_2 <= B_X = {B_X}, y clipped to [-{B_Y}, {B_Y}], estimate in ||theta||_2 <= {C}",
        (rel,),
        p.relation,
        {"Delta": Delta, "zeta": zeta},
        whole_mechanism=False,
        whole_mechanism_why="objective perturbation: the Gaussian on the linear term is not the whole mechanism (the "
        "regulariser carries part of the guarantee)",
    )


def objpert(X, y, *, privacy: Privacy, rng: np.random.Generator, B_X: float, B_Y: float, C: float) -> np.ndarray:
    """ObjPert — objective perturbation, Kifer, Smith & Thakurta (2012) Algorithm 1 (Gaussian version).

    θ̃ = argmin_{‖θ‖₂ ≤ C} Σ_i ½(y_i − x_i'θ)² + (Δ/2)‖θ‖² + b'θ,  Δ = 2B_X²/ε,  b ~ N(0, ζ²(8 log(2/δ) + 4ε)/ε² I),
    ζ = B_X(B_X C + B_Y) (KST's objective times n). Privacy: (ε, δ)-DP under replace-one neighbours (KST Thm 2;
    :func:`objpert_plan`). Rows clipped to ‖x‖₂ ≤ B_X, y to [−B_Y, B_Y], θ constrained to the C ball here, so ζ
    bounds every per-record gradient. Not copied from the reference code: its solver minimises θ'Hθ − θ'(X'y − b),
    half the linear term of the least-squares objective (docs/proofs.md, "ObjPert: the half linear term and the
    noise constant").
    """
    return objpert_batch(X, y, privacy=privacy, rngs=[rng], tunings=[dict(B_X=B_X, B_Y=B_Y, C=C)], plans={})[0]


def objpert_batch(X, y, *, privacy: Privacy, rngs: list, tunings: list[dict], plans: dict) -> list[np.ndarray]:
    """:func:`objpert` on one data set with every set of constants in ``tunings``, run i with its own ``rngs[i]``:
    the separate calls' estimates bit for bit, each the same release (its b drawn from its own generator). Shared,
    being deterministic: the clip and sums per (B_X, B_Y), the plan per constants (``plans``, the caller's memo:
    :func:`~.sums.plan_once`) and the eigendecomposition of X'X + ΔI per (B_X, B_Y, C) — an audit's 30,000 runs on
    one pair of data sets decompose it once."""
    sums, solved, out = {}, {}, []
    for rng, t in zip(rngs, tunings, strict=True):
        B_X, B_Y, C = t["B_X"], t["B_Y"], t["C"]
        if (B_X, B_Y) not in sums:
            Xc, yc = clip_design(X, y, B_X, B_Y)
            sums[B_X, B_Y] = (Xc.T @ Xc, Xc.T @ yc, Xc.shape)
        G, b, (n, d) = sums[B_X, B_Y]
        plan = plan_once(plans, objpert_plan, privacy, n, d, B_X=B_X, B_Y=B_Y, C=C)
        noise = rng.normal(0.0, plan.releases[0].noise_scale, size=d)
        key = (B_X, B_Y, C, plan.parameters["Delta"])
        if key not in solved:
            solved[key] = np.linalg.eigh(G + plan.parameters["Delta"] * np.eye(d))
        out.append(ridge_in_ball_eig(*solved[key], b - noise, C))
    return out
