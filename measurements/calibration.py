"""Error of the housing DP estimators under the paper and the tight calibration, same (ε, δ), same subsamples.

    python measurements/calibration.py [--shared ../shared] [--reps 100]

Reads the real data from shared/data/california_housing (rebuilt as the workflow's preprocessing does) and prints
mean ‖β̂ − β‖₂ per method, m and calibration, and the ratio paper / tight.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dpcost.analysis.designs import RegressionDesign
from dpcost.analysis.engine import run_grid
from dpcost.dp.privacy import Privacy
from dpcost.estimators.ols import ols
from dpcost.estimators.registry import METHODS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support import housing_design  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--m", type=int, nargs="+", default=[1000, 2000, 5000, 10000, 20000])
    args = ap.parse_args()
    X, y, _, _ = housing_design()
    design = RegressionDesign(X, y, ols(X, y))
    variants = {
        "noisy_gd": dict(T=5, eta0=0.5, R=3.0, C=2.0, c_x=3.0),
        "noisy_gd T=20": dict(T=20, eta0=0.5, R=3.0, C=2.0, c_x=3.0),
        "noisy_truncated_ols": dict(R=3.0, C=2.0, c_x=3.0, kappa=0.5),
        "ssp": dict(B_X=3.0, B_Y=3.0),
        "adassp": dict(B_X=3.0, B_Y=3.0, rho=0.05),
    }
    rows = []
    t0 = time.perf_counter()
    for label, params in variants.items():
        method = label.split()[0]
        for cal in ("paper", "tight"):
            err, _ = run_grid(
                design,
                METHODS[method],
                tuning=METHODS[method].resolve_tuning(params),
                params={},
                m_grid=args.m,
                reps=args.reps,
                seed=20261121,
                privacy=Privacy(0.5, "10/n^1.1", cal),
                dataset="housing",
            )
            for m, g in err.groupby("m"):
                rows.append((label, m, cal, g.error.mean(), g.error.std(ddof=1) / np.sqrt(len(g))))
    df = pd.DataFrame(rows, columns=["method", "m", "calibration", "mean", "se"])
    wide = df.pivot_table(index=["method", "m"], columns="calibration", values=["mean", "se"])
    wide[("ratio", "paper/tight")] = wide[("mean", "paper")] / wide[("mean", "tight")]
    pd.set_option("display.width", 140)
    print(wide.round(4).to_string())
    print(f"({args.reps} repetitions, eps = 0.5, delta = 10/n^1.1; {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
