"""Wall time of one housing tune job (decoy mode), as the `tune` rule runs it, on the real data.

    python measurements/tune_job.py [--method precond_gd] [--runs 3] [--baseline-src /path/to/old/src]

Runs the job of the ``tune`` rule (``dpcost.jobs.tune.tune``) with the default configuration's ``housing`` block (its
decoys, search grid, m grid, privacy, seed) on the real 20,640 rows from ../shared (preprocessed as the workflow
does), one thread of BLAS, in a fresh process. With ``--baseline-src`` the same job also runs with another checkout's
package (one with this job API) first on ``sys.path`` (e.g. ``git worktree add /tmp/old <commit>`` and
``--baseline-src /tmp/old/src``), alternately, so that both see the same load; it then also says whether both wrote
the same record and candidate table, byte for byte. Prints seconds per run and the ratio.
"""

import argparse
import filecmp
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

CHILD = """
import yaml, warnings
warnings.simplefilter("ignore")
from dpcost.run.args import tune as tune_args
from dpcost.run.config import resolve, with_defaults
from dpcost.jobs import Job
from dpcost.jobs.tune import tune
run = resolve(with_defaults(yaml.safe_load(open({config!r}))), run_checks=False)
tune(Job("tune", {inputs!r}, {{"record": {record!r}, "table": {table!r}}}, tune_args(run, "housing", {method!r}),
         {{"dataset": "housing", "method": {method!r}}}))
"""


def prepare(tmp: Path) -> dict:
    """The preprocessed housing table and its record (the truth: full-sample OLS), as preprocess_table writes."""
    import pandas as pd

    from support import housing_design

    X, y, names, meta = housing_design()
    table = pd.DataFrame(X, columns=names).assign(y=y, split="train")
    table.to_parquet(tmp / "table.parquet")
    (tmp / "meta.json").write_text(json.dumps(meta))
    return {"table": str(tmp / "table.parquet"), "meta": str(tmp / "meta.json")}


def run_once(src: Path | None, args, inputs: dict, out: Path) -> float:
    code = CHILD.format(config=str(REPO / "config/config.yaml"), method=args.method, inputs=inputs,
                        record=str(out / "record.json"), table=str(out / "table.csv"))  # fmt: skip
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--method", default="precond_gd")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--baseline-src", type=Path)
    args = ap.parse_args()
    times = {"current": [], "baseline": []}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        inputs = prepare(tmp)
        for name in times:
            (tmp / name).mkdir()
        for _ in range(args.runs):
            if args.baseline_src:
                times["baseline"].append(run_once(args.baseline_src, args, inputs, tmp / "baseline"))
            times["current"].append(run_once(None, args, inputs, tmp / "current"))
        same = args.baseline_src and all(
            filecmp.cmp(tmp / "baseline" / f, tmp / "current" / f, shallow=False) for f in ("record.json", "table.csv")
        )
    for name, ts in times.items():
        if ts:
            print(f"{name}: {min(ts):.1f} s (runs: {', '.join(f'{t:.1f}' for t in ts)})")
    if times["baseline"]:
        print(f"speed-up: {min(times['baseline']) / min(times['current']):.2f}x; identical outputs: {same}")


if __name__ == "__main__":
    main()
