"""CPU time of one precond_gd fit against one fit of diffprivlib's LinearRegression, on the same design and budget.

    python measurements/precond_gd_vs_diffprivlib.py [--n 200000] [--d 8] [--rounds 7] [--profile] [--threaded-blas]

The design: x ~ N(0, I_d)/√d (rows of norm about 1), y = x'β + N(0, 0.1²) with β ~ N(0, I_d), seed 0. precond_gd
runs at the config's defaults (B0 = 3, C = 4, T = 6; the rest its signature's) under ``Privacy(1, 1e-5, "tight")``;
diffprivlib at the config's public bounds B_X = B_Y = 3 with ε = 1 (δ unused), through :func:`dpcost.estimators.
peers.diffprivlib_ols`, which clips rows to B_X first as every method does. The two are timed in alternation (each
round runs both, the first of the pair swapped every round) so that both see the same load, and the CPU time of the
process (``time.process_time``: user + system, all threads) is reported, not wall time: the machine is shared.
``--profile`` prints a cProfile of one precond_gd fit (top 15 by cumulative time).

BLAS runs one thread, as the project's other measurements and its simulation jobs do, unless ``--threaded-blas``: on a
shared 2-core machine OpenBLAS's worker threads spin while they wait for work, and their CPU time (≈ 0.2 s a
precond_gd fit at n = 200,000, whose products each start them) swamps what the two fits compute.
"""

import os
import sys

if "--threaded-blas" not in sys.argv:  # before numpy is imported
    os.environ["OPENBLAS_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import cProfile  # noqa: E402
import pstats  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from dpcost.dp.privacy import Privacy  # noqa: E402
from dpcost.estimators.peers import diffprivlib_ols  # noqa: E402
from dpcost.estimators.registry import METHODS  # noqa: E402

PRIVACY = Privacy(1.0, 1e-5, "tight")
PGD_TUNING = dict(B0=3.0, C=4.0, T=6)  # config/README.md, table_defaults.tuning.precond_gd
DPL_TUNING = dict(B_X=3.0, B_Y=3.0)  # config/README.md, table_defaults.tuning.diffprivlib


def design(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) / np.sqrt(d)
    beta = rng.standard_normal(d)
    return X, X @ beta + 0.1 * rng.standard_normal(n)


def contenders(X, y):
    pgd = METHODS["precond_gd"].fn
    rng = np.random.default_rng
    return {
        "precond_gd": lambda seed: pgd(X, y, privacy=PRIVACY, rng=rng(seed), **PGD_TUNING),
        "diffprivlib": lambda seed: diffprivlib_ols(X, y, privacy=PRIVACY, rng=rng(seed), **DPL_TUNING),
    }


def cpu(fit, seed: int) -> float:
    t0 = time.process_time()
    fit(seed)
    return time.process_time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--d", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--threaded-blas", action="store_true", help="OPENBLAS_NUM_THREADS as the environment has it")
    a = ap.parse_args()
    X, y = design(a.n, a.d)
    fits = contenders(X, y)
    for fit in fits.values():  # warm-up: imports (scikit-learn's take a second) and first-call costs
        fit(0)
    times = {k: [] for k in fits}
    names = list(fits)
    for r in range(a.rounds):
        for k in names if r % 2 == 0 else names[::-1]:
            times[k].append(cpu(fits[k], r))
    med = {k: statistics.median(v) for k, v in times.items()}
    blas = os.environ.get("OPENBLAS_NUM_THREADS", "OpenBLAS's default")
    print(f"n = {a.n}, d = {a.d}, {a.rounds} rounds each, alternating; CPU seconds (process_time), BLAS threads {blas}")
    for k, v in times.items():
        print(f"  {k:12s} median {med[k]:.4f} s   all: {' '.join(f'{t:.4f}' for t in v)}")
    print(f"  ratio precond_gd / diffprivlib = {med['precond_gd'] / med['diffprivlib']:.2f}")
    if a.profile:
        prof = cProfile.Profile()
        prof.runcall(fits["precond_gd"], 0)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(15)


if __name__ == "__main__":
    main()
