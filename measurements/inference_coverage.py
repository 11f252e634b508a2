"""Coverage of every private interval procedure (dpcost.inference) on the known-truth Gaussian design, at the issue
38 targets: 1,000 repetitions, n ∈ {2,000, 20,000}, ε ∈ {0.5, 1, 4} (tight, δ = 1e-5), nominal 0.95, target band
[0.93, 0.97].

    python measurements/inference_coverage.py [--reps 1000] [--n 2000 20000] [--eps 0.5 1 4] [--routes default|all]
        [--bias bound ignore]

Design (tests/unit/inference/intervals_support.py): x ~ N(0, I₃), y = x'β + N(0, 0.7²), β = (0.5, −0.3, 0.2); the
SSP family with B_X = B_Y = 4 (clipping almost never binds), precond_gd with B0 = 3.5, C = 6, T = 3, the tuning-free
methods with their rules. Coverage is pooled over the 3 coordinates; its Monte Carlo sd is at most
√(0.95·0.05/reps) = 0.0069 at 1,000 reps (intervals_support). Prints one row per (method, route, n, ε): the block
count (blocks route), coverage, per-coordinate coverage, mean width, in-band flag, seconds; a cell the procedure
refuses (the blocks route where two blocks of the measured size do not fit) prints its reason. ``--bias``: the delta
route's ridge bias bounded (the default, bias-aware) and/or ignored (the interval before it; SSP family only, other
methods run once).
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from dpcost.dp.privacy import Privacy
from dpcost.errors import PrivacyError
from dpcost.inference import PROCEDURES, interval

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "unit" / "inference"))
from intervals_support import BETA, CONSTANTS, gaussian_design  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--n", type=int, nargs="+", default=[2000, 20000])
    ap.add_argument("--eps", type=float, nargs="+", default=[0.5, 1.0, 4.0])
    ap.add_argument("--routes", choices=["default", "all"], default="default")
    ap.add_argument("--methods", nargs="+", default=list(PROCEDURES))
    ap.add_argument("--bias", nargs="+", choices=["bound", "ignore"], default=["bound"])
    args = ap.parse_args()
    cases = [(m, r, b) for m in args.methods for r in (PROCEDURES[m] if args.routes == "all" else PROCEDURES[m][:1])
             for b in (args.bias if r == "delta" else ["bound"])]  # fmt: skip
    print("method,route,bias,n,epsilon,blocks,coverage,coverage_by_coordinate,mean_width,in_band,seconds", flush=True)
    for n in args.n:
        for eps in args.eps:
            privacy = Privacy(eps, 1e-5, "tight")
            for method, route, bias in cases:
                extra = {"bias": bias} if route == "delta" else {}
                t0, cov, width = time.perf_counter(), [], []
                try:
                    for rep in range(args.reps):
                        X, y = gaussian_design(np.random.default_rng([38, n, rep]), n)
                        iv = interval(method, X, y, privacy=privacy, rng=np.random.default_rng([39, n, rep]),
                                      route=route, **CONSTANTS[method], **extra)  # fmt: skip
                        cov.append(iv.covers(BETA))
                        width.append(iv.width.mean())
                except PrivacyError as e:  # e.g. the blocks route where two blocks of the measured size do not fit
                    print(f"{method},{route},{bias if extra else ''},{n},{eps:g},,refused: {e},,,,", flush=True)
                    continue
                cov = np.array(cov, dtype=float)
                c = cov.mean()
                per = "/".join(f"{v:.3f}" for v in cov.mean(axis=0))
                print(f"{method},{route},{bias if extra else ''},{n},{eps:g},{iv.details.get('blocks', '')},{c:.4f},"
                      f"{per},{np.mean(width):.4g},{0.93 <= c <= 0.97},{time.perf_counter() - t0:.1f}",
                      flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
