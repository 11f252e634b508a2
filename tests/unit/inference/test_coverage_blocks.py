"""Known-truth coverage of the generic blocks route (dpcost.inference.blocks) for the methods that have no other:
Boosted AdaSSP and the preconditioned noisy GD family, k = 10 blocks, at n = 20,000 and ε = 1 (tight): blocks of
2,000 rows, where the data-free clip rules of the tuning-free methods leave their block estimates nearly unbiased on
this design. (At n = 2,000 precond_gd_adaptive's blocks of 200 rows are biased and its interval under-covers:
benchmarks/inference_coverage.py measures it.) A planted half-width interval must fail the same check."""

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
