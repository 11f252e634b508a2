"""The stacked paths of the blocks route's estimators (``Method.blocks``: precond_gd's, precond_gd_free's,
precond_gd_adaptive's and Boosted AdaSSP's, the blocks interval's): k blocks at once, each block's release the
one precond_gd makes on it. With one block and the same generator it is precond_gd's estimate; without noise every
block's row is precond_gd's on that block, hostile rows included; the blocks interval gives the same interval by
either path. (Its sensitivity is fuzzed with the other releases: tests/unit/dp/test_sensitivity_fuzz.py.)"""

import dataclasses

import numpy as np
import pytest

from dpcost.dp.privacy import Privacy
from dpcost.dp.samplers import GridNoise
from dpcost.estimators import boosted_adassp as bad
from dpcost.estimators import precond_gd as pgd
from dpcost.estimators import precond_gd_adaptive as pga
from dpcost.estimators import ssp
from dpcost.estimators.precond_gd_free import precond_gd_free, precond_gd_free_blocks
from dpcost.estimators.registry import METHODS
from dpcost.inference import interval

P = Privacy(1.0, 1e-5, "tight")
CONSTANTS = [dict(B0=3.0, C=4.0, T=6), dict(B0=1.0, C=0.5, T=4, R=1.0, average=2, alpha=0.5, eta=0.7)]


def design(k: int, n: int, d: int = 4, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((k, n, d))
    return X, X @ np.linspace(-1, 1, d) + rng.standard_normal((k, n))


@pytest.mark.parametrize("tuning", CONSTANTS)
def test_one_block_is_precond_gds_estimate(tuning):
    X, y = design(1, 300)
    got = pgd.precond_gd_blocks(X, y, privacy=P, rng=np.random.default_rng(5), **tuning)
    want = pgd.precond_gd(X[0], y[0], privacy=P, rng=np.random.default_rng(5), **tuning)
    np.testing.assert_allclose(got[0], want, rtol=1e-12, atol=1e-15)


def test_one_block_is_precond_gd_frees_estimate():
    X, y = design(1, 500)
    got = precond_gd_free_blocks(X, y, privacy=P, rng=np.random.default_rng(5))
    np.testing.assert_allclose(got[0], precond_gd_free(X[0], y[0], privacy=P, rng=np.random.default_rng(5)),
                               rtol=1e-12, atol=1e-15)  # fmt: skip


def silence(monkeypatch) -> None:
    """Every draw of precond_gd, precond_gd_adaptive and Boosted AdaSSP (steps, histograms) and of ssp
    (noisy_symmetric, the Gram) returns zero noise."""
    for module in (pgd, pga, ssp):
        monkeypatch.setattr(module, "draw", _no_noise)
    for module in (pga, bad):
        monkeypatch.setattr(module, "add_noise", _no_added_noise)


def _no_added_noise(value, kind, scale, rng, sampler="exact"):
    return np.asarray(value, dtype=float)


def _no_noise(kind, scale, shape, rng, sampler="exact"):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return GridNoise(np.zeros(shape), scale / 1024, True)


@pytest.mark.parametrize("tuning", CONSTANTS)
def test_without_noise_every_block_is_precond_gd_on_it(tuning, monkeypatch):
    silence(monkeypatch)
    X, y = design(3, 200, seed=1)
    X[0, 3] *= 1e300  # a row whose whitened image overflows (set to 0)
    X[1, 5] *= 1e-300  # a row of tiny entries beside a huge response (the joint clip's case)
    y[1, 5] = 1e300
    X[2, 7] = 0.0  # a zero row
    got = pgd.precond_gd_blocks(X, y, privacy=P, rng=np.random.default_rng(0), **tuning)
    for j in range(3):
        want = pgd.precond_gd(X[j], y[j], privacy=P, rng=np.random.default_rng(0), **tuning)
        np.testing.assert_allclose(got[j], want, rtol=1e-9, atol=1e-12)


@pytest.mark.filterwarnings("ignore:INTERVAL WARNING")
@pytest.mark.parametrize(
    "method, tuning",
    [("precond_gd", CONSTANTS[0]), ("precond_gd_free", {}), ("precond_gd_adaptive", {}), ("boosted_adassp", {})],
)
def test_the_blocks_interval_is_the_same_by_either_path(method, tuning, monkeypatch):
    """Without noise, the stacked path and one call per block give the same interval (sizes 201 and 200 mixed)."""
    silence(monkeypatch)
    X, y = design(1, 2005, seed=2)
    run = lambda: interval(method, X[0], y[0], privacy=P, rng=np.random.default_rng(3), blocks=10,  # noqa: E731
                           **tuning)  # fmt: skip
    fast = run()
    monkeypatch.setitem(METHODS, method, dataclasses.replace(METHODS[method], blocks=None))
    slow = run()
    np.testing.assert_allclose(fast.details["block_estimates"], slow.details["block_estimates"], rtol=1e-9)
    np.testing.assert_allclose([fast.lower, fast.upper], [slow.lower, slow.upper], rtol=1e-9)


def test_one_block_is_precond_gd_adaptives_estimate():
    X, y = design(1, 3000)
    got = pga.precond_gd_adaptive_blocks(X, y, privacy=P, rng=np.random.default_rng(5))
    np.testing.assert_allclose(got[0], pga.precond_gd_adaptive(X[0], y[0], privacy=P, rng=np.random.default_rng(5)),
                               rtol=1e-12, atol=1e-15)  # fmt: skip


def test_without_noise_every_block_is_precond_gd_adaptive_on_it(monkeypatch):
    """Each block gets its own bounds: the blocks are scaled 1, 10 and 1/10, so their B0 and C_t differ."""
    silence(monkeypatch)
    X, y = design(3, 400, seed=4)
    X *= np.array([1.0, 10.0, 0.1])[:, None, None]
    X[1, 5] *= 1e-300
    y[1, 5] = 1e300
    got = pga.precond_gd_adaptive_blocks(X, y, privacy=P, rng=np.random.default_rng(0))
    for j in range(3):
        want = pga.precond_gd_adaptive(X[j], y[j], privacy=P, rng=np.random.default_rng(0))
        np.testing.assert_allclose(got[j], want, rtol=1e-9, atol=1e-12)


def test_one_block_is_boosted_adassps_estimate():
    X, y = design(1, 1000)
    got = bad.boosted_adassp_blocks(X, y, privacy=P, rng=np.random.default_rng(5))
    np.testing.assert_allclose(got[0], bad.boosted_adassp(X[0], y[0], privacy=P, rng=np.random.default_rng(5)),
                               rtol=1e-12, atol=1e-15)  # fmt: skip


@pytest.mark.parametrize("raw_residuals", [True, False])
def test_without_noise_every_block_is_boosted_adassp_on_it(raw_residuals, monkeypatch):
    silence(monkeypatch)
    X, y = design(3, 300, seed=6)
    X[0, 2] *= 1e300
    X[2, 1] *= 1e-300
    y[2, 1] = 1e300
    got = bad.boosted_adassp_blocks(X, y, privacy=P, rng=np.random.default_rng(0), raw_residuals=raw_residuals)
    for j in range(3):
        want = bad.boosted_adassp(X[j], y[j], privacy=P, rng=np.random.default_rng(0), raw_residuals=raw_residuals)
        np.testing.assert_allclose(got[j], want, rtol=1e-9, atol=1e-12)
