"""The estimators' batch paths (``Method.batch``: many sets of constants on one subsample, as the decoy search runs
them) give the separate calls' estimates bit for bit, on designs with clipped rows, and refuse alike."""

import itertools

import numpy as np
import pytest

from dpcost.dp.privacy import Privacy
from dpcost.errors import PrivacyError
from dpcost.estimators import noisy_gd as gd
from dpcost.estimators import noisy_sgd as sgd
from dpcost.estimators import precond_gd as pgd
from dpcost.estimators import ssp
from dpcost.estimators import subsample_aggregate as sa
from dpcost.estimators import truncated_ols as tols
from dpcost.estimators.sums import batch_of

P = Privacy(0.5, "10/n^1.1", "tight")


def heavy_design(n: int = 1500, d: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Heavy-tailed rows (many beyond every clipping bound below) and a response with outliers."""
    rng = np.random.default_rng(seed)
    X = rng.standard_t(3, size=(n, d))
    y = X @ rng.normal(size=d) + rng.standard_t(2, size=n)
    return X, y


def overflow_design() -> tuple[np.ndarray, np.ndarray]:
    """:func:`heavy_design` with a response so large that a residual times a row norm overflows (a clip's fallback
    for a non-finite term)."""
    X, y = heavy_design()
    y[5] = 1e307
    return X, y


def hostile_design() -> tuple[np.ndarray, np.ndarray]:
    """:func:`overflow_design` with rows whose norms underflow or overflow and a zero row (a clip's rescaled rows)."""
    X, y = overflow_design()
    X[3], X[7], X[11] = 1e-200, 0.0, 1e200
    return X, y


def separate(fn, X, y, cands, seeds, **kw):
    rngs = [np.random.default_rng(s) for s in seeds]
    return [fn(X, y, privacy=P.at(len(y)), rng=r, **t, **kw) for r, t in zip(rngs, cands, strict=True)]


def batched(batch, X, y, cands, seeds, plans=None, **kw):
    rngs = [np.random.default_rng(s) for s in seeds]
    plans = {} if plans is None else plans
    return batch(X, y, privacy=P.at(len(y)), rngs=rngs, tunings=cands, plans=plans, **kw)


def assert_same(batch_out, alone):
    assert len(batch_out) == len(alone)
    for a, b in zip(batch_out, alone, strict=True):
        np.testing.assert_array_equal(a, b, strict=True)


def grid(base: dict, search: dict) -> list[dict]:
    keys = list(search)
    return [{**base, **dict(zip(keys, combo, strict=True))} for combo in itertools.product(*search.values())]


PGD = dict(B0=2.0, C=2.0, T=4, R=None, f0=0.2, alpha=1.0, eta=1.0, average=1, floor=0.1, rho=0.05)


@pytest.mark.parametrize("design", [heavy_design, overflow_design, hostile_design])
def test_precond_gd_batch_steps_its_groups_as_the_separate_calls(design, monkeypatch):
    """Runs of equal T in groups (stepped together) and alone, R None and set, average 1 and 3; groups cut small
    (LOCKSTEP_ROWS) so that one T gives several groups, the last of one run."""
    X, y = design()
    cands = grid(PGD, {"B0": [0.5, 3.0], "C": [0.5, 4.0], "T": [3, 5], "average": [1, 3], "R": [None, 1.0]})
    seeds = [[11, c] for c in range(len(cands))]
    alone = separate(pgd.precond_gd, X, y, cands, seeds)
    assert all(np.isfinite(a).all() for a in alone)
    assert_same(batched(pgd.precond_gd_batch, X, y, cands, seeds), alone)
    monkeypatch.setattr(pgd, "LOCKSTEP_ROWS", 3 * len(y))
    assert_same(batched(pgd.precond_gd_batch, X, y, cands, seeds), alone)


def test_precond_gd_batch_refuses_as_the_first_separate_call_would():
    X, y = heavy_design()
    cands = [dict(PGD), {**PGD, "f0": 1.5}, {**PGD, "average": 9}]
    plans = {}
    with pytest.raises(PrivacyError, match="f0"):
        batched(pgd.precond_gd_batch, X, y, cands, [[1, c] for c in range(3)], plans)
    assert len(plans) == 1  # the plan before the refusal; none for a refused one


SGD = dict(B_X=1.0, B_Y=2.0, C=1.0, passes=1, batch=16)


@pytest.mark.parametrize("design", [heavy_design, hostile_design])
def test_noisy_sgd_batch_is_the_separate_calls(design):
    """Runs of several step counts stepping together (the longer ones alone at the end), batches of one row and of
    some, clipping bounds that clip many rows and projections on a small ball."""
    X, y = design()
    X, y = X[:300], y[:300]
    cands = grid(SGD, {"B_X": [0.5, 3.0], "C": [0.2, 2.0], "passes": [1.5, 3], "batch": [1, 16, 64]})
    seeds = [[5, c] for c in range(len(cands))]
    alone = separate(sgd.noisy_sgd_ols, X, y, cands, seeds)
    assert_same(batched(sgd.noisy_sgd_batch, X, y, cands, seeds), alone)
    plans = {}
    assert_same(batched(sgd.noisy_sgd_batch, X, y, cands, seeds, plans), alone)
    assert len(plans) == len(cands)
    assert_same(batched(sgd.noisy_sgd_batch, X, y, cands, seeds, plans), alone)  # from the memo
    with pytest.raises(PrivacyError, match="B_X"):
        batched(sgd.noisy_sgd_batch, X, y, [SGD, {**SGD, "B_X": -1.0}], [[1, 0], [1, 1]])


GD = dict(T=3, R=2.0, C=1.0, c_x=1.0, eta0=0.5, B=None)


@pytest.mark.parametrize("design", [heavy_design, hostile_design])
def test_noisy_gd_batch_is_the_separate_calls(design):
    """Runs stepped together (equal T, η⁰ and C), sums shared per (c_x, R), clipping bounds that clip many rows."""
    X, y = design()
    cands = grid(GD, {"T": [2, 5], "c_x": [0.5, 3.0], "R": [1.0, 3.0], "C": [0.3, 2.0], "eta0": [0.5, 1.0]})
    seeds = [[7, c] for c in range(len(cands))]
    alone = separate(gd.noisy_gradient_descent_ols, X, y, cands, seeds)
    plans = {}
    assert_same(batched(gd.noisy_gd_batch, X, y, cands, seeds, plans), alone)
    assert len(plans) == len(cands)
    assert_same(batched(gd.noisy_gd_batch, X, y, cands, seeds, plans), alone)
    with pytest.raises(PrivacyError, match="c_x"):
        batched(gd.noisy_gd_batch, X, y, [GD, {**GD, "c_x": 0.0}], [[1, 0], [1, 1]])


TOLS = dict(R=2.0, C=1.0, c_x=1.0, kappa=0.5, noise="derived")


@pytest.mark.parametrize("design", [heavy_design, hostile_design])
def test_noisy_truncated_ols_batch_is_the_separate_calls(design):
    """Sums shared per c_x and (c_x, R), estimates inside and on the C ball, and the printed noise."""
    X, y = design()
    cands = grid(TOLS, {"c_x": [0.5, 3.0], "R": [1.0, 3.0], "kappa": [0.1, 2.0], "C": [0.2, 5.0]})
    cands += [{**TOLS, "noise": "printed"}]
    seeds = [[3, c] for c in range(len(cands))]
    with pytest.warns(RuntimeWarning, match="PRIVACY WARNING"):
        alone = separate(tols.noisy_truncated_ols, X, y, cands, seeds)
    plans = {}
    with pytest.warns(RuntimeWarning, match="PRIVACY WARNING"):  # when the printed run's plan is computed
        assert_same(batched(tols.noisy_truncated_ols_batch, X, y, cands, seeds, plans), alone)
    assert len(plans) == len(cands)
    with pytest.raises(PrivacyError, match="kappa"):
        batched(tols.noisy_truncated_ols_batch, X, y, [TOLS, {**TOLS, "kappa": -1.0}], [[1, 0], [1, 1]])


@pytest.mark.parametrize("design", [heavy_design, hostile_design])
def test_subsample_aggregate_batch_is_the_separate_calls(design):
    """Blocks of several sizes (one block: every row), block estimates inside and beyond the R_b ball; blocks whose
    fits overflow (the hostile rows) give the public 0."""
    X, y = design()
    cands = grid({"R_b": 1.0, "block_size": 50}, {"R_b": [0.1, 1.5, 50.0], "block_size": [7, 50, 5000]})
    seeds = [[2, c] for c in range(len(cands))]
    alone = separate(sa.subsample_aggregate, X, y, cands, seeds)
    plans = {}
    assert_same(batched(sa.subsample_aggregate_batch, X, y, cands, seeds, plans), alone)
    assert len(plans) == len(cands)
    assert_same(batched(sa.subsample_aggregate_batch, X, y, cands, seeds, plans), alone)
    with pytest.raises(PrivacyError, match="block_size"):
        batched(sa.subsample_aggregate_batch, X, y, [cands[0], {**cands[0], "block_size": 0}], [[1, 0], [1, 1]])


JSSP = dict(B_X=1.0, B_Y=2.0, ratio=1.0, kappa=1.0, rho=0.05)
SSP_CASES = [
    (ssp.ssp, batch_of(ssp.SSP_SUMS), {"B_X": 1.0, "B_Y": 2.0}, {}),
    (ssp.adassp, batch_of(ssp.ADASSP_SUMS), {"B_X": 1.0, "B_Y": 2.0, "rho": 0.05}, {"rho": [0.05, 0.5]}),
    (ssp.joint_ssp, batch_of(ssp.JOINT_SSP_SUMS), JSSP, {"ratio": [0.5, 2.0], "kappa": [1e-9, 1.0]}),
]


@pytest.mark.parametrize("fn, batch, base, search", SSP_CASES, ids=["ssp", "adassp", "joint_ssp"])
@pytest.mark.parametrize("design", [heavy_design, hostile_design])
def test_ssp_batches_are_the_separate_calls(fn, batch, base, search, design):
    """Sums shared per (B_X, B_Y) and X'X per B_X, bounds that clip many rows and y, ridges zero and not; a bound
    refused as the separate call refuses it."""
    X, y = design()
    cands = grid(base, {"B_X": [0.5, 4.0], "B_Y": [1.0, 3.0], **search})
    seeds = [[4, c] for c in range(len(cands))]
    alone = separate(fn, X, y, cands, seeds)
    assert_same(batched(batch, X, y, cands, seeds), alone)
    with pytest.raises(PrivacyError, match="B_Y"):
        batched(batch, X, y, [base, {**base, "B_Y": 0.0}], [[1, 0], [1, 1]])


@pytest.mark.parametrize("C", [0.5, 1e-310])
def test_precond_gd_group_weights_are_the_clips(C):
    """The group's clip weights (ordinary rows) are JointClip.weights' bit for bit, residuals of 0 and of products
    that underflow included, with C above and below the smallest normal float (the floor at tiny kept there)."""
    from dpcost.estimators.base import JointClip

    rng = np.random.default_rng(1)
    U = rng.normal(size=(3, 400, 4)) * rng.lognormal(0, 4, size=(3, 400, 1))
    r = rng.normal(size=(3, 400)) * rng.lognormal(0, 4, size=(3, 400))
    r[:, :5] = [0.0, -0.0, 1e-310, -1e-320, 1e-300]
    clip = JointClip(U.reshape(-1, 4))
    assert not (clip.any_odd or clip.any_zero)
    w = np.empty((3, 400))
    assert pgd._plain_weights(r, clip.q.reshape(3, 400), np.full((3, 1), C), w)
    np.testing.assert_array_equal(w.ravel(), clip.weights(r.ravel(), C), strict=True)
    assert np.signbit(w[:, 1]).all()
