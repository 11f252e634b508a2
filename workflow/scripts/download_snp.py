"""List the GEO matrix/ folder of the series and download every series-matrix part (or use the parts placed by hand
in the manual folder); write a manifest."""

from pathlib import Path

from dpcost.data import download
from dpcost.data.geo import fetch_series_matrices
from dpcost.scripting import run, write_json_atomic


def main(matrix_url, accession, manual_dir, options, out):
    manifest = fetch_series_matrices(matrix_url, accession, Path(out).parent, manual_dir, **download.options(options))
    write_json_atomic(out, manifest)


p = snakemake.params
run(
    lambda: main(p.matrix_url, p.accession, p.manual_dir, dict(p.options), snakemake.output.manifest),
    snakemake.log[0],
    "download_snp",
)
