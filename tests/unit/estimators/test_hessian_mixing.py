"""Iterative Hessian Mixing (Lev et al. 2026): the sketch's Rényi bound and the gradient's sensitivity, plan =
estimator, the accounting recomputed with dp-accounting, an audit that catches a clip wider than the sensitivity,
recovery of OLS, hostile rows and the add/remove refusal."""

import dataclasses
import math

import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant as rdpa

from dpcost.dp.audit import epsilon_lower_bound
from dpcost.dp.mechanisms import gaussian_delta
from dpcost.dp.privacy import CALIBRATIONS, Privacy
from dpcost.dp.samplers import FLOAT_NOISE
from dpcost.errors import PrivacyError
from dpcost.estimators import hessian_mixing as hm
from dpcost.estimators.base import clip_rows

BIG, FMAX = 1e300, np.finfo(float).max


def _plan(privacy, n, d, **tuning):
    """The plan at the estimator's defaults for every key not given (plans take every key)."""
    from dpcost.estimators.registry import METHODS

    return hm.hessian_mixing_plan(privacy, n, d, **{**METHODS["hessian_mixing"].tuning_defaults(), **tuning})


def _gauss_divergence(alpha, S1, S2):
    """Exact D_α(N(0, S1) ‖ N(0, S2)) (inf when αS2 + (1 − α)S1 is not positive definite)."""
    Sa = alpha * S2 + (1 - alpha) * S1
    if np.linalg.eigvalsh(Sa)[0] <= 0:
        return math.inf
    ld = lambda S: np.linalg.slogdet(S)[1]  # noqa: E731
    return -(ld(Sa) - (1 - alpha) * ld(S1) - alpha * ld(S2)) / (2 * (alpha - 1))


@pytest.mark.parametrize("r", [0.003, 0.05, 0.4])
def test_sketch_divergence_is_the_worst_case_over_the_geometry(r):
    # whitened pair N(0, I + uu'), N(0, I + ww'), |u|², |w|² ≤ r: a grid over both norms and the angle, both orders
    grid, cosines = np.linspace(0, r, 9), np.linspace(0, 1, 11)
    for alpha in (1.05, 2.0, 8.0, 0.95 * (1 + 1 / r)):
        bound = float(hm.sketch_divergence(alpha, r))
        worst = 0.0
        for p in grid:
            for q in grid:
                for c in cosines:
                    u = np.array([math.sqrt(p), 0.0])
                    w = math.sqrt(q) * np.array([c, math.sqrt(1 - c * c)])
                    S1, S2 = np.eye(2) + np.outer(u, u), np.eye(2) + np.outer(w, w)
                    worst = max(worst, _gauss_divergence(alpha, S1, S2), _gauss_divergence(alpha, S2, S1))
        assert worst <= bound * (1 + 1e-9)
        assert worst >= bound * (1 - 1e-9)  # attained (|u|² = |w|² = r, u ⊥ w): the bound is not loose
    assert math.isinf(float(hm.sketch_divergence(1 + 1 / r + 1e-9, r)))


def test_sketch_bound_holds_for_random_and_adversarial_neighbouring_designs():
    rng = np.random.default_rng(0)
    B, gamma, d = 2.0, 50.0, 3
    r = B**2 / gamma
    for trial in range(200):
        X = clip_rows(rng.standard_normal((12, d)) * rng.uniform(0.1, 3), B)
        v = clip_rows(rng.standard_normal((1, d)) * 5, B)[0]
        if trial % 2:  # adversarial: both rows on the sphere, v orthogonal to x along the weakest direction
            X[0] = B * np.linalg.eigh(X[1:].T @ X[1:])[1][:, 0]
            v = B * np.linalg.eigh(X[1:].T @ X[1:])[1][:, 1]
        X2 = X.copy()
        X2[0] = v
        S1, S2 = X.T @ X + gamma * np.eye(d), X2.T @ X2 + gamma * np.eye(d)
        for alpha in (1.5, 4.0, 20.0):
            assert _gauss_divergence(alpha, S1, S2) <= float(hm.sketch_divergence(alpha, r)) * (1 + 1e-9)


def _gradient(X, y, theta, B_X, C):
    Xc = clip_rows(X, B_X)
    return Xc.T @ np.clip(y - Xc @ theta, -C, C)


