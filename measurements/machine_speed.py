"""A fixed workload that says how fast this machine is today, so that timings taken on different days can be compared.

    python measurements/machine_speed.py

The machines of this project are shared virtual ones, and the same code has run 1.2-2.5x slower from one day to
the next (docs/performance.md, "Machine speed"). Each timing of docs/performance.md should be read beside this
script's output on the same day. Three parts, each the least of five runs (other load only adds), one BLAS thread:

* ``python``: 10^7 additions in a Python loop (what the estimators' per-repetition overhead is made of);
* ``numpy``: 2,000 Gram matrices X'X of 20,000 x 8 float64 rows (a housing fit's arithmetic);
* ``import``: a fresh ``python -c "import dpcost.jobs.estimate"`` (a Snakemake job's start-up), wall time.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: a job runs with one thread

import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

RUNS = 5
ROWS = np.random.default_rng(0).normal(size=(20_000, 8))  # a housing subsample's shape, with an intercept


def least(fn) -> float:
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def python_loop():
    s = 0
    for i in range(10**7):
        s += i
    return s


def grams():
    for _ in range(2_000):
        ROWS.T @ ROWS


def job_import():
    subprocess.run([sys.executable, "-c", "import dpcost.jobs.estimate"], check=True)


def main():
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    print(f"machine: {os.cpu_count()} cores, {cpu}, {platform.platform()}, Python {platform.python_version()}")
    print(f"1-minute load before: {os.getloadavg()[0]:.2f}")
    bytecode = "off (PYTHONDONTWRITEBYTECODE)" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "on"
    for name, fn in (("python", python_loop), ("numpy", grams), ("import", job_import)):
        print(f"{name:7s} {least(fn):.3f} s" + (f"  (bytecode cache {bytecode})" if name == "import" else ""))


if __name__ == "__main__":
    main()
