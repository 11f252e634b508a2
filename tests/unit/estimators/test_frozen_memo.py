"""Work memoised on a read-only draw (estimators.base.FrozenMemo; the simulation freezes each draw its curves share)
gives what the plain computation gives — bit for bit where the code says so, to round-off where it says that — and
is never reused for an array that could have changed."""

import gc

import numpy as np
import pytest

from dpcost.dp.privacy import Privacy
from dpcost.estimators import base, losses
from dpcost.estimators.knowledge_transfer import operator_norm
from dpcost.estimators.sparse_mean import hard_threshold, truncated_mean
from dpcost.estimators.sparse_regression import private_frank_wolfe_regression


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a)  # owns its data
    a.flags.writeable = False
    return a


def test_only_read_only_arrays_that_own_their_data_count_as_frozen():
    a = np.arange(12.0).reshape(3, 4)
    assert not base.frozen(a) and base.frozen(_frozen(a))
    view = _frozen(a)[1:]  # a view may see its base change
    assert not base.frozen(view) and not base.frozen(a.tolist())


def test_a_memo_recomputes_for_writeable_arrays_and_forgets_dead_and_old_ones():
    calls = []
    memo = base.FrozenMemo(2)

    def compute(x):
        return lambda: calls.append(1) or float(x.sum())

    w = np.ones(3)
    assert memo.get(w, "k", compute(w)) == 3.0
    w[0] = 5.0  # changed in place: a writeable array is never served from the memo
    assert memo.get(w, "k", compute(w)) == 7.0 and len(calls) == 2
    a, b, c = _frozen(np.ones(3)), _frozen(np.ones(4)), _frozen(np.ones(5))
    memo.get(a, "k", compute(a))
    memo.get(a, "k", compute(a))
    memo.get(b, "k", compute(b))
    assert len(calls) == 4  # a once, b once
    memo.get(c, "k", compute(c))  # a third entry evicts the least recently used (a)
    memo.get(b, "k", compute(b))
    memo.get(a, "k", compute(a))
    assert len(calls) == 6
    del b
    gc.collect()
    assert [ref() is a for ref, _ in memo._entries.values()] == [True]  # a dead array's entry is dropped


def test_facts_and_clipped_copies_of_a_frozen_array_are_those_of_a_writeable_one():
    rng = np.random.default_rng(0)
    X = rng.standard_t(2, size=(300, 20))
    F = _frozen(X)
    assert base.all_finite(F) and base.extremes(F) == (X.min(), X.max())
    clipped, again = losses.clip_rows_l2(F, 2.0), losses.clip_rows_l2(F, 2.0)
    assert again is clipped and not clipped.flags.writeable  # one copy, read-only as its source
    assert np.array_equal(clipped, losses.clip_rows_l2(X, 2.0))
    theta = np.zeros(20)
    theta[[3, 7]] = [1.0, -2.0]
    assert np.array_equal(losses.predictor(F, theta), losses.predictor(X, theta))
    assert operator_norm(F) == operator_norm(X)


def test_gram_columns_and_ight_on_a_frozen_design():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 60))
    y = X[:, :3] @ np.array([2.0, -1.0, 0.5]) + rng.normal(size=400)
    F = _frozen(X)
    cols = losses.gram_columns(F, [5, 2, 5])
    assert np.array_equal(cols, np.stack([X.T @ X[:, j] for j in (5, 2, 5)], axis=1))
    kw = dict(loss="squared", s=3, eta=0.5, T=30)
    plain, gram = losses.ight(X, y, **kw), losses.ight(F, y, **kw)
    assert np.flatnonzero(plain).tolist() == np.flatnonzero(gram).tolist() == [0, 1, 2]
    np.testing.assert_allclose(gram, plain, rtol=1e-12, atol=1e-12)


def test_frank_wolfe_on_a_frozen_design_selects_the_same_vertices():
    rng = np.random.default_rng(2)
    X = np.clip(rng.normal(size=(500, 40)), -3, 3)
    y = X[:, :2] @ np.array([1.5, -1.0]) + 0.3 * rng.normal(size=500)
    kw = dict(privacy=Privacy(2.0, 1e-6), radius=3.0, T=25, c_x=3.0, R=5.0)
    a = private_frank_wolfe_regression(X, y, rng=np.random.default_rng(3), **kw)
    b = private_frank_wolfe_regression(_frozen(X), y, rng=np.random.default_rng(3), **kw)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


@pytest.mark.parametrize("d", [5, 300])
def test_truncated_mean_is_numpys_bit_for_bit(d):
    rng = np.random.default_rng(d)
    for n in (1, 2, 63, 64, 65, 200):
        X = rng.standard_t(1.5, size=(n, d))
        assert np.array_equal(truncated_mean(X, 1.3), np.clip(X, -1.3, 1.3).mean(axis=0))


def test_hard_threshold_keeps_the_stable_sorts_indices_ties_included():
    rng = np.random.default_rng(4)
    for _ in range(300):
        v = rng.integers(-4, 5, size=rng.integers(1, 40)).astype(float)  # many ties
        s = int(rng.integers(1, v.size + 1))
        want = np.argsort(-np.abs(v), kind="stable")[:s]
        out, idx = hard_threshold(v, s)
        assert idx.tolist() == want.tolist()
        assert np.array_equal(out[want], v[want]) and np.count_nonzero(out[np.setdiff1d(np.arange(v.size), want)]) == 0
