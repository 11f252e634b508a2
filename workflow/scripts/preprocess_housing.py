"""Parse the downloaded archive, verify its content, standardize the design; record what was done."""

import json

from dpcost.data import housing
from dpcost.scripting import run, write_json_atomic


def main(manifest_file, content_sha256, y_scale, center_y, out_table, out_meta):
    manifest = json.loads(open(manifest_file).read())
    table, meta = housing.prepare(manifest, content_sha256=content_sha256, y_scale=y_scale, center_y=center_y)
    table.to_parquet(out_table, index=False)
    write_json_atomic(out_meta, meta)


p = snakemake.params
run(
    lambda: main(
        snakemake.input.manifest, p.content_sha256, p.y_scale, p.center_y, snakemake.output.table, snakemake.output.meta
    ),
    snakemake.log[0],
    "preprocess_housing",
)
