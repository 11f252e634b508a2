"""The peer libraries (diffprivlib, OpenDP) on the same footing as our estimators."""

import numpy as np
import pandas as pd
import pytest

from dpcost.analysis.summaries import compare
from dpcost.dp.audit import epsilon_lower_bound
from dpcost.dp.mechanisms import gaussian_sigma
from dpcost.dp.spec import Privacy
from dpcost.estimators import peers

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
