"""ridge_in_ball, the constrained ridge solve of ObjPert and the posterior methods: its root finding reads ‖β(μ)‖ as
√(v·v), numpy's norm of a vector bit for bit, so the estimates are the ones numpy's norm gave."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dpcost.estimators.base import ridge_in_ball


def _with_numpys_norm(H, g, C):
    """The solve as it read before, with np.linalg.norm."""
    from scipy import optimize

    w, V = np.linalg.eigh(H)
    gv = V.T @ g
    norm = lambda mu: np.linalg.norm(gv / (w + mu))  # noqa: E731
    if norm(0.0) <= C:
        return V @ (gv / w)
    hi = 1.0
    while norm(hi) > C:
        hi *= 2
    mu = optimize.brentq(lambda m: norm(m) - C, 0.0, hi, xtol=1e-14)
    return V @ (gv / (w + mu))


@settings(max_examples=300, deadline=None)
@given(
    A=hnp.arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 6)), elements=st.floats(-3, 3)),
    g_scale=st.sampled_from([1e-3, 1.0, 1e3, 1e6]),
    C=st.sampled_from([1e-3, 0.5, 1.0, 10.0]),
    ridge=st.sampled_from([1e-6, 0.1, 1.0, 100.0]),
    seed=st.integers(0, 2**16),
)
def test_the_solve_is_the_one_numpys_norm_gave_bit_for_bit(A, g_scale, C, ridge, seed):
    d = A.shape[1]
    H = A.T @ A + ridge * np.eye(d)  # symmetric positive definite, as ObjPert's X'X + ΔI
    g = g_scale * np.random.default_rng(seed).normal(size=d)
    got, want = ridge_in_ball(H, g, C), _with_numpys_norm(H, g, C)
    np.testing.assert_array_equal(got, want)
    assert np.linalg.norm(got) <= C * (1 + 1e-9)  # in the ball
