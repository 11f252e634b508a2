"""The bootstrap engine alone: repetitions per second per method, and what one repetition costs.

    python measurements/engine.py

Housing: the real data from ../shared; SNP: a synthetic 387 × 2000 genotype matrix. Per repetition the engine must
(1) derive two random streams from the repetition's identity (subsample, noise), (2) draw the subsample, (3) gather
its rows and (4) fit. (1) and (2) are fixed by the reproducibility contract — every draw from a stream derived from
(seed, dataset, method, m, rep) — and cost the same in any vectorized form; the table shows their share.
"""

import sys
import time
from pathlib import Path

import numpy as np

from dpcost.analysis.designs import RegressionDesign, TwoGroupMeanDesign
from dpcost.analysis.engine import run_grid
from dpcost.analysis.streams import rng_for, subsample_indices
from dpcost.dp.privacy import Privacy
from dpcost.estimators.ols import ols
from dpcost.estimators.registry import METHODS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support import housing_design  # noqa: E402

REPS = 100


def grid(design, method, params, m_grid, calibration, dataset, extra=None):
    spec = METHODS[method]
    privacy = Privacy(0.5, "10/n^1.1", calibration)
    tuning = spec.resolve_tuning(params)
    kw = dict(m_grid=m_grid, reps=REPS, seed=1, privacy=privacy, dataset=dataset)
    return run_grid(design, spec, tuning=tuning, params=extra or {}, **kw)


def timed(fn, n):
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) / n


def main():
    X, y, _, _ = housing_design()
    design = RegressionDesign(X, y, ols(X, y))
    m_grid = [2000, 20000]
    n_fit = REPS * len(m_grid)
    print(f"{'method':<34}{'reps/s':>10}{'ms/rep':>10}")
    gd = dict(T=5, eta0=0.5, R=3.0, C=2.0, c_x=3.0)
    for label, method, params, cal in [
        ("housing ols", "ols", {}, "paper"),
        ("housing noisy_gd (paper)", "noisy_gd", gd, "paper"),
        ("housing noisy_gd (tight, incl. PLD)", "noisy_gd", gd, "tight"),
        ("housing noisy_truncated_ols", "noisy_truncated_ols", dict(R=3.0, C=2.0, c_x=3.0, kappa=0.5), "paper"),
    ]:
        per = timed(lambda m=method, p=params, c=cal: grid(design, m, p, m_grid, c, "housing"), n_fit)
        print(f"{label:<34}{1 / per:>10.0f}{per * 1e3:>10.2f}")
    rng = np.random.default_rng(0)
    A, B = rng.integers(0, 3, (241, 2000), dtype=np.int8), rng.integers(0, 3, (146, 2000), dtype=np.int8)
    means = TwoGroupMeanDesign(A, B, A.mean(0) - B.mean(0), 20)
    for method, params in [
        ("sample_mean", {}),
        ("top_s_mean", {}),
        ("peeling", {"R": 2.0}),
        ("frank_wolfe", {"R": 2.0, "radius": 5.0, "T": 20}),
    ]:
        per = timed(lambda m=method, p=params: grid(means, m, p, [40, 120], "paper", "snp", {"s": 20}), n_fit)
        print(f"{'snp ' + method:<34}{1 / per:>10.0f}{per * 1e3:>10.2f}")
    n = 2000
    streams = timed(lambda: [rng_for(1, "housing", "noise", "ols", 20000, r) for r in range(n)], n)
    draw = timed(lambda: [subsample_indices(len(y), 20000, seed=1, dataset="housing", rep=r) for r in range(n)], n)
    print(
        f"\nfixed per repetition: one identity-derived stream {streams * 1e3:.3f} ms; "
        f"subsample of 20,000 of 20,640 rows (stream included) {draw * 1e3:.3f} ms"
    )


if __name__ == "__main__":
    main()
