"""The engine's sums path against the one-at-a-time path: CPU seconds of a housing grid (ten m from 2,000 to 20,000,
100 repetitions, scores included) for every method with ``sums`` (docs/performance.md, "Bootstrap engine").

    python measurements/sums_path.py

One BLAS thread, as Snakemake gives a job; the minimum of three rounds, the two paths alternating. The estimates of
the two paths are the same bit for bit (tests/unit/analysis/test_engine.py).
"""

import dataclasses
import sys
import time
from pathlib import Path

import numpy as np
import threadpoolctl

from dpcost.analysis.designs import RegressionDesign
from dpcost.analysis.engine import run_grid
from dpcost.dp.privacy import Privacy
from dpcost.estimators.ols import ols
from dpcost.estimators.registry import METHODS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support import housing_design  # noqa: E402

TUNING = {
    "ssp": dict(B_X=1.5, B_Y=1.0),
    "adassp": dict(B_X=1.5, B_Y=1.0),
    "joint_ssp": dict(B_X=1.5, B_Y=1.0),
    "noisy_gd": dict(T=5, eta0=0.5, R=1.0, C=2.0, c_x=1.5),
}


def main():
    threadpoolctl.threadpool_limits(1)
    X, y, _, _ = housing_design()
    design = RegressionDesign(X, y, ols(X, y))
    kw = dict(params={}, seed=1, privacy=Privacy(1.0, "1/n^1.1", "tight"), dataset="housing")
    grid = [int(v) for v in np.linspace(2000, 20000, 10)]
    assert set(TUNING) == {k for k, m in METHODS.items() if m.sums is not None}
    for name, constants in TUNING.items():
        spec = METHODS[name]
        tuning = spec.resolve_tuning(constants)
        run_grid(design, spec, tuning=tuning, m_grid=[200], reps=5, **kw)  # warm: imports, caches
        seconds = {"sums": [], "one at a time": []}
        for _ in range(3):
            for path, method in (("sums", spec), ("one at a time", dataclasses.replace(spec, sums=None))):
                t0 = time.process_time()
                run_grid(design, method, tuning=tuning, m_grid=grid, reps=100, **kw)
                seconds[path].append(time.process_time() - t0)
        print(f"{name:<10} one at a time {min(seconds['one at a time']):.2f} s, sums {min(seconds['sums']):.2f} s")


if __name__ == "__main__":
    main()
