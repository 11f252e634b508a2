"""Performance budget: the full default analysis (both data sets, full m grids, 100 reps, every default method) on
this machine, after download, with per-job time and peak memory from Snakemake's benchmark files.

    python measurements/full_run.py [--workdir /tmp/dpcost_full] [--cores 2] [--override extra.yaml] [targets …]

``--override`` merges a YAML file over the run's configuration (e.g. ``{housing: {tuning_mode: private}}``);
targets default to the whole workflow.

Data: the real housing data from ../shared (rebuilt as the StatLib archive) and a full-size synthetic GSE106818
matrix (906,600 × 387; written by measurements/snp_parse.py if absent), both served from a loopback HTTP server.
Prints wall time, the sum of job times, Snakemake's overhead, and one line per job. The package's bytecode is written
first (:func:`compiled`).
"""

import argparse
import hashlib
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "measurements"))
from snp_parse import write_file  # noqa: E402

from support import LoopbackServer, real_housing, statlib_zip_bytes  # noqa: E402
from workflow_runner import run_workflow  # noqa: E402


def snakemake(workdir, cfg, *args, cores):
    res = run_workflow(workdir, cfg, *args, cores=cores, timeout=3600)
    if res.returncode != 0:
        sys.exit(res.stderr[-3000:])


def compiled() -> None:
    """Write the package's bytecode, as pip does when it installs it and the test suite at its start: where
    PYTHONDONTWRITEBYTECODE is set (this project's machines) every job would otherwise compile the modules it imports
    again, which a user's installed package does not: measured, 0.04-0.07 s a job (0.34-0.41 s against 0.41-0.46 s
    for an estimate job's imports), within the run-to-run noise of the whole run."""
    import compileall

    import dpcost

    compileall.compile_dir(Path(dpcost.__file__).parent, quiet=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/dpcost_full"))
    ap.add_argument("--snp-file", type=Path, default=Path("/tmp/dpcost_bench/GSE106818_series_matrix.txt.gz"))
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--override", type=Path, help="YAML merged over the run's configuration")
    ap.add_argument("targets", nargs="*", help="files to build (default: everything)")
    args = ap.parse_args()
    if not args.snp_file.exists():
        write_file(args.snp_file, 906_600)
    compiled()
    archive = statlib_zip_bytes(real_housing())
    with LoopbackServer() as srv:
        srv.add("/h/houses.zip", archive)
        srv.add("/s/", f'<a href="{args.snp_file.name}">{args.snp_file.name}</a>'.encode())
        srv.add("/s/" + args.snp_file.name, args.snp_file.read_bytes())
        args.workdir.mkdir(parents=True, exist_ok=True)
        source = {
            "url": srv.base + "/h/houses.zip",
            "format": "statlib",
            "filename": "houses.zip",
            "sha256": hashlib.sha256(archive).hexdigest(),
        }
        cfg = {"housing": {"sources": [source]}, "snp": {"matrix_url": srv.base + "/s/"}}
        if args.override:
            for key, value in yaml.safe_load(args.override.read_text()).items():
                cfg[key] = {**cfg.get(key, {}), **value} if isinstance(value, dict) else value
        snakemake(args.workdir, cfg, "resources/housing/download.json", "resources/snp/manifest.json", cores=args.cores)
        subprocess.run(["rm", "-rf", str(args.workdir / "results")], check=True)
        t0 = time.perf_counter()
        snakemake(args.workdir, cfg, *args.targets, cores=args.cores)
        wall = time.perf_counter() - t0
    jobs = []
    for tsv in sorted((args.workdir / "results/job_times").glob("*.tsv")):
        if tsv.stem.startswith("download"):
            continue
        row = pd.read_csv(tsv, sep="\t").iloc[0]
        jobs.append((tsv.stem, float(row["s"]), float(row["max_rss"])))
    df = pd.DataFrame(jobs, columns=["job", "seconds", "max_rss_mb"]).sort_values("seconds", ascending=False)
    total = df.seconds.sum()
    print(df.to_string(index=False, float_format=lambda v: f"{v:.1f}"))
    print(f"\nwall {wall:.1f} s on {args.cores} cores; {len(df)} jobs summing to {total:.1f} s of job time")
    print(
        f"overhead (wall - sum of job times) {wall - total:.1f} s = {(wall - total) / wall:.0%} of wall; "
        f"wall x cores - sum = {(wall * args.cores - total) / (wall * args.cores):.0%} of the core time"
    )
    print(f"largest peak RSS of a job: {df.max_rss_mb.max():.0f} MB ({df.loc[df.max_rss_mb.idxmax(), 'job']})")
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    print(f"machine: {os.cpu_count()} cores, {cpu}, {platform.platform()}, Python {platform.python_version()}")


if __name__ == "__main__":
    main()
