"""Norms that feed a clip factor (issue 35): a row of tiny entries must not hide a huge residual.

The hole: ‖u_i‖ = √Σu² underflows to 0 for entries below ~1e-154, the joint clip factor min(1, C/(|r_i|‖u_i‖)) is
then 1, and u_i·y_i entered precond_gd's released sum unclipped (ε ≥ 7.2 measured at a claimed 1). Every norm that
feeds a clip goes through :func:`~dpcost.estimators.base.row_norm_parts`; this file tests it at both ends of the
float range, :class:`~dpcost.estimators.base.JointClip` on every magnitude Hypothesis can find, and audits the
underflow pair through precond_gd_free and precond_gd (R unset) with the old norm planted.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

from dpcost.dp.audit import epsilon_lower_bound
from dpcost.dp.privacy import Privacy
from dpcost.estimators import base
from dpcost.estimators.base import JointClip, ball_factor, row_norm_parts, row_norms
from dpcost.estimators.precond_gd import precond_gd
from dpcost.estimators.precond_gd_free import precond_gd_free

TINY = np.nextafter(0.0, 1.0)  # the smallest subnormal


def _true_norm(v) -> float:
    """‖v‖₂ in exact rational arithmetic, rounded once (inf beyond the float range)."""
    total = sum(Fraction(float(x)) ** 2 for x in v)
    k = 1400  # bits below the point: enough for the square root of a subnormal's square
    root = Fraction(math.isqrt(total.numerator * 4**k // total.denominator), 2**k)
    try:
        return float(root)
    except OverflowError:
        return math.inf


def test_row_norm_parts_are_true_at_both_ends_of_the_float_range():
    rows = np.array(
        [
            [1e-170, -1e-170, 1e-170],  # squares underflow to 0: numpy says 0
            [1e-160, 3e-161, 0.0],  # squares subnormal: numpy's norm is off by percent
            [TINY, TINY, 0.0],
            [1e200, -1e200, 1e200],  # squares overflow: numpy says inf
            [np.finfo(float).max, np.finfo(float).max, 1.0],
            [1e-300, 1e300, 1.0],  # mixed magnitudes: the large entry decides
            [0.0, 0.0, 0.0],
            [3.0, 4.0, 0.0],
        ]
    )
    s, q = row_norm_parts(rows)
    for v, si, qi in zip(rows, s, q, strict=True):
        exact = _true_norm(v)
        if exact == 0:
            assert si == 1.0 and qi == 0.0
        elif np.isfinite(exact):
            assert si * qi == pytest.approx(exact, rel=1e-14), v
        else:  # the norm itself exceeds the float range: the parts stay finite and multiply to it
            assert np.isfinite(si) and 1 <= qi <= np.sqrt(3)
    with np.errstate(under="ignore"):
        assert np.linalg.norm(rows[0]) == 0.0  # what the hole rested on
    assert s[-1] == 1.0 and q[-1] == 5.0


def test_trusted_rows_keep_numpys_bits_and_sparse_rows_get_the_same_parts():
    rng = np.random.default_rng(1)
    for d in (1, 3, 7, 8, 12):
        V = rng.normal(size=(500, d)) * 10.0 ** rng.uniform(-140, 140, size=(500, 1))
        s, q = row_norm_parts(V)
        assert np.array_equal(s, np.ones(500)) and np.array_equal(q, np.linalg.norm(V, axis=1))
        assert np.array_equal(ball_factor(V, 2.0), np.minimum(1.0, 2.0 / np.linalg.norm(V, axis=1, keepdims=True)))
    V = np.array([[1e-170, 0.0, 2e-170], [0.0, 0.0, 0.0], [1.0, 2.0, 2.0], [1e300, 0.0, 1e300]])
    for a, b in zip(row_norm_parts(V), row_norm_parts(sparse.csr_matrix(V)), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-15)
    assert np.array_equal(row_norms(sparse.csr_matrix(V[2:3])), [3.0])


magnitudes = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-323, 308).map(lambda e: 10.0**e),
    st.sampled_from([0.0, -0.0, TINY, 1e-170, 1e170, np.finfo(float).max]),
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.lists(st.lists(magnitudes, min_size=3, max_size=3), min_size=1, max_size=6),
    st.lists(magnitudes, min_size=6, max_size=6),
    st.sampled_from([1e-3, 1.0, 25.0, 1e6]),
)
def test_every_joint_term_is_inside_the_ball(rows, residuals, C):
    U = np.array(rows, dtype=float)
    r = np.array(residuals[: len(U)])
    clip = JointClip(U)
    w = clip.weights(r, C)
    terms = clip.V * w[:, None]
    assert np.isfinite(terms).all() and np.isfinite(w / C).all()  # per unit of C too (precond_gd_adaptive)
    s, q = row_norm_parts(terms)
    assert np.all(s * q <= C * (1 + 1e-12))
    sep = clip.separate(r, C, 2.0)
    s, q = row_norm_parts(clip.V * sep[:, None])
    assert np.all(s * q <= 2.0 * C * (1 + 1e-12))
    # an ordinary term is the plain formula's, bit for bit (a zero row's weight is 0: its term is 0 either way)
    with np.errstate(all="ignore"):
        plain = r * np.minimum(1.0, C / np.maximum(np.abs(r) * np.linalg.norm(U, axis=1), np.finfo(float).tiny))
        ok = (clip.s == 1.0) & np.isfinite(np.abs(r) * clip.q) & U.any(axis=1)
    assert np.array_equal(w[ok], plain[ok])


# The pair: 2,000 Gaussian rows; the neighbour's first row is 1e-170 everywhere with y = 1e174.
_r = np.random.default_rng(0)
X_U, Y_U = _r.normal(size=(2000, 8)), _r.normal(size=2000)
X2_U, Y2_U = X_U.copy(), Y_U.copy()
X2_U[0], Y2_U[0] = 1e-170, 1e174
P_U = Privacy(1.0, 1e-5, "tight")
FITS = {
    "precond_gd_free": lambda X, y, rng: precond_gd_free(X, y, privacy=P_U, rng=rng),
    "precond_gd": lambda X, y, rng: precond_gd(X, y, privacy=P_U, rng=rng, B0=3.0, C=3.0, T=8),
}


def _audit(fit, n=1000) -> float:
    """Clopper–Pearson lower bound on ε from ‖β̂‖ over n runs a side (disjoint seeds; half of them choose the
    threshold event by its predicted bound). Power: the planted unclipped term separates the sides completely
    (‖β̂‖ ≈ 0.15 against 110–170), which n = 1000 bounds at ε ≥ 4.6."""
    a = np.array([np.linalg.norm(fit(X_U, Y_U, np.random.default_rng(r))) for r in range(n)])
    b = np.array([np.linalg.norm(fit(X2_U, Y2_U, np.random.default_rng(n + r))) for r in range(n)])
    return epsilon_lower_bound(a, b, P_U.delta, select="bound")


def _old_norms(V):
    """The norm as it was: √Σv², which underflows to 0."""
    with np.errstate(over="ignore", under="ignore"):
        q = np.linalg.norm(V.reshape(-1, V.shape[-1]), axis=-1).reshape(V.shape[:-1])
    return np.ones_like(q), q


@pytest.mark.slow
@pytest.mark.parametrize("name", FITS)
def test_the_underflow_pair_stays_within_its_epsilon_and_the_old_norm_is_caught(name, monkeypatch):
    assert _audit(FITS[name]) <= 1.25
    monkeypatch.setattr(base, "row_norm_parts", _old_norms)
    assert _audit(FITS[name]) > 4.0
