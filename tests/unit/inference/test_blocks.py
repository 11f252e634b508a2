"""The blocks route's block count: k from the public n and the μ of one block's releases (dpcost.inference.blocks),
never from the data; refused where two blocks of the measured size do not fit; an explicit k below it warned."""

import math

import numpy as np
import pytest

from dpcost.dp.privacy import Privacy
from dpcost.errors import PrivacyError
from dpcost.estimators.boosted_adassp import gdp_mu
from dpcost.inference import PROCEDURES, interval
from dpcost.inference.blocks import BLOCKS, MIN_ROWS_MU, block_count

from intervals_support import CONSTANTS, gaussian_design


def test_every_method_with_a_blocks_route_has_a_measured_block_size():
    assert set(MIN_ROWS_MU) == {m for m, routes in PROCEDURES.items() if "blocks" in routes}


@pytest.mark.parametrize("method", ["precond_gd", "precond_gd_adaptive", "boosted_adassp"])
@pytest.mark.parametrize("n, epsilon", [(2000, 0.5), (2000, 1.0), (2000, 4.0), (20000, 1.0)])
def test_the_count_is_the_rule_of_n_and_the_plans_mu(method, n, epsilon):
    """Tight calibration: the plan's μ is the Gaussian-DP μ of (ε, δ) (less the grid's 1e-6 margin), so k =
    min(10, ⌊n·μ/MIN_ROWS_MU⌋) is computable by hand; below 2 the interval is refused, saying why."""
    X, y = gaussian_design(np.random.default_rng(1), n)
    want = min(BLOCKS, math.floor(n * gdp_mu(epsilon, 1e-5) * (1 - 1e-5) / MIN_ROWS_MU[method]))
    call = lambda: interval(method, X, y, privacy=Privacy(epsilon, 1e-5, "tight"),  # noqa: E731
                            rng=np.random.default_rng(2), **CONSTANTS[method])  # fmt: skip
    if want < 2:
        with pytest.raises(PrivacyError, match=f"n_b\\*mu >= {MIN_ROWS_MU[method]:g}"):
            call()
        return
    iv = call()
    assert iv.details["blocks"] == want and iv.quantile == f"t({want - 1})"
    assert iv.details["rows_mu"] >= MIN_ROWS_MU[method]
    assert iv.plan.parameters["blocks"] == want


def test_the_count_does_not_look_at_the_data():
    """Two data sets of the same shape, one of them at 1e6 times the scale, get the same k."""
    X, y = gaussian_design(np.random.default_rng(1), 3000)
    p = Privacy(1.0, 1e-5, "tight")
    ks = [interval("precond_gd_adaptive", X * s, y * s, privacy=p, rng=np.random.default_rng(2)).details["blocks"]
          for s in (1.0, 1e6)]  # fmt: skip
    assert ks[0] == ks[1] == block_count("precond_gd_adaptive", 3000, gdp_mu(1.0, 1e-5) * (1 - 1e-5))


def test_an_explicit_count_below_the_measured_size_is_warned_about():
    X, y = gaussian_design(np.random.default_rng(1), 2000)
    with pytest.warns(RuntimeWarning, match="INTERVAL WARNING: precond_gd_adaptive's blocks of 200 rows"):
        iv = interval("precond_gd_adaptive", X, y, privacy=Privacy(1.0, 1e-5, "tight"), rng=np.random.default_rng(2),
                      blocks=10)  # fmt: skip
    assert iv.details["blocks"] == 10


@pytest.mark.parametrize("blocks", [1, 0, 2.5, True])
def test_a_count_that_is_not_an_integer_of_at_least_2_is_refused(blocks):
    X, y = gaussian_design(np.random.default_rng(1), 2000)
    with pytest.raises(PrivacyError, match="blocks"):
        interval("precond_gd_free", X, y, privacy=Privacy(1.0, 1e-5, "tight"), rng=np.random.default_rng(2),
                 blocks=blocks)  # fmt: skip
