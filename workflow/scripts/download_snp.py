"""List the GEO matrix/ folder of the series and download every series-matrix part; write a manifest."""

from pathlib import Path

from dpcost.geo import fetch_series_matrices
from dpcost.scripting import run, write_json_atomic


def main():
    out = Path(snakemake.output.manifest)
    opts = snakemake.params.options
    manifest = fetch_series_matrices(
        snakemake.params.matrix_url,
        snakemake.params.accession,
        out.parent,
        max_tries=opts.get("max_tries", 5),
        backoff=opts.get("backoff", 2.0),
        timeout=(10.0, float(opts.get("timeout", 60))),
    )
    write_json_atomic(out, manifest)


run(main, snakemake.log[0], "download_snp")
