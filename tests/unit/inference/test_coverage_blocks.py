"""Known-truth coverage of the generic blocks route (dpcost.inference.blocks) for the methods that have no other:
Boosted AdaSSP and the preconditioned noisy GD family, k = 10 blocks, at n = 20,000 and ε = 1 (tight): blocks of
2,000 rows, where the data-free clip rules of the tuning-free methods leave their block estimates nearly unbiased on
this design. A planted half-width interval must fail the same check. At n = 2,000 the block count from n·μ
(dpcost.inference.blocks) keeps precond_gd's and precond_gd_adaptive's blocks large enough to cover, where ten
blocks of 200 rows would not (the planted failure there)."""

import warnings

import numpy as np
import pytest

from dpcost.dp.privacy import Privacy
from dpcost.inference import interval

from intervals_support import BETA, coverage_error, gaussian_design

pytestmark = pytest.mark.slow

N, EPSILON, DELTA, REPS = 20000, 1.0, 1e-5, 200
# precond_gd's public constants for this design: rows of norm ≈ √3 = 1.7 (B0 = 3.5 clips P(χ²₃ > 12.25) ≈ 0.7 %),
# whitened gradient terms u·r of norm ≈ √3·0.7 (C = 6), three steps
METHODS = {"boosted_adassp": {}, "precond_gd_free": {}, "precond_gd_adaptive": {},
           "precond_gd": {"B0": 3.5, "C": 6.0, "T": 3}}  # fmt: skip


@pytest.fixture(scope="module")
def runs():
    privacy = Privacy(EPSILON, DELTA, "tight")
    out = {m: ([], []) for m in METHODS}
    for rep in range(REPS):
        X, y = gaussian_design(np.random.default_rng([40, rep]), N)
        for method, (cov, half) in out.items():
            iv = interval(method, X, y, privacy=privacy, rng=np.random.default_rng([41, rep]), **METHODS[method])
            cov.append(iv.covers(BETA))
            half.append(np.abs(iv.centre - BETA) <= (iv.upper - iv.lower) / 4)
    return {k: tuple(np.array(a) for a in v) for k, v in out.items()}


@pytest.mark.parametrize("method", list(METHODS))
def test_coverage_is_nominal(runs, method):
    assert (err := coverage_error(runs[method][0])) is None, err


@pytest.mark.parametrize("method", list(METHODS))
def test_a_planted_half_width_interval_is_caught(runs, method):
    assert coverage_error(runs[method][1]) is not None


# n = 2,000, where blocks of 200 rows are biased for these two: the block count from n·μ (precond_gd at ε = 1:
# k = 3, n_b·μ = 179; precond_gd_adaptive at ε = 4: k = 6, n_b·μ = 308) covers; the adaptive method forced to
# k = 10 (n_b·μ = 185, measured 0.25) is the planted failure the rule exists to prevent
SMALL = {"precond_gd": (1.0, None), "precond_gd_adaptive": (4.0, None), "forced_k10": (4.0, 10)}


@pytest.fixture(scope="module")
def small_runs():
    out = {}
    for case, (epsilon, blocks) in SMALL.items():
        method = "precond_gd_adaptive" if case == "forced_k10" else case
        cov = []
        for rep in range(REPS):
            X, y = gaussian_design(np.random.default_rng([42, rep]), 2000)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # the forced k's INTERVAL WARNING
                iv = interval(method, X, y, privacy=Privacy(epsilon, DELTA, "tight"),
                              rng=np.random.default_rng([43, rep]), blocks=blocks, **METHODS[method])  # fmt: skip
            cov.append(iv.covers(BETA))
        out[case] = np.array(cov)
    return out


@pytest.mark.parametrize("method", ["precond_gd", "precond_gd_adaptive"])
def test_fewer_larger_blocks_cover_where_ten_would_be_biased(small_runs, method):
    assert (err := coverage_error(small_runs[method])) is None, err


def test_ten_blocks_below_the_measured_size_are_caught(small_runs):
    assert coverage_error(small_runs["forced_k10"]) is not None
