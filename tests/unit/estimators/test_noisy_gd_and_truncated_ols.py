"""Estimators of the Cost of Privacy: sensitivities hold, noise has the stated size, accuracy improves with ε and n."""

import math

import numpy as np
import pytest

from dpcost.dp.mechanisms import gaussian_sigma
from dpcost.dp.privacy import Privacy
from dpcost.dp.samplers import GridNoise, draw, grid_scale
from dpcost.errors import DataError, PrivacyError
from dpcost.estimators.base import clip_rows, project_l2_ball
from dpcost.estimators.noisy_gd import (
    noisy_gd_from_stats,
    noisy_gd_plan,
    noisy_gd_step_sensitivity,
    noisy_gradient_descent_ols,
)
from dpcost.estimators.ols import ols
from dpcost.estimators.truncated_ols import (
    noisy_truncated_ols,
    noisy_truncated_ols_plan,
    noisy_truncated_ols_sensitivity,
    truncated_ridge_fit,
)


def synthetic(n, d=5, sigma=0.1, seed=0):
    """The design of 004 §5: x uniform on [−1/√d, 1/√d]^d (so ‖x‖₂ ≤ 1), β uniform on the unit sphere."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1 / math.sqrt(d), 1 / math.sqrt(d), size=(n, d))
    beta = rng.normal(size=d)
    beta /= np.linalg.norm(beta)
    return X, X @ beta + sigma * rng.normal(size=n), beta


GD = dict(T=20, R=2.0, C=3.0, c_x=1.0, eta0=7.5)  # X'X/n ≈ I/15: η⁰λ ≈ 0.5 contracts the bias by 2 per step


def test_clip_and_project():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 4)) * 3
    Xc = clip_rows(X, 2.0)
    assert np.linalg.norm(Xc, axis=1).max() <= 2.0 + 1e-12
    inside = np.linalg.norm(X, axis=1) <= 2.0
    assert np.array_equal(Xc[inside], X[inside])
    assert np.linalg.norm(project_l2_ball(X, 1.5), axis=1).max() <= 1.5 + 1e-12


def test_ols_matches_normal_equations():
    X, y, _ = synthetic(500)
    assert np.allclose(ols(X, y), np.linalg.solve(X.T @ X, X.T @ y))


def test_gd_step_sensitivity_holds_for_adversarial_neighbours():
    # Replace-one change of (η⁰/n)Σ(x'β − Π_R(y))x, over random β in the C ball and records far outside the bounds
    # (clipped as the estimator clips them): never above the stated sensitivity.
    rng = np.random.default_rng(5)
    R, C, c_x, eta0, n, d = 1.5, 2.0, 1.2, 0.7, 100, 4
    bound = noisy_gd_step_sensitivity(R=R, C=C, c_x=c_x, eta0=eta0, n=n)
    worst = 0.0
    for _ in range(20000):
        beta = project_l2_ball(rng.normal(size=d) * 3, C)
        x, x2 = clip_rows(rng.normal(size=(2, d)) * 5, c_x)
        y, y2 = np.clip(rng.normal(size=2) * 5, -R, R)
        change = (eta0 / n) * ((x @ beta - y) * x - (x2 @ beta - y2) * x2)
        worst = max(worst, np.linalg.norm(change))
    assert worst <= bound
    assert worst > 0.5 * bound  # the search reaches the regime the bound is about


def test_truncated_ridge_sensitivity_holds_for_adversarial_neighbours():
    rng = np.random.default_rng(6)
    R, C, c_x, kappa, n, d = 1.0, 1.5, 1.0, 0.2, 30, 3
    bound = noisy_truncated_ols_sensitivity(R=R, C=C, c_x=c_x, kappa=kappa, n=n)
    worst = 0.0
    for _ in range(3000):
        X = rng.normal(size=(n, d)) * rng.uniform(0.1, 3)
        y = rng.normal(size=n) * rng.uniform(0.1, 5)
        X2, y2 = X.copy(), y.copy()
        X2[0] = rng.normal(size=d) * 10
        y2[0] = rng.choice([-1, 1]) * 10
        b1 = truncated_ridge_fit(X, y, R=R, C=C, c_x=c_x, kappa=kappa)
        b2 = truncated_ridge_fit(X2, y2, R=R, C=C, c_x=c_x, kappa=kappa)
        assert np.linalg.norm(b1) <= C + 1e-9
        worst = max(worst, np.linalg.norm(b1 - b2))
    assert worst <= bound


def test_gd_noise_sd_is_the_printed_formula():
    sd = noisy_gd_plan(Privacy(0.5, 1e-5), 1000, 5, B=None, **GD).releases[0].noise_scale
    B = 4 * (GD["R"] + GD["C"] * GD["c_x"]) * GD["c_x"]
    printed = GD["eta0"] * B * math.sqrt(2 * math.log(2 * GD["T"] / 1e-5)) / (1000 * 0.5 / GD["T"])
    sens = noisy_gd_step_sensitivity(R=GD["R"], C=GD["C"], c_x=GD["c_x"], eta0=GD["eta0"], n=1000)
    assert sd == grid_scale(printed, sens, 5, "l2", "gaussian")  # the printed σ, paid for the grid's rounding
    plan = noisy_gd_plan(Privacy(0.5, 1e-5), 1000, 5, B=None, **GD)
    assert plan.releases[0].sensitivity == sens  # the true one, not the η⁰B/n the paper derives σ from
    assert plan.parameters["noise derived from eta0 B / n"] == pytest.approx(2 * sens)


def test_gd_tight_noise_is_the_pld_multiplier_times_the_sensitivity():
    plan = noisy_gd_plan(Privacy(0.5, 1e-5, "tight"), 1000, 5, B=None, **GD)
    sens = noisy_gd_step_sensitivity(R=GD["R"], C=GD["C"], c_x=GD["c_x"], eta0=GD["eta0"], n=1000)
    # golden number: dp-accounting's PLD calibration of 20 Gaussian steps at (0.5, 1e-5) is σ/Δ = 31.447
    assert plan.releases[0].noise_scale / sens == pytest.approx(31.447, rel=1e-3)
    assert (
        plan.releases[0].noise_scale
        < noisy_gd_plan(Privacy(0.5, 1e-5), 1000, 5, B=None, **GD).releases[0].noise_scale / 5
    )


def test_gd_injected_noise_has_the_stated_size():
    # Without projection (C large) β^T − β^T_noiseless = Σ_k A^{T−1−k} w_k, A = I − η⁰X'X/n, so
    # E‖β^T − β^T_noiseless‖² = sd² tr Σ_{k<T} A^{2k}. Checked with 400 repetitions against its standard error.
    # ε = 16, n = 20000 keep ‖β^t‖ far inside the C ball, so the projection never acts.
    n = 20000
    X, y, _ = synthetic(n)
    eps, delta = 16.0, 1e-5
    sd = noisy_gd_plan(Privacy(eps, delta), n, 5, B=None, **GD).releases[0].noise_scale
    G, h = X.T @ X, X.T @ np.clip(y, -GD["R"], GD["R"])
    A = np.eye(5) - GD["eta0"] * G / n
    expected = sd**2 * sum(np.trace(np.linalg.matrix_power(A, 2 * k)) for k in range(GD["T"]))
    NO_NOISE = GridNoise(np.zeros((1, GD["T"], 5)), 1.0, exact=False)  # the continuous, noiseless iterates
    clean = noisy_gd_from_stats(G[None], h[None], n, eta0=GD["eta0"], C=GD["C"], noise=NO_NOISE)[0]
    sq = np.array(
        [
            np.sum(
                (
                    noisy_gradient_descent_ols(X, y, privacy=Privacy(eps, delta), rng=np.random.default_rng(r), **GD)
                    - clean
                )
                ** 2
            )
            for r in range(400)
        ]
    )
    assert abs(sq.mean() - expected) < 4 * sq.std(ddof=1) / math.sqrt(len(sq))
    assert 0.7 < sq.mean() / expected < 1.3  # and the test could tell a 30 % error in the noise variance


def test_gd_batched_core_equals_one_at_a_time():
    rng = np.random.default_rng(3)
    X, y, _ = synthetic(300)
    G = np.stack([X[i::3].T @ X[i::3] for i in range(3)])
    h = np.stack([X[i::3].T @ y[i::3] for i in range(3)])
    noise = draw("gaussian", 0.1, (3, 7, 5), rng)
    batched = noisy_gd_from_stats(G, h, 100, eta0=0.5, C=1.0, noise=noise)
    single = np.stack(
        [
            noisy_gd_from_stats(G[i : i + 1], h[i : i + 1], 100, eta0=0.5, C=1.0, noise=noise[i : i + 1])[0]
            for i in range(3)
        ]
    )
    assert np.array_equal(batched, single)


def _mean_error(fn, X, y, beta, reps=40, **kw):
    errs = np.array([np.linalg.norm(fn(X, y, rng=np.random.default_rng(r), **kw) - beta) for r in range(reps)])
    return errs.mean(), errs.std(ddof=1) / math.sqrt(reps)


def test_gd_recovers_beta_as_epsilon_grows():
    X, y, beta = synthetic(20000)
    ols_err = np.linalg.norm(ols(X, y) - beta)
    means = [_mean_error(noisy_gradient_descent_ols, X, y, beta, privacy=Privacy(e, 1e-6), **GD) for e in (1, 4, 16)]
    for (m1, s1), (m2, s2) in zip(means, means[1:], strict=False):
        assert m2 < m1 - 3 * math.hypot(s1, s2)
    # at ε = 16 the noise term predicts ≈ 0.08; the error must be of that order, far below ‖β‖ = 1
    assert means[-1][0] < 0.15 and means[-1][0] > ols_err


def test_gd_error_decreases_with_n():
    errs = []
    for n in (2000, 20000):
        X, y, beta = synthetic(n, seed=1)
        errs.append(_mean_error(noisy_gradient_descent_ols, X, y, beta, privacy=Privacy(4.0, 1 / n**1.1), **GD))
    assert errs[1][0] < errs[0][0] - 3 * math.hypot(errs[0][1], errs[1][1])


TOLS = dict(R=2.0, C=3.0, c_x=1.0, kappa=0.01)  # run with calibration "tight"


def test_truncated_ols_noise_has_the_stated_size():
    n = 5000
    X, y, _ = synthetic(n)
    fit = truncated_ridge_fit(X, y, R=2.0, C=3.0, c_x=1.0, kappa=0.01)
    sd = gaussian_sigma(noisy_truncated_ols_sensitivity(R=2.0, C=3.0, c_x=1.0, kappa=0.01, n=n), 2.0, 1e-5)
    plan = noisy_truncated_ols_plan(
        Privacy(2.0, 1e-5, "tight"), n, 5, R=2.0, C=3.0, c_x=1.0, kappa=0.01, noise="derived"
    )
    # tight = analytic Gaussian, paid for the grid's rounding
    assert plan.releases[0].noise_scale == grid_scale(sd, plan.releases[0].sensitivity, 5, "l2", "gaussian")
    sd = plan.releases[0].noise_scale
    sq = np.array(
        [
            np.sum(
                (
                    noisy_truncated_ols(X, y, privacy=Privacy(2.0, 1e-5, "tight"), rng=np.random.default_rng(r), **TOLS)
                    - fit
                )
                ** 2
            )
            for r in range(2000)
        ]
    )
    # ‖W‖²/sd² ~ χ²_5: mean 5, sd of the mean sqrt(10/2000)
    assert abs(sq.mean() / sd**2 - 5) < 4 * math.sqrt(10 / 2000) * 1.0


def test_truncated_ols_recovers_beta_as_epsilon_grows():
    X, y, beta = synthetic(20000)
    bias = np.linalg.norm(truncated_ridge_fit(X, y, R=2.0, C=3.0, c_x=1.0, kappa=0.01) - beta)
    means = [
        _mean_error(noisy_truncated_ols, X, y, beta, privacy=Privacy(e, 1e-6, "tight"), **TOLS) for e in (0.5, 2, 8)
    ]
    for (m1, s1), (m2, s2) in zip(means, means[1:], strict=False):
        assert m2 < m1 - 3 * math.hypot(s1, s2)
    assert means[-1][0] < bias + 0.1  # only the ridge bias (≈ 0.13 here) and a little noise remain


def test_truncated_ols_printed_noise_warns():
    X, y, _ = synthetic(200)
    with pytest.warns(RuntimeWarning, match="not a proven DP guarantee"):
        noisy_truncated_ols(
            X, y, privacy=Privacy(0.5, 1e-5, "tight"), rng=np.random.default_rng(0), noise="printed", **TOLS
        )


def test_estimators_refuse_what_would_break_their_guarantee():
    X, y, _ = synthetic(100)
    rng = np.random.default_rng(0)
    with pytest.raises(PrivacyError, match="below the replace-one sensitivity"):
        noisy_gradient_descent_ols(X, y, privacy=Privacy(0.5, 1e-5), rng=rng, B=0.1, **GD)
    with pytest.raises(PrivacyError, match="epsilon/T < 1"):
        noisy_gradient_descent_ols(X, y, privacy=Privacy(30.0, 1e-5), rng=rng, **GD)
    with pytest.raises(PrivacyError, match="c_x"):
        noisy_gradient_descent_ols(X, y, privacy=Privacy(0.5, 1e-5), rng=rng, **{**GD, "c_x": 0.0})
    with pytest.raises(PrivacyError, match="kappa"):
        noisy_truncated_ols(X, y, privacy=Privacy(0.5, 1e-5, "tight"), rng=rng, **{**TOLS, "kappa": 0})
    with pytest.raises(PrivacyError, match="epsilon < 1"):
        noisy_truncated_ols(X, y, privacy=Privacy(2.0, 1e-5, "paper"), rng=rng, **TOLS)
    with pytest.warns(RuntimeWarning, match="PRIVACY WARNING"):
        noisy_truncated_ols(X, y, privacy=Privacy(2.0, 1e-5, "paper", on_invalid="warn"), rng=rng, **TOLS)
    with pytest.raises(PrivacyError, match="calibration must be one of"):
        noisy_truncated_ols(X, y, privacy=Privacy(0.5, 1e-5, "classic"), rng=rng, **TOLS)
    X2 = X.copy()
    X2[3, 1] = np.nan
    with pytest.raises(DataError, match="NaN"):
        noisy_gradient_descent_ols(X2, y, privacy=Privacy(0.5, 1e-5), rng=rng, **GD)
    with pytest.raises(DataError, match="shape"):
        ols(X, y[:-1])
