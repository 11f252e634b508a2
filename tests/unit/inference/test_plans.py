"""Each interval is one release, (ε, δ)-DP as a whole: its plan composes to exactly the method's (ε, δ) by the
ledger's own accounting and lists the interval's extra releases; the estimate's draws are the estimator's; the
release is total (finite for every finite input); an unsupported method is refused by name."""

import math

import numpy as np
import pytest

from dpcost.analysis.ledger import release_terms, releases_epsilon
from dpcost.dp.privacy import Privacy
from dpcost.errors import PrivacyError
from dpcost.estimators.registry import METHODS
from dpcost.estimators.ssp import adassp, joint_ssp, ssp
from dpcost.inference import PROCEDURES, interval
from dpcost.inference.base import derived_rng
from dpcost.inference.budget import split

from intervals_support import CONSTANTS, gaussian_design

EPSILON, DELTA = 1.0, 1e-5
CASES = [(m, r) for m, routes in PROCEDURES.items() for r in routes]


def constants(method: str, route: str) -> dict:
    """The method's test constants, and for the blocks route k = 4 given explicitly: at these few hundred rows the
    measured block size would leave some methods fewer than 2 blocks (test_blocks.py tests that rule)."""
    return {**CONSTANTS[method], **({"blocks": 4} if route == "blocks" else {})}


def test_every_procedure_has_test_constants():
    assert set(CONSTANTS) == set(PROCEDURES)


@pytest.fixture(scope="module")
def data():
    return gaussian_design(np.random.default_rng(5), 600)


@pytest.mark.parametrize("method, route", CASES)
def test_the_plan_composes_to_exactly_the_methods_budget(data, method, route):
    """μ² = Σ count·((Δ + rounding)/σ)² over the listed releases, converted exactly (the ledger's release_terms and
    releases_epsilon): ε within a relative 1e-5 below the method's — the grid's margin (1e-6 on every σ) and
    nothing else."""
    iv = interval(method, *data, privacy=Privacy(EPSILON, DELTA, "tight"), rng=np.random.default_rng(1), route=route,
                  **constants(method, route))  # fmt: skip
    plan = iv.plan.to_dict()
    assert (plan["epsilon"], plan["delta"]) == (EPSILON, DELTA)
    mu2, pure = release_terms(plan)
    assert not pure
    eps, _ = releases_epsilon(mu2, pure, DELTA)
    assert EPSILON * (1 - 1e-5) <= eps <= EPSILON


@pytest.mark.parametrize("method", ["ssp", "adassp", "joint_ssp"])
def test_the_ssp_family_plan_lists_the_estimate_and_the_variance_release(data, method):
    iv = interval(method, *data, privacy=Privacy(EPSILON, DELTA, "tight"), rng=np.random.default_rng(1),
                  **CONSTANTS[method])  # fmt: skip
    est = split(Privacy(EPSILON, DELTA, "tight"), 600).estimate
    m = METHODS[method]
    own = m.make_plan(est, 600, 3, m.resolve_tuning(CONSTANTS[method]), {})
    assert iv.plan.releases[: len(own.releases)] == own.releases
    (extra,) = iv.plan.releases[len(own.releases) :]
    assert "squared residuals" in extra.mechanism and extra.sensitivity == 4.0**2  # R = B_Y, sensitivity R²
    assert iv.plan.parameters["interval_share"] == 0.1


def test_the_paper_calibration_splits_by_basic_composition(data):
    """joint_ssp under ``paper``: the estimate at (0.9ε, 0.9δ), the variance release at (0.1ε, 0.1δ); the ledger's
    Gaussian-DP reading of the same releases is at most ε."""
    iv = interval("joint_ssp", *data, privacy=Privacy(0.5, DELTA), rng=np.random.default_rng(1), **CONSTANTS["ssp"])
    budgets = [(r.epsilon, r.delta) for r in iv.plan.releases]
    assert budgets[-1] == pytest.approx((0.05, 0.1 * DELTA))
    assert sum(e for e, _ in budgets) == pytest.approx(0.5)
    mu2, pure = release_terms(iv.plan.to_dict())
    assert releases_epsilon(mu2, pure, DELTA)[0] <= 0.5


@pytest.mark.parametrize("method, estimator", [("ssp", ssp), ("adassp", adassp), ("joint_ssp", joint_ssp)])
def test_the_centre_is_the_estimators_estimate_bit_for_bit(data, method, estimator):
    privacy = Privacy(EPSILON, DELTA, "tight")
    iv = interval(method, *data, privacy=privacy, rng=np.random.default_rng(7), **CONSTANTS[method])
    est = estimator(*data, privacy=split(privacy, 600).estimate, rng=np.random.default_rng(7), **CONSTANTS[method])
    np.testing.assert_array_equal(iv.centre, est)


def test_the_derived_generator_does_not_draw_from_its_parent():
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    derived = derived_rng(a, "interval", "x")
    assert a.random() == b.random()
    assert derived.random() != derived_rng(b, "interval", "x").random()  # b has moved on: a fresh stream
    assert derived_rng(np.random.default_rng(3), "y").random() != derived_rng(np.random.default_rng(3), "x").random()


@pytest.mark.parametrize("method", ["ols", "noisy_gd", "no_such_method"])
def test_a_method_without_a_procedure_is_refused_by_name(data, method):
    with pytest.raises(PrivacyError, match="no private interval procedure") as err:
        interval(method, *data, privacy=Privacy(EPSILON, DELTA, "tight"), rng=np.random.default_rng(1))
    assert all(m in str(err.value) for m in PROCEDURES)


def test_an_unknown_route_is_refused(data):
    with pytest.raises(PrivacyError, match="routes"):
        interval("precond_gd_free", *data, privacy=Privacy(EPSILON, DELTA, "tight"), rng=np.random.default_rng(1),
                 route="delta")  # fmt: skip


def test_blocks_refuse_add_remove_neighbours(data):
    privacy = Privacy(EPSILON, DELTA, "tight", neighbours="add_remove")
    with pytest.raises(PrivacyError, match="replace-one"):
        interval("precond_gd", *data, privacy=privacy, rng=np.random.default_rng(1), **CONSTANTS["precond_gd"])


HOSTILE = {
    "huge": 1e300,
    "tiny": 1e-300,
    "subnormal": 5e-324,
}


@pytest.mark.parametrize("scale", list(HOSTILE))
@pytest.mark.parametrize("method, route", CASES)
def test_every_finite_input_gives_a_finite_interval(method, route, scale):
    """Rows and responses at 1e300, 1e-300 and subnormal, mixed with ordinary rows (and a huge row beside tiny
    ones): every endpoint finite, lower ≤ upper."""
    rng = np.random.default_rng(11)
    X, y = gaussian_design(rng, 400)
    X[::7] *= HOSTILE[scale]
    y[::5] *= HOSTILE[scale]
    X[3] = 1e300
    y[4] = -1e300
    iv = interval(method, X, y, privacy=Privacy(EPSILON, DELTA, "tight"), rng=np.random.default_rng(2), route=route,
                  **constants(method, route))  # fmt: skip
    for a in (iv.lower, iv.upper, iv.centre):
        assert np.isfinite(a).all()
    assert (iv.lower <= iv.upper).all()
    assert math.isfinite(iv.details.get("sigma2", 0.0))
