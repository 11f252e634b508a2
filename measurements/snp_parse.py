"""Benchmark: parse + select on a full-size synthetic GSE106818 series matrix (906,600 SNP rows × 387 samples).

    python measurements/snp_parse.py [--rows 906600] [--file /tmp/dpcost_bench/GSE106818_series_matrix.txt.gz]

Writes the file once (AA/AB/BB/NoCall, ~1 % no-calls, plus CN_* and AFFX-* rows), then times `zcat | wc -c`
(the decompression floor) and dpcost's parse + top-2000 selection, with peak RSS of each. Prints the figures.
"""

import argparse
import gzip
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


def write_file(path: Path, rows: int, samples: int = 387, seed: int = 0) -> None:
    # 4096 distinct random row bodies reused across rows: far apart in the file (~5 MB), so gzip still sees
    # random text (its window is 32 KB) and the parser does the full work on every row.
    rng = np.random.default_rng(seed)
    bodies = []
    for _ in range(4096):
        p = rng.uniform(0.02, 0.98)
        g = rng.binomial(2, p, size=samples)
        tok = np.array(["AA", "AB", "BB"], dtype=object)[g]
        tok[rng.random(samples) < 0.01] = "NoCall"
        bodies.append("\t".join(tok))
    gsm = [f"GSM28{k:05d}" for k in range(samples)]
    labels = ["average IQ"] * 241 + ["low IQ"] * 146
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    with gzip.open(tmp, "wt", compresslevel=6) as fh:
        fh.write('!Series_geo_accession\t"GSE106818"\n')
        fh.write("!Sample_geo_accession\t" + "\t".join(f'"{s}"' for s in gsm) + "\n")
        fh.write("!Sample_characteristics_ch1\t" + "\t".join(f'"iq group: {x}"' for x in labels) + "\n")
        fh.write("!series_matrix_table_begin\n")
        fh.write('"ID_REF"\t' + "\t".join(f'"{s}"' for s in gsm) + "\n")
        pick = rng.integers(0, len(bodies), size=rows)
        for k in range(rows):
            fh.write(f'"SNP_A-{1780000 + k}"\t{bodies[pick[k]]}\n')
            if k % 100 == 0:
                fh.write(f'"AFFX-SNP_{k}"\t' + "\t".join(["AB"] * samples) + "\n")
        fh.write("!series_matrix_table_end\n")
    tmp.rename(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=906_600)
    ap.add_argument("--file", type=Path, default=Path("/tmp/dpcost_bench/GSE106818_series_matrix.txt.gz"))
    ap.add_argument("--n-snps", type=int, default=2000)
    args = ap.parse_args()
    if not args.file.exists():
        t0 = time.perf_counter()
        write_file(args.file, args.rows)
        print(f"wrote {args.file} ({args.file.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t0:.0f} s")
    t0 = time.perf_counter()
    zcat = subprocess.run(f"zcat {args.file} | wc -c", shell=True, capture_output=True, text=True, check=True)
    print(f"zcat | wc -c: {int(zcat.stdout) / 1e9:.2f} GB of text in {time.perf_counter() - t0:.1f} s")
    code = (
        "import sys, time, resource; from dpcost.data import geo; t0 = time.perf_counter(); "
        f"h = geo.read_header({str(args.file)!r}); "
        f"sel = geo.select_snps(geo.iter_blocks(h), n_snps={args.n_snps}); "
        "print(f'{time.perf_counter() - t0:.1f} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} "
        '{sel.stats["rows"]}\')'
    )
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    wall = time.perf_counter() - t0
    print(
        f"dpcost parse + select top {args.n_snps}: {float(out[0]):.1f} s in-process, {wall:.1f} s with start-up; "
        f"peak RSS {out[1]} MB; {out[2]} SNP rows"
    )
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    print(f"machine: {os.cpu_count()} cores, {cpu}, {platform.platform()}, Python {platform.python_version()}")


if __name__ == "__main__":
    main()
