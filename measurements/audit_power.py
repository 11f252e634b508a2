"""Power of the Monte-Carlo privacy audits of tests/unit/dp/test_audit.py, measured over seeds.

    python measurements/audit_power.py [--seeds 40] [--workers 2] [--cases NAME ...]

For every case of the test module (mechanism or estimator, neighbouring pair, claimed (ε, δ), event, draws a side)
it runs the audit once per seed with the noise as shipped and, for the calibrations a ÷1.5 bug makes non-private,
with the noise divided by 1.5, and prints: the catch rate (ε_lb > claimed ε at ÷1.5), the false-alarm rate
(ε_lb > claimed ε at ÷1, at most α = 5 % by construction), the median and the worst ε_lb of each (the smallest at
÷1.5, the largest at ÷1), and the time of one audit (single process; wall time is shared by the workers).
The last row is the former audit (split-half selection among 400 thresholds, 3·10⁴ draws) of the Gaussian mechanism,
for comparison.
"""

import argparse
import multiprocessing as mp
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "unit" / "dp"))
import test_audit as T  # noqa: E402

from dpcost.dp.audit import epsilon_lower_bound  # noqa: E402

LEGACY = "gaussian_mechanism[analytic], former audit"


def one(job):
    name, seed, factor = job
    t0 = time.perf_counter()
    if name == LEGACY:
        a, b = T.CASES["gaussian_mechanism[analytic]"].sample(30_000, np.random.default_rng(seed), factor)
        eps = epsilon_lower_bound(a, b, 1e-5)
    else:
        eps = T.CASES[name].epsilon_lb(seed, factor)
    return name, factor, eps, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cases", nargs="+", default=[*T.CASES, LEGACY])
    args = ap.parse_args()
    jobs = []
    for name in args.cases:
        factors = [T.BUG, 1.0] if name in T.PLANTED or name == LEGACY else [1.0]
        jobs += [(name, 1000 * (f == 1.0) + s, f) for f in factors for s in range(args.seeds)]
    t0 = time.perf_counter()
    with mp.get_context("fork").Pool(args.workers) as pool:
        results = pool.map(one, jobs, chunksize=1)
    wall = time.perf_counter() - t0
    print(
        f"{'case':44} {'draws/side':>10} {'claimed (eps, delta)':>20} {'caught /1.5':>12} {'false alarm':>12} "
        f"{'median eps_lb /1.5 | /1':>24} {'min /1.5 | max /1':>18} {'s/audit':>8}"
    )
    for name in args.cases:
        rows = [r for r in results if r[0] == name]
        bug = [e for _, f, e, _ in rows if f != 1.0]
        ok = [e for _, f, e, _ in rows if f == 1.0]
        case = T.CASES.get(name, T.CASES["gaussian_mechanism[analytic]"])
        n = 30_000 if name == LEGACY else case.n
        caught = f"{sum(e > case.epsilon for e in bug)}/{len(bug)}" if bug else "-"
        false = f"{sum(e > case.epsilon for e in ok)}/{len(ok)}"
        med = f"{np.median(bug):.3f} | {np.median(ok):.3f}" if bug else f"- | {np.median(ok):.3f}"
        worst = f"{min(bug):.3f} | {max(ok):.3f}" if bug else f"- | {max(ok):.3f}"
        secs = np.mean([r[3] for r in rows])
        print(
            f"{name:44} {n:>10,} {f'({case.epsilon:g}, {case.delta:g})':>20} {caught:>12} {false:>12} {med:>24} "
            f"{worst:>18} {secs:>8.2f}"
        )
    print(f"\n{len(jobs)} audits, {args.seeds} seeds, {args.workers} workers: {wall:.0f} s wall")


if __name__ == "__main__":
    main()
