"""Ledger entries match what ran: the noise an estimator adds has the standard deviation its plan records.

The ledger is built from the plans (src/dpcost/analysis/ledger.py), so a plan whose noise_scale differs from the
noise the estimator draws would make the ledger lie. For estimators whose noise can be isolated from the output, run
the registry estimator many times with fresh seeds on fixed data, isolate the noise, and compare its empirical
standard deviation with the recorded noise_scale: within 4 standard errors of the sd estimate, σ/√(2(N − 1)) for N
Gaussian draws (about 3-4 % here; classic vs analytic calibrations differ by 20 % or more at these budgets).
"""

import math
import warnings

import numpy as np
import pytest

from dpcost.dp.mechanisms import gaussian_mechanism, gaussian_sigma
from dpcost.dp.privacy import Privacy
from dpcost.estimators.ols import ols
from dpcost.estimators.registry import get
from dpcost.estimators.truncated_ols import truncated_ridge_fit

REPS = 1200


def seeds(n, key):
    return [np.random.default_rng(s) for s in np.random.SeedSequence([20261122, key]).spawn(n)]


def assert_sd(noise, sigma, what):
    """The empirical sd of i.i.d. draws is σ within 4 standard errors σ/√(2(N − 1)); their mean is 0 within 4 σ/√N."""
    noise = np.ravel(noise)
    N = noise.size
    sd = noise.std(ddof=1)
    tol = 4 * sigma / math.sqrt(2 * (N - 1))
    assert abs(sd - sigma) <= tol, f"{what}: empirical sd {sd:.6g}, recorded {sigma:.6g} (N = {N}, 4 SE = {tol:.3g})"
    assert abs(noise.mean()) <= 4 * sigma / math.sqrt(N), f"{what}: noise mean {noise.mean():.3g} is not 0"


def ball_design(n, d, seed=0, radius=1.0):
    """Rows uniform on the sphere of ``radius`` (inside every clipping ball used below), y in [-1, 1]."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X *= radius / np.linalg.norm(X, axis=1, keepdims=True)
    y = np.clip(X @ np.linspace(0.5, -0.5, d) + 0.3 * rng.normal(size=n), -1, 1)
    return X, y


def run(name, X, y, privacy, tuning, key, reps=REPS):
    """The registry estimator ``reps`` times with fresh seeds, and the plan it records (as the ledger reads it)."""
    spec = get(name)
    tuning = spec.resolve_tuning(tuning)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PRIVACY WARNING")
        plan = spec.make_plan(privacy, X.shape[0], X.shape[1], tuning, {})
        out = np.array(
            [spec.estimate(X, y, privacy=privacy, rng=r, tuning=tuning, params={})[0] for r in seeds(reps, key)]
        )
    return out, plan.to_dict(), tuning


@pytest.mark.parametrize("calibration", ["paper", "tight"])
def test_gaussian_mechanism_draws_the_calibrated_sigma(calibration):
    gauss = "classic" if calibration == "paper" else "analytic"
    sigma = gaussian_sigma(2.0, 0.5, 1e-5, gauss)
    value = np.tile([3.0, -1.0, 0.0, 1e3], (REPS, 1))  # REPS independent releases of 4 coordinates
    rng = np.random.default_rng(1)
    out = gaussian_mechanism(value, sensitivity=2.0, epsilon=0.5, delta=1e-5, rng=rng, calibration=gauss)
    assert_sd(out - value, sigma, f"gaussian_mechanism ({calibration})")


@pytest.mark.parametrize("sampler", ["exact", "float-unsafe"])
@pytest.mark.parametrize("calibration", ["paper", "tight"])
def test_noisy_truncated_ols_adds_the_recorded_noise(calibration, sampler):
    X, y = ball_design(300, 4)
    tuning = {"R": 1.0, "C": 2.0, "c_x": 1.0, "kappa": 0.5}
    privacy = Privacy(0.5, 1e-5, calibration, sampler=sampler)
    out, plan, tuning = run("noisy_truncated_ols", X, y, privacy, tuning, key=2)
    (rel,) = plan["releases"]
    assert plan["proven"] and rel["count"] == 1
    noise = out - truncated_ridge_fit(X, y, R=1.0, C=2.0, c_x=1.0, kappa=0.5)
    assert_sd(noise, rel["noise_scale"], f"noisy_truncated_ols ({calibration}, {sampler})")


def test_noisy_truncated_ols_printed_noise_is_recorded_as_used():
    """``noise: printed``: the paper's σ² = d R² log(1.25/δ)/(nε)² on the OLS of Π_R(y), recorded unproven."""
    X, y = ball_design(300, 4)
    n, d, R, eps, delta = 300, 4, 1.0, 0.5, 1e-5
    privacy = Privacy(eps, delta, "paper")
    out, plan, _ = run(
        "noisy_truncated_ols", X, y, privacy, {"R": R, "C": 2.0, "c_x": 1.0, "kappa": 0.5, "noise": "printed"}, key=3
    )
    (rel,) = plan["releases"]
    assert plan["proven"] is False and rel["sensitivity"] is None
    assert rel["noise_scale"] == pytest.approx(math.sqrt(d * R**2 * math.log(1.25 / delta)) / (n * eps), rel=1e-12)
    assert_sd(out - ols(X, np.clip(y, -R, R)), rel["noise_scale"], "noisy_truncated_ols (printed)")


