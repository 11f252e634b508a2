"""Wall time of one simulation job (one experiment at one n), as the `simulate` rule runs it.

    python measurements/simulation_job.py --experiment fig2b --n 500 [--reps 50] [--baseline-src /path/to/old/src]

Runs the job of the ``simulate`` rule (``dpcost.jobs.simulation.simulate``) on the default configuration's
``simulation`` block, one thread of BLAS, in a fresh process; with ``--baseline-src`` the same job also runs with
another checkout's package (one with this job API) first on ``sys.path`` (e.g. ``git worktree add /tmp/old <commit>``
and ``--baseline-src /tmp/old/src``), alternately, so that both see the same load. Prints seconds per run and the
ratio.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = """
import sys, yaml, warnings
warnings.simplefilter("ignore")
from dpcost.jobs import Job
from dpcost.jobs.simulation import simulate
from dpcost.simulation.experiments import SimulationStudy
cfg = yaml.safe_load(open({config!r}))
block = cfg["simulation"]
if {reps} > 0:
    block["experiments"][{experiment!r}]["reps"] = {reps}
last = SimulationStudy.from_config(block).experiments[{experiment!r}].reps - 1
simulate(Job("simulate", output={{"table": {table!r}, "plans": {plans!r}}},
             args={{"block": block, "calibration": cfg["calibration"], "on_invalid": "warn", "sampler": cfg["sampler"],
                   "seed": cfg["seed"]}}, wildcards={{"experiment": {experiment!r}, "n": "{n}", "first": "0",
                   "last": str(last)}}))
"""


def run_once(src: Path | None, args, tmp: Path) -> float:
    code = CHILD.format(config=str(REPO / "config/config.yaml"), reps=args.reps, experiment=args.experiment, n=args.n,
                        table=str(tmp / "t.parquet"), plans=str(tmp / "p.json"))  # fmt: skip
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--experiment", default="fig2b")
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--reps", type=int, default=0, help="repetitions (0: the configuration's)")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--baseline-src", type=Path)
    args = ap.parse_args()
    times = {"current": [], "baseline": []}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.runs):
            if args.baseline_src:
                times["baseline"].append(run_once(args.baseline_src, args, Path(tmp)))
            times["current"].append(run_once(None, args, Path(tmp)))
    for name, ts in times.items():
        if ts:
            print(f"{name}: {min(ts):.1f} s (runs: {', '.join(f'{t:.1f}' for t in ts)})")
    if times["baseline"]:
        print(f"speed-up: {min(times['baseline']) / min(times['current']):.2f}x")


if __name__ == "__main__":
    main()
