"""Time and peak memory of each method of the knowledge-transfer real-data study (dpcost.analysis.transfer) at the
scale of the real LIBSVM splits, on synthetic stand-ins.

    python measurements/kt_scale.py [--datasets e2006 rcv1] [--methods iht dpsl_kt ...] [--out /tmp/kt_scale]
    python measurements/kt_scale.py --one e2006 dpsl_kt [--profile 25]     # one child run, prints JSON

The real files (E2006-tfidf, RCV1) are not needed: a split of the same shape is drawn as scipy.sparse CSR — rows of
unit l2 norm with positive TF-IDF-like entries, column frequencies Zipf-like (p_j ∝ 1/(j+10)), a sparse true θ on
common columns; a regression target shaped like E2006's log volatility, or 0/1 labels as RCV1's. The rows are drawn
in chunks, so no dense n × d array is ever formed and building the data adds little to the peak memory.

Each (data set, method) runs in a fresh subprocess (``--one``), so that its peak RSS is its own: ``run_method`` with
the data set's config tuning and s, one trial at the smallest ε of the config grid, the config's δ, calibration
"tight", on_invalid "refuse", sampler "exact", seed 1. A ``baseline`` child per data set only builds the data: its
peak is what every method's peak includes. The driver writes ``results.csv`` to ``--out`` and prints a markdown
table; a child that runs longer than ``--timeout`` seconds is stopped and reported as such.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import scipy.sparse as sp
import yaml

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "config" / "config.yaml"
METHODS = ("iht", "frank_wolfe_lasso", "dp_ight", "dpsl_kt_paper", "dpsl_kt")

# the real splits' shapes (config/config.yaml) and their rows' density on the feature subset
SHAPES = {
    "e2006": {"task": "regression", "n_private": 8044, "n_public": 8043, "n_test": 3308, "d": 25000, "nnz_row": 200},
    "rcv1": {"task": "binary", "n_private": 10121, "n_public": 10121, "n_test": 10000, "d": 20000, "nnz_row": 30},
}


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _rows(n: int, d: int, nnz_row: int, cum: np.ndarray, idf: np.ndarray, rng) -> sp.csr_matrix:
    """n rows: ~nnz_row distinct Zipf-drawn columns each (draws with replacement, duplicates merged into a count),
    entries (1 + log count)·idf·lognormal, scaled to unit l2 norm."""
    p = np.diff(cum, prepend=0.0)
    draws = nnz_row  # draws per row whose expected number of distinct columns, sum_j 1 - (1 - p_j)^k, is nnz_row
    while np.sum(1.0 - (1.0 - p) ** draws) < nnz_row:
        draws += 1
    k = np.maximum(1, rng.poisson(draws, n))
    row = np.repeat(np.arange(n, dtype=np.int64), k)
    col = np.minimum(np.searchsorted(cum, rng.random(row.size), side="right"), d - 1)
    key, count = np.unique(row * d + col, return_counts=True)  # sorted by (row, col): CSR order
    row, col = key // d, (key % d).astype(np.int32)
    data = (1.0 + np.log(count)) * idf[col] * rng.lognormal(0.0, 0.3, col.size)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(row, minlength=n), out=indptr[1:])
    norms = np.sqrt(np.add.reduceat(data**2, indptr[:-1]))
    data /= np.repeat(norms, np.diff(indptr))
    return sp.csr_matrix((data, col, indptr), shape=(n, d))


def synthetic(dataset: str, seed: int = 0, chunk: int = 2000) -> SimpleNamespace:
    """A split shaped like the real one (attributes as dpcost.data.libsvm.Prepared)."""
    sh = SHAPES[dataset]
    rng = np.random.default_rng(seed)
    d = sh["d"]
    p = 1.0 / (np.arange(d) + 10.0)
    p /= p.sum()
    cum = np.cumsum(p)
    idf = np.log(1.0 / (p * sh["nnz_row"]).clip(max=0.5))  # log(N / document frequency), positive
    n_total = sh["n_private"] + sh["n_public"] + sh["n_test"]
    X = sp.vstack([_rows(min(chunk, n_total - i), d, sh["nnz_row"], cum, idf, rng) for i in range(0, n_total, chunk)],
                  format="csr")  # fmt: skip
    theta = np.zeros(d)
    support = rng.choice(500, 50, replace=False)  # common columns
    theta[support] = rng.choice([-1.0, 1.0], 50) * rng.uniform(0.5, 2.0, 50)
    z = X @ theta
    z = (z - z.mean()) / z.std()
    if sh["task"] == "regression":
        y = -3.6 + 0.5 * z + rng.normal(0.0, 0.3, n_total)
    else:
        y = (z + rng.normal(0.0, 0.5, n_total) > 0).astype(float)
    a, b = sh["n_private"], sh["n_private"] + sh["n_public"]
    return SimpleNamespace(X_private=X[:a], y_private=y[:a], X_public=X[a:b], y_public=y[a:b], X_test=X[b:],
                           y_test=y[b:], meta={"task": sh["task"], "n": {"private": a}})  # fmt: skip


def one(dataset: str, method: str, profile: int = 0) -> dict:
    """Build the data and run one method once; a dict for the driver (printed as JSON)."""
    from dpcost.analysis.transfer import Split, run_method

    block = yaml.safe_load(CONFIG.read_text())[dataset]
    t0 = time.perf_counter()
    prepared = synthetic(dataset)
    split = Split.of(dataset, prepared)
    del prepared
    out = {"dataset": dataset, "method": method, "build_s": time.perf_counter() - t0, "build_peak_mb": peak_mb(),
           "build_rss_mb": current_mb(), "nnz": int(split.X.nnz),
           "nnz_row": split.X.nnz / split.X.shape[0]}  # fmt: skip
    if method == "baseline":
        return out | {"status": "ok"}
    kwargs = dict(s=int(block["s"]), epsilons=[min(block["privacy"]["epsilon"])],
                  delta=float(block["privacy"]["delta"]), trials=1, tuning=block["tuning"].get(method),
                  calibration="tight", on_invalid="refuse", sampler="exact", seed=1)  # fmt: skip
    t0 = time.perf_counter()
    if profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        df, _ = prof.runcall(run_method, split, method, **kwargs)
        pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(profile)
        pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(profile)
    else:
        df, _ = run_method(split, method, **kwargs)
    row = df.iloc[0]
    return out | {"status": "ok", "run_s": time.perf_counter() - t0, "peak_mb": peak_mb(),
                  "epsilon": row.epsilon, "metric": row.metric, "value": float(row.value), "support": int(row.support),
                  "proven": bool(row.proven), "estimate_s": float(row.seconds)}  # fmt: skip


def drive(datasets, methods, out: Path, timeout: float) -> pd.DataFrame:
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for dataset in datasets:
        for method in ["baseline", *methods]:
            cmd = [sys.executable, str(Path(__file__).resolve()), "--one", dataset, method]
            t0 = time.perf_counter()
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
            except subprocess.TimeoutExpired:
                rows.append({"dataset": dataset, "method": method, "status": f"timeout after {timeout:g} s"})
            else:
                if proc.returncode == 0:
                    rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
                else:
                    err = proc.stderr.strip().splitlines()
                    rows.append({"dataset": dataset, "method": method,
                                 "status": f"failed ({proc.returncode}): {err[-1] if err else ''}"})  # fmt: skip
            rows[-1]["wall_s"] = time.perf_counter() - t0
            print(f"{dataset} {method}: {rows[-1].get('status')} in {rows[-1]['wall_s']:.1f} s", file=sys.stderr,
                  flush=True)  # fmt: skip
            pd.DataFrame(rows).to_csv(out / "results.csv", index=False)
    return pd.DataFrame(rows)


def markdown(df: pd.DataFrame) -> str:
    cols = ["dataset", "method", "status", "nnz", "build_s", "build_peak_mb", "run_s", "peak_mb", "metric", "value"]
    df = df.reindex(columns=cols)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        cells = []
        for c in cols:
            v = r[c]
            if isinstance(v, float):
                v = "" if np.isnan(v) else f"{v:.4g}" if c == "value" else f"{v:.0f}" if c == "nnz" else f"{v:.1f}"
            cells.append(str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    ap.add_argument("--out", type=Path, default=Path("/tmp/kt_scale"))
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per child run")
    ap.add_argument("--one", nargs=2, metavar=("DATASET", "METHOD"), help="child mode: one run, JSON on stdout")
    ap.add_argument("--profile", type=int, default=0, help="with --one: print the top N cProfile rows to stderr")
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(*args.one, profile=args.profile)))
        return
    df = drive(args.datasets, args.methods, args.out, args.timeout)
    print(markdown(df))


if __name__ == "__main__":
    main()
