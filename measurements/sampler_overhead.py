"""Per-call cost of the exact samplers (dpcost.dp.samplers) at small and large sizes.

    python measurements/sampler_overhead.py [--calls 2000] [--sizes 1 3 15 100 10000] [--baseline OLD_SAMPLERS.py]

Times ``discrete_laplace(T, size)``, ``discrete_gaussian(T, size)`` and ``draw(kind, 1.0, size)`` one call at a time
and prints the median time per call in microseconds, with numpy's float ``normal`` and ``laplace`` as references.
Small releases (1–15 coordinates) drawn tens of thousands of times are what the estimators' audits do, so the fixed
cost of a call matters there; the largest size shows the cost per draw. Each cell is timed in ``--blocks`` blocks
and the lowest block median is reported, which is robust to a shared machine's bursts of load.

``--baseline`` loads another copy of ``samplers.py`` (e.g. ``git show HEAD:src/dpcost/dp/samplers.py > old.py``) and
times it in alternating blocks with the current one, so that both see the same load; it also checks that both give
the same draws from the same seed (they differ where a change of the samplers changed the draws on purpose).
"""

import argparse
import importlib.util
import sys
import time

import numpy as np

from dpcost.dp import samplers as S


def _load(path: str):
    """A samplers module from a file, as a sibling of dpcost.dp.samplers (so its relative imports resolve)."""
    name = "dpcost.dp._samplers_baseline"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # a dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def _cases(M, rng):
    return {
        "discrete_laplace": lambda n: M.discrete_laplace(M.T, n, rng),
        "discrete_gaussian": lambda n: M.discrete_gaussian(M.T, n, rng),
        "draw laplace": lambda n: M.draw("laplace", 1.0, n, rng),
        "draw gaussian": lambda n: M.draw("gaussian", 1.0, n, rng),
        "numpy normal": lambda n: rng.normal(0.0, M.T, n),  # references in the same run (not private on a computer)
        "numpy laplace": lambda n: rng.laplace(0.0, M.T, n),
    }


def _median_us(fn, n: int, calls: int) -> float:
    out = np.empty(calls)
    for i in range(calls):
        t0 = time.perf_counter()
        fn(n)
        out[i] = time.perf_counter() - t0
    return float(np.median(out)) * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000, help="calls per cell (scaled down for sizes above 100)")
    ap.add_argument("--blocks", type=int, default=4, help="blocks per cell; the lowest block median is reported")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 3, 15, 100, 10000])
    ap.add_argument("--baseline", help="path of another samplers.py to time side by side")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    modules = {"current": S}
    if args.baseline:
        modules["baseline"] = _load(args.baseline)
        for n in args.sizes:  # the same seed must give the same draws
            a, b = (M.draw("gaussian", 1.0, n, np.random.default_rng(args.seed)).steps for M in modules.values())
            if not np.array_equal(a, b):
                print(f"warning: baseline and current draws differ at size {n}")
    cases = {name: _cases(M, np.random.default_rng(args.seed)) for name, M in modules.items()}

    head = f"{'function':<20}{'size':>7}{'calls':>7}" + "".join(f"{name + ' µs':>14}" for name in modules)
    print(head + (f"{'speed-up':>10}" if args.baseline else "") + f"{'µs/draw':>10}")
    for case in cases["current"]:
        for n in args.sizes:
            calls = max(20, args.calls * 100 // max(n, 100)) // args.blocks + 1
            best = {name: np.inf for name in modules}
            for _ in range(args.blocks):
                for name in modules:
                    fn = cases[name][case]
                    for _ in range(min(10, calls)):  # warm-up
                        fn(n)
                    best[name] = min(best[name], _median_us(fn, n, calls))
            line = f"{case:<20}{n:>7}{calls * args.blocks:>7}" + "".join(f"{best[m]:>14.1f}" for m in modules)
            if args.baseline:
                line += f"{best['baseline'] / best['current']:>9.2f}x"
            print(line + f"{best['current'] / max(n, 1):>10.2f}")


if __name__ == "__main__":
    main()
