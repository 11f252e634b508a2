"""Preconditioned clipped noisy GD with privately chosen clip bounds: the sensitivities of every release hold on random
and adversarial neighbours, plan = estimator (both calibrations), the tight plan composes to the target, an audit
that catches a halved step sensitivity, the bounds grow as the noise shrinks, recovery and the add/remove refusal.
Hostile rows: the registry-wide tests/unit/estimators/test_hostile_records.py, both calibrations."""

import math

import numpy as np
import pytest

from dpcost.dp import accountant
from dpcost.dp.mechanisms import classic_gaussian_sigma
from dpcost.dp.privacy import Privacy
from dpcost.errors import PrivacyError
from dpcost.estimators import precond_gd_adaptive as mod
from dpcost.estimators.base import JointClip
from dpcost.estimators.precond_gd import whitened_rows
from dpcost.estimators.precond_gd_adaptive import precond_gd_adaptive, precond_gd_adaptive_plan

from support import alternating_pair, pair_audit, recovery_errors

# the estimator's defaults, which the plan takes explicitly (the registry keeps defaults in the estimator only)
DEFAULTS = dict(T=mod.STEPS, clip_updates=mod.CLIP_UPDATES, f_rows=mod.ROW_SHARE, f0=mod.PRECOND_SHARE,
                f_clip=mod.CLIP_SHARE)  # fmt: skip


def _upper(A):
    return A[np.triu_indices(A.shape[0])]


def test_every_release_moves_by_at_most_its_sensitivity():
    rng = np.random.default_rng(0)
    d = 3
    edges = mod.grid_edges(d)
    for trial in range(300):
        n = 20
        X = rng.standard_t(1.5, size=(n, d)) * 10.0 ** rng.integers(-2, 4)
        y = rng.standard_t(1.5, size=n) * 10.0 ** rng.integers(-2, 4)
        X2, y2 = X.copy(), y.copy()
        i = rng.integers(n)
        if trial % 3 == 0:  # adversarial: the row swapped between the bottom and the top (or overflowing) bin
            X[i], X2[i], y2[i] = 0.0, 1e300, -1e300
        else:
            X2[i], y2[i] = rng.normal(size=d) * 1e3, rng.normal() * 1e3
        # the row-norm histogram: ℓ2 distance ≤ √2 (an overflowing norm counts in the top bin)
        with np.errstate(over="ignore"):
            diff = mod.histogram_counts(np.linalg.norm(X, axis=1), edges) - mod.histogram_counts(
                np.linalg.norm(X2, axis=1), edges
            )
        assert np.linalg.norm(diff) <= mod.HIST_SENSITIVITY + 1e-12
        # the Gram in units of B0²: ≤ √2
        B0 = float(edges[rng.integers(edges.size)])
        with np.errstate(over="ignore"):  # a zero row's factor min(1, B0/tiny) overflows to 1, as it should
            G = [_upper((mod.clip_rows(Z, B0) / B0).T @ (mod.clip_rows(Z, B0) / B0)) for Z in (X, X2)]
        assert np.linalg.norm(G[0] - G[1]) <= math.sqrt(2) * (1 + 1e-12)
        # a step's sum of unit terms at a public (M, b, C): ≤ 2, the gradient-norm histogram: ≤ √2
        M, b, C = rng.normal(size=(d, d)), rng.normal(size=d) * 10, float(edges[rng.integers(edges.size)])
        sums, hists = [], []
        for Z, t in ((X, y), (X2, y2)):
            U = whitened_rows(Z, M)
            clip = JointClip(U)
            with np.errstate(over="ignore", invalid="ignore"):
                r = t - U @ b
            sums.append(clip.V.T @ (clip.weights(r, C) / C))
            hists.append(mod.histogram_counts(clip.norms(r), edges))
        assert np.linalg.norm(sums[0] - sums[1]) <= mod.STEP_SENSITIVITY * (1 + 1e-12)
        assert np.linalg.norm(hists[0] - hists[1]) <= mod.HIST_SENSITIVITY + 1e-12


def test_bounds_are_read_privately_and_grow_as_the_noise_shrinks():
    edges = mod.grid_edges(4)
    norms = np.abs(np.random.default_rng(1).standard_t(2, size=20_000)) * 2
    h = mod.histogram_counts(norms, edges)
    bounds = [mod.bound_from_histogram(h, edges, 1.0, 1, nu) for nu in (1e4, 1e3, 1e2, 10.0, 1.0)]
    assert bounds == sorted(bounds) and bounds[-1] > 10 * bounds[0]
    # when the noise is small, only what the thresholding calls empty (≤ KAPPA σ per bin above the bound) is clipped
    assert (norms > bounds[-1]).sum() <= mod.KAPPA * 1.0 * ((edges > bounds[-1]).sum() + 1)
    # the guard: no edge with more than most_above counted above it (the top edge if every one has)
    B = mod.bound_from_histogram(h, edges, 1.0, 1, 1e4, most_above=1000)
    assert B > bounds[0] and (norms > B).sum() <= 1000 < (norms > edges[edges < B].max()).sum()
    assert mod.bound_from_histogram(h, edges, 1.0, 1, 1e4, most_above=-1) == edges[-1]
    # noise alone (an empty histogram's bins below KAPPA σ) does not raise the bound above the lowest edge
    assert mod.bound_from_histogram(np.full(edges.size + 1, 2.9), edges, 1.0, 1, 1.0) == edges[0]


