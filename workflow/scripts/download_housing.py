"""Download the California housing archive from the first configured source that verifies; write a manifest."""

from pathlib import Path

from dpcost.data import download, housing
from dpcost.scripting import run, write_json_atomic


def main(sources, content_sha256, manual_dir, options, out):
    out = Path(out)

    def verify(path, source):
        # A checksum proves the bytes; this proves the content, also for a mirror listed without a checksum.
        housing.verify_content(housing.parse_archive(path, source["format"]), content_sha256)

    record = download.download_first(
        [housing.with_filename(s) for s in sources],
        out.parent,
        manual_dir=manual_dir,
        verify=verify,
        **download.options(options),
    )
    write_json_atomic(out, record)


p = snakemake.params
run(
    lambda: main(p.sources, p.content_sha256, p.manual_dir, dict(p.options), snakemake.output.manifest),
    snakemake.log[0],
    "download_housing",
)
