"""Reconstruction of one row by an informed adversary: who knows every other row of the data set and the release.

The informed adversary of Balle, Cherubin & Hayes ("Reconstructing training data with informed adversaries", IEEE
S&P 2022) knows the data set D₋ₜ = D ∖ {z_t} and the mechanism, sees the release M(D) and must output z_t. It is the
strongest adversary of the DP threat model: (ε, δ)-DP bounds its success whatever it knows (Balle et al. §5; Hayes,
Mahloujifar & Balle, NeurIPS 2023, "Bounding data reconstruction attacks with the hypothesis testing interpretation of
differential privacy"), while a non-private release may hand z_t over exactly.

Two attacks:

* :func:`reconstruct_ols` — the closed form for ordinary least squares with an intercept. With A = X₋ₜ'X₋ₜ,
  b = X₋ₜ'y₋ₜ and the released β̂, the normal equations (A + x_t x_t')β̂ = b + x_t y_t give
  r = b − Aβ̂ = x_t(x_t'β̂ − y_t): r is x_t scaled by the row's own residual, and the intercept coordinate (x_t0 = 1)
  fixes the scale, x_t = r/r₀, y_t = x_t'β̂ − r₀ (docs/proofs.md, "Informed reconstruction from OLS"). Exact up to
  rounding when the residual r₀ ≠ 0; without an intercept (or any coordinate the adversary knows) the same release is
  explained by the one-parameter family x = r/c, y = r'β̂/c − c, c ≠ 0, and the row is not identified.
* :func:`reconstruct_by_matching` — any method: the (x, y) whose data set D₋ₜ ∪ {(x, y)} the adversary's model of
  the mechanism maps closest to the release, min ‖f(D₋ₜ ∪ {(x, y)}) − M(D)‖² (nonlinear least squares, two starts).
  f is the adversary's *deterministic* model of the mechanism, given by the caller: for OLS the fit itself; for a
  private method its noiseless counterpart (the same clipping, tuning and solve with the noise switched off, or — the
  estimator-agnostic choice of ``measurements/targeted_attacks.py`` — the method at ε = 10⁹ with a fixed noise seed).
  The adversary knows D₋ₜ, the method and its tuning, but not the noise draw of the release: knowing it would void
  any privacy guarantee (the noise would be a known constant), and DP promises nothing against it.

:func:`relative_error` measures the result: ‖(x̂, ŷ) − (x, y)‖₂ / ‖(x, y)‖₂ over the unknown coordinates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import DataError


def _rest(X_rest, y_rest) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X_rest, dtype=float)
    y = np.asarray(y_rest, dtype=float)
    if X.ndim != 2 or y.shape != (X.shape[0],) or X.shape[0] == 0:
        raise DataError(f"X_rest must be (n, d) and y_rest (n,), got {X.shape} and {y.shape}")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise DataError("X_rest and y_rest must be finite")
    return X, y


def _intercept(X: np.ndarray, intercept: int) -> int:
    if not 0 <= intercept < X.shape[1]:
        raise DataError(f"intercept column {intercept} is outside the design's {X.shape[1]} columns")
    if not np.all(X[:, intercept] == 1.0):
        raise DataError(f"column {intercept} of X_rest is not an intercept (all ones)")
    return intercept


def reconstruct_ols(X_rest, y_rest, beta, *, intercept: int = 0) -> tuple[np.ndarray, float]:
    """The row (x_t, y_t) of the data set whose OLS fit with an intercept is ``beta``, the other rows being
    (``X_rest``, ``y_rest``): x_t = r/r₀, y_t = x_t'β̂ − r₀ with r = X₋ₜ'y₋ₜ − X₋ₜ'X₋ₜβ̂ (module docstring).

    ``X_rest`` includes the intercept column ``intercept`` (all ones), so the returned x_t has a 1 there. Refuses a
    release that leaves the row unidentified: r₀ = 0 up to rounding (64 machine ε of the terms), i.e. the target on
    the fitted plane, where every x with y = x'β̂ explains the release. Rounding: r is a difference of terms of size
    ‖A‖‖β̂‖, so the relative error of x_t is about machine ε · ‖A‖‖β̂‖ / |r₀|.
    """
    X, y = _rest(X_rest, y_rest)
    j = _intercept(X, intercept)
    b = np.asarray(beta, dtype=float)
    if b.shape != (X.shape[1],):
        raise DataError(f"beta must have the design's {X.shape[1]} coordinates, got shape {b.shape}")
    Xty, XtXb = X.T @ y, X.T @ (X @ b)
    r = Xty - XtXb
    r0 = float(r[j])
    rounding = 64 * np.finfo(float).eps * (np.linalg.norm(Xty) + np.linalg.norm(XtXb))
    if abs(r0) <= rounding:
        raise DataError(
            f"the target's residual is 0 to rounding (|r0| = {abs(r0):.3g} <= {rounding:.3g}): it lies "
            "on the fitted plane and OLS does not identify it"
        )
    x = r / r0
    x[j] = 1.0  # exact by construction; avoids a rounding of r0/r0
    return x, float(x @ b - r0)


@dataclass(frozen=True)
class Reconstruction:
    """The matching attack's answer: the row (x with the known coordinate filled in, y), the final misfit
    ‖f(D₋ₜ ∪ {(x, y)}) − release‖₂ and the start it came from ("mean" or "ols_inversion")."""

    x: np.ndarray
    y: float
    misfit: float
    start: str


def reconstruct_by_matching(
    release,
    X_rest,
    y_rest,
    fit: Callable[[np.ndarray, np.ndarray], np.ndarray],
    *,
    intercept: int | None = 0,
    max_nfev: int = 400,
    fit_with: Callable[[np.ndarray, float], np.ndarray] | None = None,
) -> Reconstruction:
    """The estimator-agnostic informed adversary: argmin over (x, y) of ‖fit(D₋ₜ ∪ {(x, y)}) − release‖₂².

    ``fit(X, y)`` is the adversary's deterministic model of the mechanism (module docstring); it is called on the
    known rows with the candidate appended as the last row — or, when given, ``fit_with(x, y)`` is that release for the
    candidate (x, y) computed otherwise (e.g. from the known rows' sums, without refitting m rows per evaluation).
    The unknowns are y and every coordinate of x except the
    intercept column (``intercept``, fixed at 1; None: every coordinate is unknown). Solved by
    ``scipy.optimize.least_squares`` (trust region, finite-difference Jacobian) from two starts — the mean of the
    known rows and the closed-form OLS inversion of the release (:func:`reconstruct_ols`, when it is defined and
    finite) — keeping the smaller misfit. Against OLS (``fit`` = OLS) both lead to the row; against a private
    release the noise is explained by a wrong row, and the error that remains is what privacy bought.
    """
    from scipy import optimize  # imported here: scipy.optimize is slow to import and only this attack needs it

    X, y = _rest(X_rest, y_rest)
    target = np.asarray(release, dtype=float)
    d = X.shape[1]
    free = np.ones(d, dtype=bool)
    if intercept is not None:
        free[_intercept(X, intercept)] = False

    def row(theta):
        x = np.ones(d)
        x[free] = theta[:-1]
        return x, theta[-1]

    def residual(theta):
        x, yt = row(theta)
        if fit_with is not None:
            return np.asarray(fit_with(x, yt), dtype=float) - target
        return np.asarray(fit(np.vstack([X, x]), np.append(y, yt)), dtype=float) - target

    starts = {"mean": np.append(X.mean(axis=0)[free], y.mean())}
    if intercept is not None:
        try:
            x0, y0 = reconstruct_ols(X, y, target, intercept=intercept)
            if np.all(np.isfinite(x0)) and np.isfinite(y0):
                starts["ols_inversion"] = np.append(x0[free], y0)
        except DataError:
            pass
    best = None
    for name, theta0 in starts.items():
        sol = optimize.least_squares(residual, theta0, max_nfev=max_nfev, x_scale="jac")
        misfit = float(np.linalg.norm(sol.fun))
        if best is None or misfit < best.misfit:
            x, yt = row(sol.x)
            best = Reconstruction(x, float(yt), misfit, name)
    return best


def relative_error(x_hat, y_hat, x, y, *, intercept: int | None = 0) -> float:
    """‖(x̂, ŷ) − (x, y)‖₂ / ‖(x, y)‖₂ over the coordinates the adversary did not know (every one but the intercept
    column ``intercept``)."""
    xh, xt = np.asarray(x_hat, dtype=float), np.asarray(x, dtype=float)
    keep = np.ones(xt.size, dtype=bool)
    if intercept is not None:
        keep[intercept] = False
    truth = np.append(xt[keep], float(y))
    norm = float(np.linalg.norm(truth))
    if norm == 0.0:
        raise DataError("the target row is 0: a relative error is undefined")
    return float(np.linalg.norm(np.append(xh[keep], float(y_hat)) - truth)) / norm