def test_add_remove_and_bad_shares_are_refused():
    X = np.random.default_rng(0).normal(size=(50, 3))
    with pytest.raises(PrivacyError, match="replace-one neighbours only"):
        precond_gd_adaptive(
            X, X[:, 0], privacy=Privacy(1.0, 1e-6, neighbours="add_remove"), rng=np.random.default_rng(0)
        )
    with pytest.raises(PrivacyError, match="must be below 1"):
        precond_gd_adaptive_plan(Privacy(1.0, 1e-6), 100, 3, **{**DEFAULTS, "f_rows": 0.5, "f0": 0.3, "f_clip": 0.3})
    with pytest.raises(PrivacyError, match="clip_updates"):
        precond_gd_adaptive_plan(Privacy(1.0, 1e-6), 100, 3, **{**DEFAULTS, "T": 2, "clip_updates": 3})


@pytest.mark.parametrize("eps,n", [(0.5, 2000), (8.0, 20000)])
def test_tight_plan_composes_to_the_target(eps, n):
    p = Privacy(eps, 10 / n**1.1, "tight")
    plan = precond_gd_adaptive_plan(p, n, 5, **DEFAULTS)
    pld = accountant.dpa()[1].privacy_loss_distribution
    total = None
    for r in plan.releases:  # each with its grid rounding paid, composed by dp-accounting's PLD
        z = r.noise_scale / (r.sensitivity + r.rounding)
        one = pld.from_gaussian_mechanism(z, value_discretization_interval=1e-4)
        one = one.self_compose(r.count) if r.count > 1 else one
        total = one if total is None else total.compose(one)
    eps_pld = total.get_epsilon_for_delta(plan.delta)
    assert 0.95 * eps < eps_pld <= eps * (1 + 1e-3)  # spent, not exceeded (PLD's grid is pessimistic by ~1e-4)
    assert [r.count for r in plan.releases] == [1, 1, mod.CLIP_UPDATES, mod.STEPS]


def test_paper_plan_is_basic_composition_of_classic_gaussians():
    p = Privacy(0.5, 1e-5, "paper")
    plan = precond_gd_adaptive_plan(p, 2000, 4, **DEFAULTS)
    assert sum(r.epsilon * r.count for r in plan.releases) == pytest.approx(0.5)
    assert sum(r.delta * r.count for r in plan.releases) == pytest.approx(1e-5)
    for r in plan.releases:
        assert r.noise_scale >= classic_gaussian_sigma(r.sensitivity, r.epsilon, r.delta)
    with pytest.raises(PrivacyError, match="epsilon < 1"):
        precond_gd_adaptive_plan(Privacy(8.0, 1e-5, "paper"), 2000, 4, **DEFAULTS)


@pytest.mark.parametrize("calibration", ["paper", "tight"])
def test_estimator_draws_the_plans_sigmas(calibration, monkeypatch):
    seen = []
    real_add, real_sym, real_draw = mod.add_noise, mod.noisy_symmetric, mod.draw
    monkeypatch.setattr(mod, "add_noise", lambda v, k, s, r, sm: seen.append(("h", s)) or real_add(v, k, s, r, sm))
    monkeypatch.setattr(mod, "noisy_symmetric", lambda G, s, r, sm: seen.append(("g", s)) or real_sym(G, s, r, sm))
    monkeypatch.setattr(mod, "draw", lambda k, s, shape, r, sm: seen.append(("s", s)) or real_draw(k, s, shape, r, sm))
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(800, 4)), rng.normal(size=800)
    p = Privacy(0.5, 1e-5, calibration)
    precond_gd_adaptive(X, y, privacy=p, rng=rng)
    s_rows, s_gram, s_hist, s_step = (r.noise_scale for r in precond_gd_adaptive_plan(p, 800, 4, **DEFAULTS).releases)
    steps = [("h", s_hist), ("s", s_step)] * mod.CLIP_UPDATES + [("s", s_step)] * (mod.STEPS - mod.CLIP_UPDATES)
    assert seen == [("h", s_rows), ("g", s_gram)] + steps


# Audit. n − 1 rows x = 1 with y = ±1e6 alternating and one row y = ±1e6: every |r_i| ≈ 1e6 on both data sets, so
# both histograms put every count in the top bin (301 counts, far above KAPPA σ) and C = the top edge on both; every
# step's sum is then ±C whatever b, so the output is monotone in the steps' Gaussians, Δ/σ = 2√T·C/σ_s (the Gram
# noise and B0 only rescale it by M > 0).
# Float-unsafe noise for speed (the exact sampler is audited in tests/unit/dp; here the calibration is the target).
X_A, Y_A, Y2_A = alternating_pair(301)
P_A = Privacy(0.5, 0.03, "tight", sampler="float-unsafe")


def _audit(n, seed):
    fit = lambda X, y, rng: precond_gd_adaptive(X, y, privacy=P_A, rng=rng)  # noqa: E731
    return pair_audit(fit, X_A, Y_A, Y2_A, n=n, seed=seed, delta=P_A.delta)


def test_audit_passes_and_catches_a_halved_step_sensitivity(monkeypatch):
    assert _audit(8_000, 0) <= P_A.epsilon  # measured 0.02
    monkeypatch.setattr(mod, "STEP_SENSITIVITY", 1.0)  # planted: add/remove's bound under replace-one
    assert _audit(8_000, 10**6) > P_A.epsilon  # measured 0.79 (0.79 at another seed)


def test_recovers_ols_at_large_n_and_epsilon():
    err = recovery_errors(precond_gd_adaptive)
    # OLS's own sampling error here is about 0.006: at ε = 8 the private estimate is well inside it
    assert err[8.0] < 0.006 and err[8.0] < err[0.5]
