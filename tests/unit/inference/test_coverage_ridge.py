"""Known-truth coverage of the bias-aware intervals (dpcost.inference.ssp_family, route delta) where the ridge is on
in every repetition: AdaSSP and joint SSP at n = 500, ε = 0.5 (tight), the Gaussian linear model of
intervals_support with bounds that almost never clip. The ridge's bias −λA⁻¹β is then the one bias the interval can
see; the bound on it must keep the coverage at or above the nominal level (Armstrong & Kolesár's interval is
conservative by construction, so the check is one-sided), and the planted bug — the same interval with the bias
left out (``bias="ignore"``, measured 0.85 / 0.76 here) — must fail that check."""

import numpy as np
import pytest

from dpcost.dp.privacy import Privacy
from dpcost.inference import interval
from dpcost.inference.ssp_family import critical_value

from intervals_support import BETA, CONSTANTS, gaussian_design, tolerance

pytestmark = pytest.mark.slow

N, EPSILON, DELTA, REPS = 500, 0.5, 1e-5, 300
METHODS = ("adassp", "joint_ssp")


@pytest.fixture(scope="module")
def runs():
    """method → (covered with the bias bound, covered without it, ridge on), each over REPS repetitions."""
    privacy = Privacy(EPSILON, DELTA, "tight")
    out = {m: ([], [], []) for m in METHODS}
    for rep in range(REPS):
        X, y = gaussian_design(np.random.default_rng([38, N, rep]), N)
        for method, (bound, ignore, on) in out.items():
            for bias, acc in (("bound", bound), ("ignore", ignore)):
                iv = interval(method, X, y, privacy=privacy, rng=np.random.default_rng([39, N, rep]), bias=bias,
                              **CONSTANTS[method])  # fmt: skip
                acc.append(iv.covers(BETA))
            on.append(iv.details["lambda"] > 0)
    return {k: tuple(np.array(a) for a in v) for k, v in out.items()}


@pytest.mark.parametrize("method", METHODS)
def test_the_ridge_is_on_in_every_repetition(runs, method):
    assert runs[method][2].all()


@pytest.mark.parametrize("method", METHODS)
def test_the_bias_aware_interval_covers(runs, method):
    cov = runs[method][0].mean()
    assert cov >= 0.95 - tolerance(REPS), cov


@pytest.mark.parametrize("method", METHODS)
def test_the_interval_without_the_bias_is_caught(runs, method):
    cov = runs[method][1].mean()
    assert cov < 0.95 - tolerance(REPS), cov


def test_the_critical_value_is_the_quantile_of_the_folded_normal():
    from scipy import stats

    t = np.array([0.0, 0.3, 1.0, 4.0, 40.0])
    assert np.allclose(critical_value(t, 0.05), [stats.foldnorm.ppf(0.95, max(v, 1e-12)) for v in t], rtol=1e-9)
    assert critical_value(0.0, 0.05) == pytest.approx(stats.norm.ppf(0.975))
    assert np.isinf(critical_value(np.array([np.inf, np.nan]), 0.05)).all()
