"""The peer libraries (diffprivlib, OpenDP) on the same footing as our estimators."""

import numpy as np
import pandas as pd
import pytest

from dpcost.analysis.summaries import compare
from dpcost.dp.audit import epsilon_lower_bound
from dpcost.dp.mechanisms import gaussian_sigma
from dpcost.dp.privacy import Privacy
from dpcost.dp.samplers import FLOAT_NOISE, T, describe, grid_scale
from dpcost.estimators import peers
from dpcost.estimators.ssp import symmetric_from_upper

from support import NoFloatNoise

if not all(peers.available().values()):
    pytest.skip(
        f"peer libraries not usable here ({peers.available()}): pip install -e '.[peers]'", allow_module_level=True
    )


def test_opendp_scale_is_valid_and_its_price_is_known():
    # Never below the exact (Balle & Wang) σ — that would not be private — and, measured: OpenDP's route through
    # zCDP costs 9 % more noise than the exact Gaussian at (0.5, 1e-5): 7.667 against 7.032.
    s = peers.opendp_scale(epsilon=0.5, delta=1e-5, sensitivity=1.0)
    exact = gaussian_sigma(1.0, 0.5, 1e-5, "analytic")
    assert exact <= s and s / exact == pytest.approx(1.0903, abs=2e-3)


def _data(n=3000, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.5, 0.5, size=(n, d))
    return X, X @ np.array([0.5, -0.3, 0.2]) + 0.1 * rng.normal(size=n)


@pytest.mark.parametrize("fn", [peers.diffprivlib_ols, peers.opendp_ssp_ols])
def test_peers_are_reproducible_from_our_streams(fn):
    X, y = _data()
    a = fn(X, y, privacy=Privacy(0.5, 1e-5), B_X=1.0, B_Y=1.0, rng=np.random.default_rng(7))
    b = fn(X, y, privacy=Privacy(0.5, 1e-5), B_X=1.0, B_Y=1.0, rng=np.random.default_rng(7))
    c = fn(X, y, privacy=Privacy(0.5, 1e-5), B_X=1.0, B_Y=1.0, rng=np.random.default_rng(8))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_opendp_ssp_passes_its_audit():
    # worst-case pair for the X'y part: one record's y flips from B_Y to −B_Y (4,000 draws each: a weaker audit than
    # those of our own estimators, to keep the suite short)
    X, y, y2 = np.ones((2, 1)), np.array([1.0, 1.0]), np.array([1.0, -1.0])

    def run(yy, r):
        privacy = Privacy(0.5, 1e-5)
        return peers.opendp_ssp_ols(X, yy, privacy=privacy, B_X=1.0, B_Y=1.0, rng=np.random.default_rng(r))[0]

    a = np.array([run(y, r) for r in range(4000)])
    b = np.array([run(y2, 10_000 + r) for r in range(4000)])
    assert epsilon_lower_bound(a, b, 1e-5) <= 0.5


def test_comparison_ratios():
    summary = pd.DataFrame(
        {
            "method": ["ols", "adassp", "noisy_gd", "diffprivlib"] * 2,
            "m": [100] * 4 + [200] * 4,
            "mean": [0.1, 0.5, 1.0, 20.0, 0.05, 0.4, 0.2, 10.0],
        }
    )
    # ours: this package's private methods, peers excluded (diffprivlib is the reference)
    c = compare(summary, ours=["adassp", "noisy_gd"]).set_index(["method", "m"])
    assert c.loc[("adassp", 100), "ratio_to_best_dp"] == 1.0 and c.loc[("noisy_gd", 100), "ratio_to_best_dp"] == 2.0
    assert c.loc[("noisy_gd", 200), "best_dp_method"] == "noisy_gd"  # best per m, peers excluded
    assert c.loc[("adassp", 100), "ratio_to_diffprivlib"] == pytest.approx(0.025)
    assert c.loc[("diffprivlib", 200), "ratio_to_best_dp"] == pytest.approx(50.0)
    assert c.loc[("noisy_gd", 200), "ratio_to_adassp"] == pytest.approx(0.5)
    assert c.loc[("adassp", 100), "ratio_to_adassp"] == 1.0


# ------------------------------------------------------------------------------------------------ how noise is drawn


def test_opendp_ssp_is_one_exact_gaussian_paid_for_the_grid_and_diffprivlib_is_labelled():
    d = 3
    (rel,) = peers.opendp_ssp_plan(Privacy(0.5, 1e-5), 3000, d, B_X=1.0, B_Y=1.0).releases
    certified = peers.opendp_scale(epsilon=0.5, delta=1e-5, sensitivity=rel.sensitivity)
    k = d * (d + 1) // 2 + d  # the rounding is paid over the whole concatenated vector
    assert rel.noise_scale == grid_scale(certified, rel.sensitivity, k, "l2", "gaussian") > certified
    assert rel.sampler == describe("gaussian", k, "l2", "exact") and FLOAT_NOISE not in rel.sampler
    (lib,) = peers.diffprivlib_plan(Privacy(0.5, 1e-5), 3000, d, B_X=1.0, B_Y=1.0).releases
    assert FLOAT_NOISE in lib.sampler and "Holohan & Braghin 2021" in lib.sampler


def test_opendp_ssp_releases_its_statistics_on_the_grid(monkeypatch):
    seen = []
    real = peers.draw

    def spy(kind, scale, shape, rng, sampler="exact"):
        noise = real(kind, scale, shape, rng, sampler)
        seen.append(noise)
        return noise

    monkeypatch.setattr(peers, "draw", spy)
    X, y = _data()
    est = peers.opendp_ssp_ols(X, y, privacy=Privacy(0.5, 1e-5), B_X=1.0, B_Y=1.0, rng=np.random.default_rng(7))
    (noise,) = seen  # ONE release of all d(d+1)/2 + d coordinates
    sigma = peers.opendp_ssp_plan(Privacy(0.5, 1e-5), 3000, 3, B_X=1.0, B_Y=1.0).releases[0].noise_scale
    assert noise.exact and noise.step == sigma / T and noise.steps.shape == (9,)
    assert np.array_equal(noise.steps, np.rint(noise.steps))  # integer noise steps
    # the estimate is the solve of exactly those released values g·(round(f/g) + Z)
    iu = np.triu_indices(3)
    released = noise.add(np.concatenate([(X.T @ X)[iu], X.T @ y]))
    assert np.allclose(released / noise.step, np.rint(released / noise.step), rtol=0, atol=1e-6)
    assert np.array_equal(est, np.linalg.lstsq(symmetric_from_upper(released[:6], 3), released[6:], rcond=None)[0])


def test_opendp_ssp_does_not_draw_float_normals():
    X, y = _data()
    a = peers.opendp_ssp_ols(X, y, privacy=Privacy(0.5, 1e-5), B_X=1.0, B_Y=1.0, rng=NoFloatNoise(7))
    b = peers.opendp_ssp_ols(X, y, privacy=Privacy(0.5, 1e-5), B_X=1.0, B_Y=1.0, rng=np.random.default_rng(7))
    assert np.array_equal(a, b)
