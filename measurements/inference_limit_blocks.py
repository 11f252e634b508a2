"""Coverage and width of the blocks_ols interval (blocks of unclipped OLS, censored private mean; issue 52) on the
housing table: m rows sampled without replacement from the 20,640, target = full-data OLS, against the
superpopulation HC3 interval of OLS on the same m rows (dpcost.inference.reference, no finite-population correction).

    PYTHONPATH=src:tests python measurements/inference_limit_blocks.py [--reps 100] [--m 20000] [--eps 1] [--delta 1e-5]
        [--bias ignore|bound]

Prints per ε: coverage per coefficient, median width over the HC3 width per coefficient, the median censored fraction,
the share of intervals flagged, and seconds per interval.

``--misspecified``: the same measurement on a simulated table where E[y | x] is not linear and 1 % of rows have 10×
leverage (x ~ N(0, I₃), those rows ×10, y = x'β + 0.1·x₁|x₁| + 0.4·t₃), n = m = 20,000 fresh each repetition,
the target the population OLS projection (OLS on 4,000,000 rows of the design): whether the gap between the block
average and full-data OLS seen on housing is housing's alone.
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from dpcost.dp.privacy import Privacy
from dpcost.inference import interval
from dpcost.inference.reference import ols_interval

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support import housing_design  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--m", type=int, default=20000)
    ap.add_argument("--eps", type=float, nargs="+", default=[1.0])
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--bias", choices=["ignore", "bound"], default="ignore", help="the censoring's bias (route option)")
    ap.add_argument("--misspecified", action="store_true", help="the simulated non-linear, high-leverage table")
    args = ap.parse_args()
    if args.misspecified:
        return misspecified(args)
    X, y, names, _ = housing_design()
    beta = np.linalg.lstsq(X, y, rcond=None)[0]
    print("covariates:", names, flush=True)
    for eps in args.eps:
        p = Privacy(eps, args.delta, "tight")
        cov, ratio, cens, flags, secs = [], [], [], [], []
        for rep in range(args.reps):
            idx = np.random.default_rng([52, rep]).choice(len(y), args.m, replace=False)
            Xm, ym = X[idx], y[idx]
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                iv = interval("blocks_ols", Xm, ym, privacy=p, rng=np.random.default_rng([53, rep]), bias=args.bias)
            secs.append(time.perf_counter() - t0)
            ref = ols_interval(Xm, ym, covariance="hc3")
            cov.append(iv.covers(beta))
            ratio.append(iv.width / ref.width)
            cens.append(iv.details["censored"])
            flags.append(iv.details["assumption_flag"].any())
        cov, ratio = np.array(cov, float), np.array(ratio)
        print(f"eps={eps:g} reps={args.reps} k={iv.details['blocks']}")
        print("  coverage      " + " ".join(f"{n}={c:.2f}" for n, c in zip(names, cov.mean(0), strict=True)))
        print("  width/HC3 med " + " ".join(f"{n}={r:.2f}" for n, r in zip(names, np.median(ratio, 0), strict=True)))
        print(f"  censored (median) {np.round(np.median(cens, 0), 3)}; flagged {np.mean(flags):.2f}; "
              f"seconds/interval {np.mean(secs):.3f}", flush=True)  # fmt: skip


BETA = np.array([0.5, -0.3, 0.2])


def nonlinear_design(rng: np.random.Generator, n: int):
    X = rng.standard_normal((n, 3))
    X[rng.random(n) < 0.01] *= 10.0
    return X, X @ BETA + 0.1 * X[:, 0] * np.abs(X[:, 0]) + 0.4 * rng.standard_t(3, n)


def misspecified(args):
    Xp, yp = nonlinear_design(np.random.default_rng(0), 4_000_000)
    target = np.linalg.lstsq(Xp, yp, rcond=None)[0]
    del Xp, yp
    print("population OLS target:", target.round(4), flush=True)
    for eps in args.eps:
        p = Privacy(eps, args.delta, "tight")
        cov, ratio, bias = [], [], []
        for rep in range(args.reps):
            X, y = nonlinear_design(np.random.default_rng([9, rep]), args.m)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                iv = interval("blocks_ols", X, y, privacy=p, rng=np.random.default_rng([10, rep]), bias=args.bias)
            ref = ols_interval(X, y, covariance="hc3")
            cov.append(iv.covers(target))
            ratio.append(iv.width / ref.width)
            bias.append((iv.centre - target) / ref.details["se"])
        print(f"eps={eps:g} k={iv.details['blocks']}: coverage {np.mean(cov, 0).round(2)}, width/HC3 "
              f"{np.median(ratio, 0).round(2)}, mean bias/HC3 se {np.mean(bias, 0).round(2)}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