def test_gradient_moves_by_at_most_its_sensitivity():
    rng = np.random.default_rng(1)
    B_X, C, d = 1.5, 0.7, 4
    worst = 0.0
    for trial in range(500):
        X, y = rng.standard_normal((20, d)) * 3, rng.standard_normal(20) * 3
        theta = rng.standard_normal(d)
        X2, y2 = X.copy(), y.copy()
        if trial % 2:  # adversarial: opposite rows on the sphere with opposite clipped residuals
            X[0] = B_X * np.eye(d)[0] * 10
            X2[0], y[0], y2[0] = -X[0], 1e6, 1e6
        else:
            X2[0], y2[0] = rng.standard_normal(d) * 10, rng.standard_normal() * 10
        move = np.linalg.norm(_gradient(X, y, theta, B_X, C) - _gradient(X2, y2, theta, B_X, C))
        worst = max(worst, move)
        assert move <= 2 * B_X * C * (1 + 1e-12)
    assert worst >= 2 * B_X * C * (1 - 1e-9)  # attained: the sensitivity is not loose


def _spy(monkeypatch):
    seen = {"sigma": [], "sketch": []}
    real_noise, real_sketch = hm.add_noise, hm._sketch_hessian

    def noise(value, kind, scale, rng, sampler="exact"):
        seen["sigma"].append(scale)
        return real_noise(value, kind, scale, rng, sampler)

    def sketch(G, gamma, k, rng):
        seen["sketch"].append((gamma, k))
        return real_sketch(G, gamma, k, rng)

    monkeypatch.setattr(hm, "add_noise", noise)
    monkeypatch.setattr(hm, "_sketch_hessian", sketch)
    return seen


@pytest.mark.parametrize("calibration", CALIBRATIONS)
@pytest.mark.parametrize("reuse", [False, True])
def test_plan_is_what_the_estimator_uses_and_composes_within_budget(monkeypatch, calibration, reuse):
    rng = np.random.default_rng(2)
    n, d, eps = 400, 3, 1.0
    X, y = rng.standard_normal((n, d)), rng.standard_normal(n)
    p = Privacy(eps, "10/n^1.1", calibration=calibration)
    plan = _plan(p, n, d, reuse_sketch=reuse)
    par, (sk, gr) = plan.parameters, plan.releases
    seen = _spy(monkeypatch)
    hm.hessian_mixing(X, y, privacy=p, rng=rng, reuse_sketch=reuse)
    assert seen["sigma"] == [gr.noise_scale] * par["T"] == [gr.noise_scale] * gr.count
    assert seen["sketch"] == [(par["gamma"], par["k"])] * sk.count and sk.count == (1 if reuse else par["T"])
    assert FLOAT_NOISE in sk.sampler and FLOAT_NOISE not in gr.sampler
    assert gr.sensitivity == 2 * par["B_X"] * par["C"] and sk.noise_scale == par["gamma"]

    # recompute the guarantee with dp-accounting: the steps' Gaussian RDP from its accountant, the sketch's curve added
    delta, r, rho = p.at(n).delta, par["B_X"] ** 2 / par["gamma"], gr.sensitivity / gr.noise_scale
    orders = [1 + x for x in np.geomspace(1e-3, 0.999 / r, 3000)]
    steps = rdpa.RdpAccountant(orders)
    from dp_accounting import GaussianDpEvent, SelfComposedDpEvent

    steps.compose(SelfComposedDpEvent(GaussianDpEvent(1 / rho), par["T"]))
    sketch_rdp = sk.count * par["k"] * hm.sketch_divergence(np.array(orders), r)
    if calibration == "tight":
        eps_total = rdpa.compute_epsilon(orders, np.array(steps._rdp) + sketch_rdp, delta)[0]
        assert eps_total <= eps * (1 + 1e-6)
        assert eps_total >= 0.95 * eps  # the budget is used, not wasted
    else:  # sketches at (ε/2, 3δ/4) by RDP; the steps are one Gaussian of μ = √T ρ at (ε/2, δ/4); basic composition
        assert rdpa.compute_epsilon(orders, sketch_rdp, 3 * delta / 4)[0] <= eps / 2 * (1 + 1e-6)
        assert gaussian_delta(1.0, math.sqrt(par["T"]) * rho, eps / 2) <= delta / 4 * (1 + 1e-9)


def _audit_outputs(n_draws, seed, monkeypatch):
    """The released noisy gradient of one step (T = 1, d = 1) on the worst pair for it: the differing row
    (B_X, ±y_big) leaves X'X (so the sketch's law) unchanged and moves the clipped gradient by exactly 2·B_X·C.
    Almost all the budget is on the gradient (share 0.02); any one release must be at least as private as the
    whole, so its ε lower bound must stay ≤ the claimed ε."""
    released = []
    real_noise = hm.add_noise

    def record(*args, **kw):
        out = real_noise(*args, **kw)
        released.append(float(out[0]))
        return out

    monkeypatch.setattr(hm, "add_noise", record)
    X, y = np.ones((5, 1)), np.zeros(5)
    y2 = y.copy()
    y[0], y2[0] = 100.0, -100.0
    kw = dict(privacy=Privacy(1.0, 1e-5, calibration="tight"), B_X=1.0, C=1.0, T=1, share=0.02)
    rng = np.random.default_rng(seed)
    for data in ((X, y), (X, y2)):
        for _ in range(n_draws):
            hm.hessian_mixing(*data, rng=rng, **kw)
    return np.array(released[:n_draws]), np.array(released[n_draws:])


