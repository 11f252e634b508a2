"""The accountant, pinned: golden numbers from dp-accounting, and the plans' bookkeeping."""

import math

import pytest

from dpcost.dp import accountant
from dpcost.dp.spec import Privacy
from dpcost.errors import PrivacyError
from dpcost.estimators.frank_wolfe import frank_wolfe_plan
from dpcost.estimators.noisy_gd import noisy_gd_plan
from dpcost.estimators.sparse_mean import peeling_plan


@pytest.mark.parametrize("T,golden", [(10, 22.237), (20, 31.447), (50, 49.723)])
def test_pld_noise_multipliers_are_pinned(T, golden):
    # σ/Δ that makes T Gaussian steps (0.5, 1e-5)-DP, as dp-accounting's PLD accountant computes it
    assert accountant.gaussian_noise_multiplier(T, 0.5, 1e-5) == pytest.approx(golden, abs=2e-3)
    # basic composition of the classic formula needs 106, 217, 560: 5–11 times more noise
    basic = math.sqrt(2 * math.log(1.25 * T / 1e-5)) * T / 0.5
    assert basic / golden > 4.7


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
