"""List the GEO matrix/ folder of the series and download every series-matrix part; write a manifest."""

import json
import os
from pathlib import Path

from dpcost.geo import fetch_series_matrices
from dpcost.scripting import run


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
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(manifest, indent=2) + "\n")
    os.replace(tmp, out)


run(main, snakemake.log[0], "download_snp")
