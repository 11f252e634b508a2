"""Known-truth coverage of the SSP family's private intervals (dpcost.inference.ssp_family): the Gaussian linear
model with β known, bounds that almost never clip (P(‖x‖ > 4) = P(χ²₃ > 16) ≈ 1e-3, y of sd 0.93 clipped at 4), at
n = 2,000 and ε = 1 (tight). The check is intervals_support.coverage_error; planted under-dispersed intervals — the
same centre with half the width, and the non-private OLS interval beside the private estimate — must fail it."""

import numpy as np
import pytest

from dpcost.dp.privacy import Privacy
from dpcost.inference import interval, ols_interval

from intervals_support import BETA, coverage_error, gaussian_design, tolerance

pytestmark = pytest.mark.slow

N, EPSILON, DELTA, REPS = 2000, 1.0, 1e-5, 1000
BOUNDS = {"B_X": 4.0, "B_Y": 4.0}
CASES = [(m, r) for m in ("ssp", "adassp", "joint_ssp") for r in ("bootstrap", "delta")]


@pytest.fixture(scope="module")
def runs():
    """(method, route) → (covered, half-width-planted covered, OLS-beside-private covered), each (REPS, d)."""
    privacy = Privacy(EPSILON, DELTA, "tight")
    out = {case: ([], [], []) for case in CASES}
    for rep in range(REPS):
        X, y = gaussian_design(np.random.default_rng([38, rep]), N)
        ols = ols_interval(X, y)
        for (method, route), (cov, half, beside) in out.items():
            iv = interval(method, X, y, privacy=privacy, rng=np.random.default_rng([39, rep]), route=route, **BOUNDS)
            cov.append(iv.covers(BETA))
            half.append(np.abs(iv.centre - BETA) <= (iv.upper - iv.lower) / 4)
            beside.append(np.abs(iv.centre - BETA) <= (ols.upper - ols.lower) / 2)
    return {k: tuple(np.array(a) for a in v) for k, v in out.items()}


@pytest.mark.parametrize("method", ["ssp", "adassp", "joint_ssp"])
def test_coverage_of_the_default_route_is_nominal(runs, method):
    assert (err := coverage_error(runs[method, "delta"][0])) is None, err


@pytest.mark.parametrize("method", ["ssp", "adassp", "joint_ssp"])
def test_the_bootstrap_is_not_under_dispersed(runs, method):
    """The parametric bootstrap re-draws the Gram noise around the already noisy G̃, so its G* carries the noise
    twice and its draws spread more than the estimate does: measured 0.962 / 0.976 / 0.965 here (over-covers;
    docs/methods.md). Checked on the side that matters for validity only."""
    assert runs[method, "bootstrap"][0].mean() >= 0.95 - tolerance(REPS)


@pytest.mark.parametrize("method, route", CASES)
def test_a_planted_half_width_interval_is_caught(runs, method, route):
    assert coverage_error(runs[method, route][1]) is not None


@pytest.mark.parametrize("method, route", CASES)
def test_a_non_private_interval_beside_the_private_estimate_is_caught(runs, method, route):
    """The failure the notes record for intervals that ignore the noise (BinAgg's reproduction: 0.08–0.32)."""
    assert coverage_error(runs[method, route][2]) is not None
