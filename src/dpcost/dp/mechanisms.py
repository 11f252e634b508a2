"""Additive noise mechanisms and their calibrations.

Both mechanisms are stated for a query f with a known sensitivity under a neighbouring relation chosen by the caller
(the Cost of Privacy papers use *replace one record*). The sensitivity is the assumption: whoever computes f must make
it true, by clipping or truncating the data before f is evaluated.
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np

from ..errors import PrivacyError
from .samplers import add_noise, draw, grid_scale

GAUSSIAN_CALIBRATIONS = ("classic", "analytic")


def check_epsilon_delta(epsilon: float, delta: float | None = None) -> None:
    """Refuse privacy parameters outside (0, inf) x (0, 1)."""
    if not (isinstance(epsilon, (int, float, np.floating)) and math.isfinite(epsilon) and epsilon > 0):
        raise PrivacyError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    if delta is not None and not (isinstance(delta, (int, float, np.floating)) and 0 < delta < 1):
        raise PrivacyError(f"delta must lie strictly between 0 and 1, got {delta!r}")


def check_sensitivity(sensitivity: float) -> None:
    """Refuse a sensitivity that is not a finite number > 0."""
    # A zero sensitivity silently releases the data without noise (diffprivlib issue #105): refuse it.
    if not (math.isfinite(sensitivity) and sensitivity > 0):
        raise PrivacyError(f"sensitivity must be a finite number > 0, got {sensitivity!r}")


# The largest public bound or tuning constant, 2^484 ≈ 5.0e145: a release sums n per-row terms, each at most a product
# of two bounds (B_X², B_X·B_Y, R²) ≤ 2^968, so a sum over up to 2^53 rows (more than any array holds) stays below
# 2^1021, a quarter of the float maximum. A larger bound could make the sum overflow on one neighbour and not on the
# other (one side released, the other refused: δ = 1 for that pair); checked from the bound alone, never from n or
# the data, so neighbours are refused alike. The smallest, 2^-484 ≈ 2.0e-146, keeps a product of two bounds a normal
# float (a subnormal bound divided the calibrations by zero).
BOUND_MIN, BOUND_MAX = 2.0**-484, 2.0**484


def check_positive(name: str, value: float) -> float:
    """A public bound or tuning constant must be a finite number in [:data:`BOUND_MIN`, :data:`BOUND_MAX`]: a zero
    bound would mean zero noise, a larger one lets a sum of n per-row terms overflow on one neighbour only, and a
    smaller one makes its products subnormal."""
    if not (isinstance(value, (int, float, np.floating)) and math.isfinite(value) and value > 0):
        raise PrivacyError(f"{name} must be a finite number > 0, got {value!r}")
    if value > BOUND_MAX:
        raise PrivacyError(
            f"{name} = {value!r} exceeds 2^484 (about 5.0e145): sums of n terms of that size can overflow on one "
            "data set and not on its neighbour; rescale the data so that the bound is smaller"
        )
    if value < BOUND_MIN:
        raise PrivacyError(
            f"{name} = {value!r} is below 2^-484 (about 2.0e-146), where products of bounds leave "
            "the normal floats; rescale the data so that the bound is larger"
        )
    return float(value)


def check_probability(name: str, value: float) -> float:
    """A failure probability or a share of the budget must lie in [:data:`BOUND_MIN`, 1): a subnormal one divides the
    calibrations by zero."""
    if not (isinstance(value, (int, float, np.floating)) and not isinstance(value, bool) and BOUND_MIN <= value < 1):
        raise PrivacyError(f"{name} must lie strictly between 0 and 1 (and be at least 2^-484), got {value!r}")
    return float(value)


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """Scale b = Δ₁/ε of the Laplace mechanism (Dwork, McSherry, Nissim & Smith 2006)."""
    check_sensitivity(sensitivity)
    check_epsilon_delta(epsilon)
    return sensitivity / epsilon


def _coordinates(value: np.ndarray) -> int:
    """Coordinates of one release: the last axis of ``value``; leading axes index independent releases (an audit's
    draws, a batch of repetitions)."""
    return value.shape[-1] if value.ndim else 1


def laplace_mechanism(value, *, sensitivity: float, epsilon: float, rng: np.random.Generator, sampler: str = "exact"):
    """Release ``value`` + i.i.d. Laplace noise of scale Δ₁/ε, drawn exactly on a grid (:mod:`.samplers`; the
    scale is raised by the grid's rounding cost, a relative k·2⁻²⁰·(1/ε) for k coordinates).

    The last axis of ``value`` holds the coordinates of one release (leading axes: independent releases).
    Guarantee: (ε, 0)-DP if ‖f(D) − f(D′)‖₁ ≤ ``sensitivity`` for every pair of neighbouring data sets D, D′
    (the caller's relation). Used by the Cost of Privacy papers (000 Alg. 1, 004 Alg. 3.2) with replace-one neighbours.
    """
    value = np.asarray(value, dtype=float)
    b = grid_scale(laplace_scale(sensitivity, epsilon), sensitivity, _coordinates(value), "l1", "laplace", sampler)
    return add_noise(value, "laplace", b, rng, sampler)


def report_noisy_max_scale(sensitivity: float, epsilon: float, sampler: str = "exact") -> float:
    """The Laplace scale of :func:`report_noisy_max`: 2Δ/ε, raised by one grid step for rounding the scores."""
    check_sensitivity(sensitivity)
    check_epsilon_delta(epsilon)
    return grid_scale(2 * sensitivity / epsilon, sensitivity, 1, "linf", "laplace", sampler)


def noisy_argmax(u: np.ndarray, b: float, rng: np.random.Generator, sampler: str = "exact") -> int:
    """argmax_j (u_j + Z_j), Z_j i.i.d. Laplace(b) drawn exactly on a grid; ties to the lowest index (which keeps
    report-noisy-max ε-DP on the grid's integer scores)."""
    return int(np.argmax(draw("laplace", b, u.shape, rng, sampler).add(u)))


def report_noisy_max(u, *, sensitivity: float, epsilon: float, rng: np.random.Generator, sampler: str = "exact") -> int:
    """The exponential mechanism as report-noisy-max: :func:`noisy_argmax` at Laplace(2Δ/ε)
    (:func:`report_noisy_max_scale`). Returns the chosen index.

    Guarantee: (ε, 0)-DP if every score moves by at most Δ = ``sensitivity`` between neighbouring data sets
    (‖u(D) − u(D′)‖∞ ≤ Δ; the caller's relation) and the candidates are fixed without the data. 2Δ/ε rather than Δ/ε
    because the scores need not move together (Dwork & Roth 2014, Claim 3.9, and the audit in
    ``tests/unit/dp/test_quantiles.py``, whose quantiles use the same two functions).
    """
    u = np.asarray(u, dtype=float)
    if u.ndim != 1 or u.size < 1:
        raise PrivacyError(f"report-noisy-max needs a non-empty vector of scores, got shape {u.shape}")
    return noisy_argmax(u, report_noisy_max_scale(sensitivity, epsilon, sampler), rng, sampler)


def gaussian_delta(sigma: float, sensitivity: float, epsilon: float) -> float:
    """Exact δ(ε) of the Gaussian mechanism with noise σ (Balle & Wang 2018, Theorem 8)."""
    from scipy import special  # here: slow to import (0.26 s), and a job that calibrates nothing never needs it

    a = sensitivity / (2 * sigma)
    b = epsilon * sigma / sensitivity
    # log-space keeps e^ε Φ(·) finite for large ε
    return math.exp(special.log_ndtr(a - b)) - math.exp(epsilon + special.log_ndtr(-a - b))


def classic_gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """σ = Δ₂ √(2 log(1.25/δ)) / ε (Dwork & Roth 2014, Thm A.1), proven only for ε < 1: the caller checks that range
    (:func:`gaussian_sigma` does; a plan does it once, in its own terms, through ``Privacy.outside_validity``)."""
    return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon


def gaussian_sigma(
    sensitivity: float, epsilon: float, delta: float, calibration: str = "analytic", *, on_invalid: str = "refuse"
) -> float:
    """Noise standard deviation σ of the Gaussian mechanism for ℓ2-sensitivity Δ₂ at (ε, δ).

    calibration
        ``"classic"``: σ = Δ₂ √(2 log(1.25/δ)) / ε, the formula printed in The Cost of Privacy (000 §3.2.3,
        004 Alg. 3.1) and in Dwork & Roth (2014, Thm A.1). Proven only for ε < 1: outside it this function
        refuses (``on_invalid="refuse"``) or warns (``"warn"``).
        ``"analytic"``: the smallest σ with Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ) ≤ δ (Balle & Wang 2018),
        exact for every ε > 0 and never larger than the classic σ where that one is valid.
    """
    check_sensitivity(sensitivity)
    check_epsilon_delta(epsilon, delta)
    if calibration == "classic":
        if epsilon >= 1:
            msg = (
                f"the classic Gaussian calibration is proven only for epsilon < 1 (got epsilon={epsilon}); "
                "use calibration 'analytic'"
            )
            if on_invalid == "refuse":
                raise PrivacyError(msg)
            warnings.warn("PRIVACY WARNING: " + msg, RuntimeWarning, stacklevel=2)
        return classic_gaussian_sigma(sensitivity, epsilon, delta)
    if calibration == "analytic":
        return _analytic_sigma(float(sensitivity), float(epsilon), float(delta))
    raise PrivacyError(f"unknown Gaussian calibration {calibration!r}; choose one of {GAUSSIAN_CALIBRATIONS}")


# A plan is computed for every release (every repetition's, every interval block's), and the root finding is most of
# its cost; σ is a pure function of (Δ, ε, δ), so it is kept (the same float, bit for bit).
@functools.lru_cache(maxsize=4096)
def _analytic_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """The analytic Gaussian σ of :func:`gaussian_sigma` (inputs already checked)."""

    # δ(σ) decreases monotonically in σ; bracket the root on a log scale.
    def excess(log_sigma: float) -> float:
        return gaussian_delta(math.exp(log_sigma), sensitivity, epsilon) - delta

    lo, hi = math.log(sensitivity) - 20, math.log(sensitivity) + 20
    while excess(hi) > 0:
        hi += 20
    from scipy import optimize  # here: slow to import

    log_sigma = optimize.brentq(excess, lo, hi, xtol=1e-12, rtol=1e-14)
    sigma = math.exp(log_sigma)
    # brentq may stop a hair below the root: step up until the guarantee holds.
    while gaussian_delta(sigma, sensitivity, epsilon) > delta:
        sigma *= 1 + 1e-12
    return sigma


def gaussian_mechanism(
    value,
    *,
    sensitivity: float,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    calibration: str = "analytic",
    sampler: str = "exact",
):
    """Release ``value`` + i.i.d. Gaussian noise, σ from :func:`gaussian_sigma` raised by the grid's rounding cost
    and margin (:mod:`.samplers`), drawn exactly as a discrete Gaussian on the grid.

    The last axis of ``value`` holds the coordinates of one release (leading axes: independent releases).
    Guarantee: (ε, δ)-DP if ‖f(D) − f(D′)‖₂ ≤ ``sensitivity`` for every pair of neighbouring data sets
    (the caller's relation).
    """
    value = np.asarray(value, dtype=float)
    sigma = gaussian_sigma(sensitivity, epsilon, delta, calibration)
    sigma = grid_scale(sigma, sensitivity, _coordinates(value), "l2", "gaussian", sampler)
    return add_noise(value, "gaussian", sigma, rng, sampler)


def calibrated_gaussian_sigma(
    privacy, sensitivity: float, epsilon: float, delta: float, m: int, where: str
) -> tuple[float, str]:
    """σ of one Gaussian release of m coordinates with ℓ2 ``sensitivity`` at (ε, δ), and how it was calibrated:
    ``privacy.calibration`` "paper" the classic σ (proven for ε < 1; outside, ``privacy.outside_validity`` refuses
    or warns, naming ``where``), "tight" the analytic σ (Balle & Wang 2018); raised to the grid of
    ``privacy.sampler`` (:func:`~.samplers.grid_scale`)."""
    if privacy.calibration == "paper":
        if epsilon >= 1:
            privacy.outside_validity(f"{where}: the classic Gaussian mechanism needs epsilon < 1, got {epsilon:.4g}")
        sigma, how = classic_gaussian_sigma(sensitivity, epsilon, delta), "classic Gaussian (Dwork & Roth, Thm A.1)"
    else:
        sigma, how = gaussian_sigma(sensitivity, epsilon, delta, "analytic"), "analytic Gaussian (Balle & Wang 2018)"
    return grid_scale(sigma, sensitivity, m, "l2", "gaussian", privacy.sampler), how
