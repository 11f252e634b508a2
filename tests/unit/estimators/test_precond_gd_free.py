"""Tuning-free preconditioned clipped noisy GD: the rules are data-free and grow with n and ε, plan = estimator,
the composition meets the target, an audit that catches a halved step sensitivity, recovery, hostile rows and the
add/remove refusal. (precond_gd's own sensitivities are checked in test_frontier_ols.py.)"""

import numpy as np
import pytest
from test_hostile_records import hostile_variants

from dpcost.dp import accountant
from dpcost.dp.privacy import Privacy
from dpcost.errors import PrivacyError
from dpcost.estimators import precond_gd as pgd_module
from dpcost.estimators.precond_gd_free import default_constants, precond_gd_free, precond_gd_free_plan

from support import alternating_pair, pair_audit, recovery_errors


def _plan(privacy, n, d, B0=None, C=None, T=None, f0=0.2):
    """The plan at the estimator's defaults for every key not given (plans take every key)."""
    return precond_gd_free_plan(privacy, n, d, B0=B0, C=C, T=T, f0=f0)


def test_rules_are_data_free_and_grow_with_n_and_epsilon():
    rng = np.random.default_rng(0)
    p = Privacy(1.0, 1e-6, "tight")
    plans = [_plan(p, 3000, 5) for _ in range(2)]
    assert plans[0] == plans[1] and plans[0].parameters == {**default_constants(3000, 5, 1.0, 1e-6), "f0": 0.2}
    # two data sets of the same (n, d), one heavy-tailed and far: the estimator runs precond_gd at the same constants
    seen = []
    real = pgd_module.precond_gd_plan

    def spy(*a, **kw):
        seen.append(kw)
        return real(*a, **kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pgd_module, "precond_gd_plan", spy)
        for X in (rng.normal(size=(3000, 5)), 100 * rng.standard_t(1.5, size=(3000, 5))):
            precond_gd_free(X, X[:, 0] * 7, privacy=p, rng=np.random.default_rng(1))
    assert len(seen) == 2 and seen[0] == seen[1]
    a, b, c = (default_constants(n, 5, e, 1e-6) for n, e in ((2000, 0.5), (20000, 0.5), (20000, 8.0)))
    assert a["B0"] < b["B0"] < c["B0"] and a["C"] < b["C"] < c["C"]


def test_add_remove_is_refused_with_or_without_the_rules():
    p = Privacy(1.0, 1e-6, neighbours="add_remove")
    X = np.random.default_rng(0).normal(size=(50, 3))
    with pytest.raises(PrivacyError, match="replace-one neighbours only"):
        _plan(p, 1000, 3, C=1.0, T=3)
    with pytest.raises(PrivacyError, match="replace-one neighbours only"):
        precond_gd_free(X, X[:, 0], privacy=p, rng=np.random.default_rng(0))
    with pytest.raises(PrivacyError, match="replace-one"):  # precond_gd divides by n: refused with constants too
        _plan(p, 1000, 3, B0=2.0, C=1.0, T=3)
    with pytest.raises(PrivacyError, match="f0"):
        _plan(Privacy(1.0, 1e-6), 1000, 3, f0=1.0)


@pytest.mark.parametrize("eps,n", [(0.5, 2000), (8.0, 20000)])
def test_tight_plan_composes_to_the_target(eps, n):
    p = Privacy(eps, 10 / n**1.1, "tight")
    plan = _plan(p, n, 5)
    pld = accountant.dpa()[1].privacy_loss_distribution
    parts = []
    for r in plan.releases:  # each with its grid rounding paid, composed by dp-accounting's PLD
        z = r.noise_scale / (r.sensitivity + r.rounding)
        one = pld.from_gaussian_mechanism(z, value_discretization_interval=1e-4)
        parts.append(one.self_compose(r.count) if r.count > 1 else one)
    eps_pld = parts[0].compose(parts[1]).get_epsilon_for_delta(plan.delta)
    assert eps_pld <= eps * (1 + 1e-3)  # PLD's pessimistic grid over-estimates by ~1e-4 per term
    assert eps_pld > 0.95 * eps  # the budget is spent, not wasted
    k = plan.parameters
    assert [r.sensitivity for r in plan.releases] == pytest.approx([2**0.5 * k["B0"] ** 2, 2 * k["C"]])
    assert plan.releases[1].count == k["T"] and plan.method == "precond_gd_free"


@pytest.mark.parametrize("calibration", ["paper", "tight"])
def test_estimator_draws_the_plans_sigmas(calibration, monkeypatch):
    seen = []
    real_sym, real_draw = pgd_module.noisy_symmetric, pgd_module.draw
    monkeypatch.setattr(
        pgd_module, "noisy_symmetric", lambda G, s, r, sm: seen.append(("g", s)) or real_sym(G, s, r, sm)
    )
    monkeypatch.setattr(pgd_module, "draw", lambda k, s, shape, r, sm: seen.append(("s", s, shape)) or
                        real_draw(k, s, shape, r, sm))  # fmt: skip
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(800, 4)), rng.normal(size=800)
    p = Privacy(0.5, 1e-5, calibration)
    precond_gd_free(X, y, privacy=p, rng=rng)
    plan = _plan(p, 800, 4)
    sg, ss = (r.noise_scale for r in plan.releases)
    assert seen == [("g", sg), ("s", ss, (plan.parameters["T"], 4))]
    if calibration == "tight":
        assert plan.releases == pgd_module.precond_gd_plan(p, 800, 4, R=None, **plan.parameters).releases


# Audit. n − 1 rows x = 1 with y = ±1e6 alternating (their clipped terms cancel) and one row y = ±1e6: every step's
# sum is ±C whatever b, so the output M·b = M(±T·C + Σw_t)/n is monotone in one Gaussian with Δ/σ = 2√T·C/σ_s =
# μ√(1 − f0) (the Gram noise only rescales it by M > 0). Default constants; float-unsafe noise for speed (the exact
# sampler is audited in tests/unit/dp; here the calibration is the target).
X_A, Y_A, Y2_A = alternating_pair(101)
P_A = Privacy(0.5, 0.03, "tight", sampler="float-unsafe")


def _audit(n, seed):
    fit = lambda X, y, rng: precond_gd_free(X, y, privacy=P_A, rng=rng)  # noqa: E731
    return pair_audit(fit, X_A, Y_A, Y2_A, n=n, seed=seed, delta=P_A.delta)


def test_audit_passes_and_catches_a_halved_step_sensitivity(monkeypatch):
    assert _audit(4_000, 0) <= P_A.epsilon
    monkeypatch.setattr(pgd_module, "step_sensitivity", lambda C, R, neighbours: C)  # planted: add/remove's bound
    assert _audit(4_000, 10**6) > P_A.epsilon


def test_recovers_ols_at_large_n_and_epsilon():
    err = recovery_errors(precond_gd_free)
    # OLS's own sampling error here is about 0.006: at ε = 8 the private estimate is well inside it
    assert err[8.0] < 0.006 and err[8.0] < err[0.5]


@pytest.mark.parametrize("calibration", ["paper", "tight"])
def test_hostile_rows_give_finite_estimates(calibration):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    data = (X, X @ np.ones(4) + rng.normal(size=200))
    p = Privacy(0.5, 1e-6, calibration)
    for name, (Xh, yh) in hostile_variants("regression", data).items():
        est = precond_gd_free(Xh, yh, privacy=p, rng=np.random.default_rng(1))
        assert est.shape == (4,) and np.isfinite(est).all(), name
