"""The sums path (dpcost.estimators.sums): a subsample's clipped sums from a design clipped once are the estimator's
own, bit for bit, for any finite design — hostile scales included — and either branch of ClippedRows."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dpcost.dp.privacy import Privacy
from dpcost.errors import PrivacyError
from dpcost.estimators import sums
from dpcost.estimators.registry import METHODS
from dpcost.estimators.ssp import clipped_sums

# every scale a float takes: subnormal, tiny, ordinary, huge (squares overflow), and signed zeros
SCALES = st.sampled_from([0.0, -0.0, 5e-324, 1e-300, 1e-160, 1e-3, 0.7, 3.0, 1e150, 1e200, 1.7e308])
ENTRY = st.builds(lambda s, u: s * u, SCALES, st.floats(-1.0, 1.0, allow_nan=False))


@settings(max_examples=150, deadline=None)
@given(
    X=hnp.arrays(np.float64, st.tuples(st.integers(2, 12), st.integers(1, 9)), elements=ENTRY),
    bounds=st.tuples(st.sampled_from([1e-140, 0.3, 1.0, 1e140]), st.sampled_from([1e-140, 0.3, 1e140])),
    whole=st.booleans(),
    data=st.data(),
)
def test_clipped_rows_give_the_estimators_sums_bit_for_bit(X, bounds, whole, data):
    y = data.draw(hnp.arrays(np.float64, len(X), elements=ENTRY), label="y")
    rows = data.draw(st.lists(st.integers(0, len(X) - 1), min_size=2, max_size=len(X), unique=True), label="rows")
    rows = np.array(rows)
    table = sums.ClippedRows(X, y)
    limit = sums.CLIP_WHOLE_BYTES
    try:
        sums.CLIP_WHOLE_BYTES = limit if whole else -1
        with np.errstate(over="ignore", invalid="ignore"):  # huge rows' products may overflow, in both paths alike
            got = table.sums(rows, *bounds, ("B_X", "B_Y"))
            want = clipped_sums(X[rows], y[rows], *bounds)
    finally:
        sums.CLIP_WHOLE_BYTES = limit
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
        assert np.array_equal(np.signbit(g), np.signbit(w))


def test_a_bound_that_is_not_a_positive_number_is_refused_by_its_name():
    table = sums.ClippedRows(np.ones((4, 2)), np.ones(4))
    with pytest.raises(PrivacyError, match="c_x"):
        table.sums(np.arange(3), -1.0, 1.0, ("c_x", "R"))


def test_a_plan_is_computed_once_per_public_identity_and_refusals_are_raised_every_time():
    plan = METHODS["ssp"].plan
    calls = []

    def counted(privacy, n, d, **kw):
        calls.append((n, d))
        return plan(privacy, n, d, **kw)

    memo = {}
    p = Privacy(1.0, 1e-6, "tight").at(100)
    a = sums.plan_once(memo, counted, p, 100, 3, B_X=1.0, B_Y=1.0)
    b = sums.plan_once(memo, counted, p, 100, 3, B_X=1.0, B_Y=1.0)
    sums.plan_once(memo, counted, p, 100, 3, B_X=1.0, B_Y=2.0)
    assert a is b and calls == [(100, 3), (100, 3)]
    for _ in range(2):
        with pytest.raises(PrivacyError):
            sums.plan_once(memo, counted, p, 100, 3, B_X=-1.0, B_Y=1.0)
    assert len(calls) == 4