@pytest.mark.parametrize("calibration", ["paper", "tight"])
def test_noisy_gd_steps_add_the_recorded_noise(calibration):
    """With the ball never reached, β_T = deterministic part + Σ_t M^{T−1−t} w_t, M = I − (η⁰/n)X'X: whitened by
    the square root of Σ_k M^{2k}, the noise of the T steps has i.i.d. coordinates of sd σ."""
    n, d, T, eta0, R, C, c_x = 1000, 3, 3, 0.5, 1.0, 50.0, 1.0
    X, y = ball_design(n, d)
    privacy = Privacy(0.5, 1e-5, calibration)
    out, plan, _ = run("noisy_gd", X, y, privacy, {"T": T, "eta0": eta0, "R": R, "C": C, "c_x": c_x}, key=4)
    (rel,) = plan["releases"]
    assert rel["count"] == T
    assert np.linalg.norm(out, axis=1).max() < C / 2  # the projection on the C ball never acted
    G, h = X.T @ X, X.T @ np.clip(y, -R, R)
    M = np.eye(d) - (eta0 / n) * G
    beta = np.zeros(d)
    for _ in range(T):
        beta = M @ beta + (eta0 / n) * h
    S = sum(np.linalg.matrix_power(M, 2 * k) for k in range(T))
    white = np.linalg.solve(np.linalg.cholesky(S), (out - beta).T)
    assert_sd(white, rel["noise_scale"], f"noisy_gd ({calibration})")


@pytest.mark.parametrize(("name", "calibration"), [("ssp", "tight"), ("adassp", "paper")])
def test_ssp_noise_on_xx_and_xy_is_the_recorded_noise(name, calibration):
    """Both noises are recovered exactly. The noise of a release does not depend on the value released, so with one
    seed and the same X the estimator sees the same noisy matrix A = X'X + E₁ (+ λI: AdaSSP's ridge, which depends
    on X only) for every y: y = 0 gives θ₀ = A⁻¹E₂, and y = the k-th column of X gives θ_k = A⁻¹(X'X e_k + E₂), so
    A = X'X (θ_1 − θ₀, …, θ_d − θ₀)⁻¹ and E₂ = A θ₀. E₁ is A − X'X (off the diagonal only, for AdaSSP)."""
    n, d = 3000, 3
    X, _ = ball_design(n, d)
    ys = [np.zeros(n), *X.T]
    privacy = Privacy(0.5, 1e-5, calibration, on_invalid="warn")
    tuning = {"B_X": 1.0, "B_Y": 1.0}
    reps = 500  # d + 1 fits a seed
    outs = [run(name, X, y, privacy, tuning, key=5, reps=reps) for y in ys]  # the same seeds for every y
    plan = outs[0][1]
    xx, xy = plan["releases"][-2:]
    assert xx["mechanism"].endswith("X'X upper triangle") and xy["mechanism"].endswith("X'y")
    G = X.T @ X
    theta0 = outs[0][0]
    dtheta = np.stack([o[0] - theta0 for o in outs[1:]], axis=-1)  # (reps, d, d): column k is θ_k − θ₀
    A = G @ np.linalg.inv(dtheta)
    assert np.allclose(A, np.swapaxes(A, 1, 2), rtol=0, atol=1e-6 * xx["noise_scale"])  # symmetric noise
    E1 = A - G
    iu = np.triu_indices(d, 0 if name == "ssp" else 1)
    assert_sd(E1[:, iu[0], iu[1]], xx["noise_scale"], f"{name} ({calibration}) X'X noise")
    assert_sd(np.einsum("rij,rj->ri", A, theta0), xy["noise_scale"], f"{name} ({calibration}) X'y noise")