def test_audit_passes_and_catches_a_clip_wider_than_the_sensitivity(monkeypatch):
    assert epsilon_lower_bound(*_audit_outputs(15_000, 3, monkeypatch), 1e-5, select="bound") <= 1.0
    real_plan = hm.hessian_mixing_plan

    def wider(*args, **kw):  # planted bug: residuals clipped at 3C while σ is calibrated for the sensitivity 2·B_X·C
        plan = real_plan(*args, **kw)
        return dataclasses.replace(plan, parameters={**plan.parameters, "C": 3 * plan.parameters["C"]})

    monkeypatch.setattr(hm, "hessian_mixing_plan", wider)
    assert epsilon_lower_bound(*_audit_outputs(15_000, 4, monkeypatch), 1e-5, select="bound") > 1.0


def test_large_n_and_epsilon_recover_ols():
    rng = np.random.default_rng(5)
    n, d = 50_000, 4
    X = rng.standard_normal((n, d))
    beta = np.array([0.5, -0.3, 0.2, 0.0])
    y = X @ beta + 0.5 * rng.standard_normal(n)
    ols = np.linalg.lstsq(X, y, rcond=None)[0]
    est = [hm.hessian_mixing(X, y, privacy=Privacy(8.0, "10/n^1.1", "tight"), rng=rng) for _ in range(10)]
    # OLS's own sampling error is 0.5·√(d/n) ≈ 0.0045: the private estimate must sit within twice that of OLS
    err = np.mean([np.linalg.norm(e - ols) for e in est])
    assert err < 2 * 0.5 * math.sqrt(d / n), err


HOSTILE = {
    "row_plus_1e300": lambda X, y: (np.vstack([np.full((1, X.shape[1]), BIG), X[1:]]), np.r_[BIG, y[1:]]),
    "row_minus_1e300": lambda X, y: (np.vstack([np.full((1, X.shape[1]), -BIG), X[1:]]), np.r_[-BIG, y[1:]]),
    "cell_min_float": lambda X, y: (np.vstack([np.r_[X[0, :-1], -FMAX], X[1:]]), y),
    "row_mixed_1e300": lambda X, y: (np.vstack([BIG * (-1.0) ** np.arange(X.shape[1]), X[1:]]), np.r_[-BIG, y[1:]]),
    "cell_max_float": lambda X, y: (np.vstack([np.r_[FMAX, X[0, 1:]], X[1:]]), y),
    "y_max_float": lambda X, y: (X, np.r_[FMAX, y[1:]]),
    "row_of_zeros": lambda X, y: (np.vstack([np.zeros(X.shape[1]), X[1:]]), np.r_[0.0, y[1:]]),
    "all_rows_duplicated": lambda X, y: (np.repeat(X[:1], len(X), axis=0), np.repeat(y[:1], len(y))),
    "constant_column": lambda X, y: (np.column_stack([np.full(len(X), X[0, 0]), X[:, 1:]]), y),
    "y_constant": lambda X, y: (X, np.full_like(y, y[0])),
    "every_row_hostile": lambda X, y: (BIG * (-1.0) ** np.arange(X.size).reshape(X.shape), np.full_like(y, BIG)),
}


@pytest.mark.parametrize("calibration", CALIBRATIONS)
@pytest.mark.parametrize("variant", sorted(HOSTILE))
def test_hostile_records_give_a_finite_estimate(calibration, variant):
    rng = np.random.default_rng(6)
    X, y = HOSTILE[variant](rng.standard_normal((60, 3)), rng.standard_normal(60))
    est = hm.hessian_mixing(X, y, privacy=Privacy(1.0, 1e-5, calibration), rng=rng)
    assert est.shape == (3,) and np.isfinite(est).all()


def test_add_remove_is_refused_and_bad_tuning_is_one_clear_error():
    rng = np.random.default_rng(7)
    X, y = rng.standard_normal((50, 2)), rng.standard_normal(50)
    with pytest.raises(PrivacyError, match="replace-one"):
        hm.hessian_mixing(X, y, privacy=Privacy(1.0, 1e-5, neighbours="add_remove"), rng=rng)
    for bad in ({"share": 1.0}, {"T": 0}, {"B_X": -1.0}, {"k": 0}):
        with pytest.raises(PrivacyError):
            hm.hessian_mixing(X, y, privacy=Privacy(1.0, 1e-5), rng=rng, **bad)
