"""The accountant, pinned: golden numbers from dp-accounting, and the plans' bookkeeping."""

import math

import pytest

from dpcost.dp import accountant
from dpcost.dp.privacy import Privacy
from dpcost.errors import PrivacyError
from dpcost.estimators.frank_wolfe import frank_wolfe_plan
from dpcost.estimators.noisy_gd import noisy_gd_plan
from dpcost.estimators.sparse_mean import peeling_plan


@pytest.mark.parametrize("T,golden", [(10, 22.237), (20, 31.447), (50, 49.723)])
def test_pld_noise_multipliers_are_pinned(T, golden):
    # σ/Δ that makes T Gaussian steps (0.5, 1e-5)-DP (dp-accounting's PLD accountant gave the same numbers)
    assert accountant.gaussian_noise_multiplier(T, 0.5, 1e-5) == pytest.approx(golden, abs=2e-3)
    # basic composition of the classic formula needs 106, 217, 560: 5–11 times more noise
    basic = math.sqrt(2 * math.log(1.25 * T / 1e-5)) * T / 0.5
    assert basic / golden > 4.7


@pytest.mark.parametrize("T,epsilon,delta", [(2, 8.0, 1e-4), (10, 0.5, 2.3e-3), (100, 1.0, 1e-6), (30, 0.1, 1e-8)])
def test_the_closed_form_is_dp_accountings_pld_calibration(T, epsilon, delta):
    """T Gaussians compose exactly as one of sensitivity √T (Gaussian DP): the closed form is dp-accounting's PLD
    calibration (grid 1e-4, root-finder tolerance) to a relative 1e-5, and spends ε at δ, not more."""
    lib, pld, _ = accountant.dpa()
    z = accountant.gaussian_noise_multiplier(T, epsilon, delta)
    z_pld = lib.calibrate_dp_mechanism(
        lambda: pld.PLDAccountant(value_discretization_interval=1e-4),
        lambda s: lib.SelfComposedDpEvent(lib.GaussianDpEvent(s), T),
        epsilon,
        delta,
    )
    assert z == pytest.approx(z_pld, rel=1e-5)
    assert accountant.gaussian_epsilon(math.sqrt(T) / z, delta) <= epsilon
    assert accountant.gaussian_epsilon(math.sqrt(T) / (z * (1 - 1e-6)), delta) > epsilon  # the smallest such σ


def test_single_release_is_the_analytic_gaussian():
    from dpcost.dp.mechanisms import gaussian_sigma

    assert accountant.gaussian_noise_multiplier(1, 0.5, 1e-5) == gaussian_sigma(1.0, 0.5, 1e-5, "analytic")


def test_zero_sensitivity_bug_cannot_hide():
    # diffprivlib issue #105: a bound of 0 made the sensitivity 0 and the noise vanish. Here a zero bound is refused
    # before any noise is computed.
    for kw in (dict(R=0.0, C=0.0, c_x=1.0), dict(R=1.0, C=1.0, c_x=0.0)):
        with pytest.raises(PrivacyError, match="sensitivity"):
            noisy_gd_plan(Privacy(0.5, 1e-5, "tight"), 100, 5, T=5, eta0=0.5, B=None, **kw)


def test_plans_record_every_release():
    plan = peeling_plan(Privacy(0.5, 1e-3, "tight"), s=20, lam=0.1)
    sel, rel = plan.releases
    assert (sel.count, rel.count) == (20, 20) and sel.sensitivity == rel.sensitivity == 0.1
    assert plan.neighbours == "replace one record" and plan.to_dict()["releases"][0]["mechanism"].startswith("report")
    fw = frank_wolfe_plan(Privacy(0.5, 1e-3, "paper"), 100, 5, R=2.0, radius=5.0, T=20)
    assert fw.releases[0].sensitivity == pytest.approx(5.0 * 2 * 2.0 / 100)
    # an unknown calibration is refused where the specification is made, before any plan sees it
    with pytest.raises(PrivacyError, match="calibration must be one of"):
        frank_wolfe_plan(Privacy(0.5, 1e-3, "exact"), 100, 5, R=2.0, radius=5.0, T=20)


