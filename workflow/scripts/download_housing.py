"""Find the California housing data — a hand-placed copy, a local file or a download — whose content verifies."""

from pathlib import Path

from dpcost.data import download, housing
from dpcost.scripting import run, write_json_atomic


def main(sources, content_sha256, manual_dir, options, out):
    # A hand-placed copy or a `path:` source is accepted by its content checksum (docs/usage.md, "Running without
    # internet"); a download by its archive sha256 and its content.
    out = Path(out)
    record = housing.fetch(
        sources, out.parent, content_sha256=content_sha256, manual_dir=manual_dir, **download.options(options)
    )
    write_json_atomic(out, record)


p = snakemake.params
run(
    lambda: main(p.sources, p.content_sha256, p.manual_dir, dict(p.options), snakemake.output.manifest),
    snakemake.log[0],
    "download_housing",
)
