"""Prepare a table for its regression analysis (dpcost.data.prepare.prepare); record every step and its source."""

import json

import pandas as pd

from dpcost.analysis.streams import rng_for
from dpcost.data.prepare import prepare
from dpcost.scripting import run, write_json_atomic, write_table_atomic


def main(dataset, raw_file, manifest_file, spec, max_m, seed, out_table, out_meta):
    with open(manifest_file) as fh:
        manifest = json.load(fh)
    out, meta = prepare(pd.read_parquet(raw_file), spec, name=dataset, max_m=max_m,
                              rng=rng_for(seed, dataset, "test split"))  # fmt: skip
    meta["source"] = manifest
    write_table_atomic(out_table, out)
    write_json_atomic(out_meta, meta)


p = snakemake.params
run(
    lambda: main(
        snakemake.wildcards.dataset,
        snakemake.input.table,
        snakemake.input.manifest,
        dict(p.spec),
        p.max_m,
        p.seed,
        snakemake.output.table,
        snakemake.output.meta,
    ),  # fmt: skip
    snakemake.log[0],
    "preprocess_table",
)