def test_tight_never_needs_more_noise_than_paper():
    for s in (1, 5, 20):
        paper = peeling_plan(Privacy(0.5, 1e-4), s=s, lam=1.0).releases[0].noise_scale
        tight = peeling_plan(Privacy(0.5, 1e-4, "tight"), s=s, lam=1.0).releases[0]
        assert tight.noise_scale <= paper
    for T in (1, 5, 20):
        assert accountant.pure_steps_epsilon0(T, 0.5, 1e-4) >= accountant.advanced_composition_epsilon0(0.5, 1e-4, T)


def _bisection(f, target, lo, hi, rtol=1e-12):
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) <= target else (lo, mid)
        if hi - lo <= rtol * hi:
            break
    return lo


@pytest.mark.parametrize(
    "f,target,lo,hi",
    [
        (lambda x: x**3, 2.0, 0.0, 10.0),
        (math.expm1, 0.3, 1e-9, 5.0),
        (lambda x: accountant.rdp_epsilon([accountant.dpa()[0].LaplaceDpEvent(1 / x)], 1e-5) if x > 0 else 0.0, 1.0,
         0.0, 1e6),
    ],
)  # fmt: skip
def test_largest_below_returns_a_verified_point_at_the_crossing(f, target, lo, hi):
    """Brent's method, then both sides of the crossing checked: the point satisfies f ≤ target, a relative 1e-12
    above it does not, and it agrees with bisection to that precision (with far fewer evaluations)."""
    calls = []

    def counted(x):
        calls.append(x)
        return f(x)

    x = accountant.largest_below(counted, target, lo, hi)
    assert f(x) <= target < f(x * (1 + 1e-12))
    assert x == pytest.approx(_bisection(f, target, lo, hi), rel=2e-12)
    assert len(calls) <= 30


def test_largest_below_falls_back_to_bisection_where_the_check_fails(monkeypatch):
    """Planted: Brent's method returns a wrong root (above the crossing, or below it by more than rtol) or fails.
    The check of both sides rejects it and bisection gives the right point; the endpoints: all of [lo, hi] valid
    gives hi, none gives lo."""
    cube = lambda x: x**3  # noqa: E731
    right = _bisection(cube, 2.0, 0.0, 10.0)
    for wrong in (lambda *a, **k: 1.3, lambda *a, **k: 1.2, lambda *a, **k: (_ for _ in ()).throw(RuntimeError())):
        monkeypatch.setattr(accountant, "_brentq", wrong)
        assert accountant.largest_below(cube, 2.0, 0.0, 10.0) == right
    assert accountant.largest_below(lambda x: 0.0, 1.0, 0.0, 3.0) == 3.0
    assert accountant.largest_below(lambda x: 5.0, 1.0, 0.5, 3.0) == 0.5


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 5.0])
def test_the_sampled_multiplier_is_found_where_the_accountant_reports_epsilon_zero(epsilon):
    """One record of 300 a step: at z = 4 the RDP bound is already below δ and the accountant says ε = 0 (its log was
    a math domain error). The multiplier found certifies ε, and 1 % less noise does not."""
    n, b, T, delta = 300, 1, 300, 10 / 300**1.1
    assert accountant.sampled_gaussian_epsilon(n, b, T, 4.0, delta) == 0.0
    z = accountant.sampled_gaussian_multiplier(n, b, T, epsilon, delta)
    assert accountant.sampled_gaussian_epsilon(n, b, T, z, delta) <= epsilon
    if z > 0.25 * 1.01:  # the search's floor: below it, no noise is asked for less
        assert accountant.sampled_gaussian_epsilon(n, b, T, z / 1.01, delta) > epsilon
