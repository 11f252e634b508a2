"""Tuning-free privately preconditioned, clipped, early-stopped noisy GD (issue 29): :mod:`.precond_gd`'s algorithm
(docs/proofs.md, "Preconditioned noisy gradient descent") with every constant a data-free rule of (n, d, ε, δ).

Nothing new is released: the estimator is :func:`~dpcost.estimators.precond_gd.precond_gd` and the plan is
:func:`~dpcost.estimators.precond_gd.precond_gd_plan`, both at the constants :func:`default_constants` resolves, so
the privacy proof (sensitivities √2·B0² and 2C, Gaussian-DP or basic composition) is precond_gd's. The rules use n,
which is private under add/remove neighbours, so those are refused unless every constant is given.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..dp.mechanisms import check_positive
from ..dp.plan import PrivacyPlan
from ..dp.privacy import Privacy
from ..errors import PrivacyError
from .base import check_count, check_design, require_replace
from .boosted_adassp import gdp_mu
from .precond_gd import precond_gd, precond_gd_blocks, precond_gd_plan

# The default rules, chosen within the forms the theory gives (default_constants) on real tables other than housing
# (CPS1988, CPSSW8, BudgetFood, Computers, NMES1988, diamonds; numbers in the issue 29 report).
PRECOND_SHARE = 0.2  # f0: share of μ² spent on the preconditioner's X'X; the T steps share the rest equally
CLIP_X = 0.2  # B0 = CLIP_X · d^(3/8) · (n μ_0)^(1/4)
CLIP_G = 0.12  # C = CLIP_G · d^((1 − GRAD_POWER)/2) · (n μ_s)^GRAD_POWER
GRAD_POWER = 0.4  # 1/k for terms with a bounded k-th moment, k = 2.5 (k = 4 and 2 measured no better at small ε)
STEPS = 8  # T at every (n, ε)


def default_constants(n: int, d: int, epsilon: float, delta: float, f0: float = PRECOND_SHARE) -> dict:
    """B0, C and T as data-free functions of (n, d, ε, δ) — the rules behind the ``None`` defaults.

    Why these forms. μ is the Gaussian-DP parameter of the whole budget (:func:`~.boosted_adassp.gdp_mu`),
    μ_0 = μ√f0 the preconditioner's and μ_s = μ√((1 − f0)/T) each step's. (a) B0: clipping rows at B0 biases X'X by
    Σ(‖x_i‖² − B0²)₊ ≤ Σ‖x_i‖⁴/B0² ≈ nκd²/B0² for standardized rows with E‖x‖⁴ ≤ κd² (bounded kurtosis, the only
    tail assumption); the Gram noise has operator norm ≈ 2√d·√2B0²/μ_0; equal orders give B0⁴ ∝ d^(3/2)·nμ_0.
    (b) C: after whitening E‖u‖² ≈ d, so a per-example term g = u_i r_i has E‖g‖^k ≲ κ'd^(k/2) if its k-th moment
    is bounded; the bias of the clipped gradient sum, ≤ nE‖g‖^k/C^(k−1), against the noise of one step, ≈ √d·2C/μ_s,
    balances at C^k ∝ d^((k−1)/2)·nμ_s: C ∝ d^(1/2 − 1/(2k))·(nμ_s)^(1/k). Real residuals times whitened rows are
    heavier-tailed than rows alone: k = 2.5 (GRAD_POWER 0.4; k = 4 and k = 2 were no better on the development
    tables, and k = 2.5 brings the estimate closer to OLS at large ε). Both bounds grow with nμ, so clipping fades
    as the noise does and at large nε the path approaches OLS. (c) T: with the whitened curvature H = n·I, an
    unclipped step is Newton's; clipping shortens the steps of heavy rows, so a few steps are needed, and each extra
    one costs √T in every step's noise — a constant T. The constants were chosen on real tables other than housing.
    """
    mu = gdp_mu(epsilon, delta)
    T = STEPS
    mu_0, mu_s = mu * math.sqrt(f0), mu * math.sqrt((1 - f0) / T)
    return {
        "B0": CLIP_X * d**0.375 * (n * mu_0) ** 0.25,
        "C": CLIP_G * d ** ((1 - GRAD_POWER) / 2) * (n * mu_s) ** GRAD_POWER,
        "T": T,
    }


def _resolve(privacy: Privacy, n: int, d: int, B0, C, T, f0) -> dict:
    """The constants a run uses: the given ones, and the rule of (n, d, ε, δ) for each left at None."""
    if not 0 < f0 < 1:
        raise PrivacyError(
            f"f0 (the preconditioner's share of the budget) must lie strictly between 0 and 1, got {f0!r}"
        )
    if None in (B0, C, T):
        p = privacy.at(n)
        require_replace(p, "precond_gd_free", "its default clip bounds are functions of n")
        rule = default_constants(n, d, p.epsilon, p.delta, f0)
        B0, C, T = (rule[k] if v is None else v for k, v in (("B0", B0), ("C", C), ("T", T)))
    return {"B0": check_positive("B0", B0), "C": check_positive("C", C), "T": check_count("T", T), "f0": f0}


def precond_gd_free_plan(privacy: Privacy, n: int, d: int, *, B0, C, T, f0) -> PrivacyPlan:
    """:func:`~dpcost.estimators.precond_gd.precond_gd_plan` at the resolved constants (its 1 + T Gaussian releases,
    sensitivities √2·B0² for upper(X'X) and 2C for each step's sum of clip_C(u_i r_i) under replace-one), with the
    constants recorded in ``parameters``."""
    k = _resolve(privacy, n, d, B0, C, T, f0)
    plan = precond_gd_plan(privacy, n, d, R=None, **k)
    return dataclasses.replace(plan, method="precond_gd_free", parameters=k)


def precond_gd_free(
    X,
    y,
    *,
    privacy: Privacy,
    rng,
    B0: float | None = None,
    C: float | None = None,
    T: int | None = None,
    f0: float = PRECOND_SHARE,
    alpha: float = 1.0,
    eta: float = 1.0,
    floor: float = 0.1,
    rho: float = 0.05,
):
    """Privately preconditioned, clipped, early-stopped noisy GD (docs/proofs.md, "Preconditioned noisy gradient
    descent"; :func:`~dpcost.estimators.precond_gd.precond_gd`, steps 1–3) with B0, C, T the data-free rules of
    :func:`default_constants` when left at None.

    Guarantee: (ε, δ)-DP under replace-one neighbours (add/remove only with B0, C, T all given: the rules use n),
    by composing 1 + T Gaussian releases — upper(X'X) of rows clipped to B0 (sensitivity √2·B0²) and T sums of
    per-example terms clip_C(u_i (y_i − u_i'b)) (2C), u_i = Mx_i with M public after the first release
    (:func:`precond_gd_free_plan`). Assumption ‖x_i‖ ≤ B0 and ‖term‖ ≤ C, enforced by precond_gd's clipping for every
    finite input (an overflowing term is the public 0). α, η, the eigenvalue floor and ρ act on utility only (fixed,
    data-free: α = 1 whitens, η = 1 is the Newton step of the whitened problem, floor 0.1 of the unit-average
    eigenvalues of a standardized design).
    """
    X, y = check_design(X, y)  # the shape the rules read
    n, d = X.shape
    k = _resolve(privacy, n, d, B0, C, T, f0)
    return precond_gd(X, y, privacy=privacy, rng=rng, R=None, alpha=alpha, eta=eta, floor=floor, rho=rho, **k)


def precond_gd_free_blocks(
    Xs,
    ys,
    *,
    privacy: Privacy,
    rng,
    B0: float | None = None,
    C: float | None = None,
    T: int | None = None,
    f0: float = PRECOND_SHARE,
    alpha: float = 1.0,
    eta: float = 1.0,
    floor: float = 0.1,
    rho: float = 0.05,
) -> np.ndarray:
    """:func:`precond_gd_free` on k blocks of n rows at once (``Xs`` (k, n, d), ``ys`` (k, n)): the rules at the
    blocks' n, then :func:`~dpcost.estimators.precond_gd.precond_gd_blocks` (its guarantee, block by block)."""
    k = _resolve(privacy, Xs.shape[1], Xs.shape[2], B0, C, T, f0)
    return precond_gd_blocks(Xs, ys, privacy=privacy, rng=rng, R=None, alpha=alpha, eta=eta, floor=floor, rho=rho, **k)
