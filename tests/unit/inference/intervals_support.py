"""The coverage check every interval test uses, and the known-truth Gaussian design.

Coverage over R independent repetitions: the mean ĉ of the indicators "β_j in its interval" over repetitions and
the d coordinates. Within a repetition the d indicators are dependent, but each is Bernoulli(c) and an average of
variables of variance c(1 − c) has variance ≤ c(1 − c) (Cauchy–Schwarz), so over R repetitions
sd(ĉ) ≤ √(c(1 − c)/R) whatever the dependence. At the nominal c = 0.95 the check accepts |ĉ − 0.95| ≤ Z·√(0.95·0.05/R):
Z = 3.5 gives a false alarm with probability ≈ 5e-4 per check (normal approximation), so the dozen checks of a file
fail together by chance with probability < 1 %. Each coordinate is checked too, at Z_COORD = 4 (≈ 6e-5 each).
"""

import math

import numpy as np

Z, Z_COORD = 3.5, 4.0
BETA = np.array([0.5, -0.3, 0.2])
SIGMA = 0.7  # the model's error sd; y has sd √(‖β‖² + σ²) = 0.93


def tolerance(reps: int, level: float = 0.95, z: float = Z) -> float:
    """z·√(level(1 − level)/reps): z Monte Carlo standard errors of an estimated coverage (module docstring)."""
    return z * math.sqrt(level * (1 - level) / reps)


def coverage_error(covered: np.ndarray, level: float = 0.95) -> str | None:
    """Why the (reps, d) indicators are not a coverage of ``level``, or None: the pooled coverage within
    :func:`tolerance` at Z and every coordinate's at Z_COORD."""
    covered = np.asarray(covered, dtype=float)
    reps = len(covered)
    pooled, per = covered.mean(), covered.mean(axis=0)
    if abs(pooled - level) > tolerance(reps, level):
        return (
            f"coverage {pooled:.4f} outside {level} ± {tolerance(reps, level):.4f} ({reps} reps; per coordinate {per})"
        )
    tol = tolerance(reps, level, Z_COORD)
    if np.any(np.abs(per - level) > tol):
        return f"coordinate coverage {per} outside {level} ± {tol:.4f} ({reps} reps)"
    return None


def gaussian_design(rng: np.random.Generator, n: int, beta: np.ndarray = BETA, sigma: float = SIGMA):
    """x ~ N(0, I_d), y = x'β + N(0, σ²): the linear model holds, β known."""
    X = rng.standard_normal((n, len(beta)))
    return X, X @ beta + sigma * rng.standard_normal(n)


# each procedure's constants on the known-truth design (clipping at 4 sd almost never binds)
CONSTANTS = {
    "ssp": {"B_X": 4.0, "B_Y": 4.0},
    "adassp": {"B_X": 4.0, "B_Y": 4.0},
    "joint_ssp": {"B_X": 4.0, "B_Y": 4.0},
    "boosted_adassp": {},
    "precond_gd": {"B0": 3.5, "C": 6.0, "T": 3},
    "precond_gd_free": {},
    "precond_gd_adaptive": {},
    "blocks_ols": {},
}
