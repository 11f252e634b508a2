"""GEO series-matrix files of SNP arrays: listing, integrity, a streaming parser, labels and SNP selection.

Built for GSE106818 (Affymetrix SNP 6.0, 387 adults with schizophrenia), whose genotype coding nobody here could
inspect: every coding GEO uses for SNP 6.0 calls is accepted (:mod:`dpcost.data.calls`), and anything else stops the
run with examples.

The table is streamed (pyarrow's CSV reader on a gzip stream, cells decoded by :func:`~.calls.decode_cells`); memory is
O(kept SNPs × samples) plus one block, never the whole text or the whole matrix.
"""

from __future__ import annotations

import gzip
import logging
import os
import re
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import csv as pacsv

from ..errors import DataError, DownloadError
from .calls import ALLELES, decode_cells

log = logging.getLogger(__name__)

DROP_PREFIXES = ("CN_", "AFFX-")
TABLE_BEGIN = "!series_matrix_table_begin"
TABLE_END = "!series_matrix_table_end"
LABEL_LINES = ("!Sample_characteristics_ch1", "!Sample_title", "!Sample_source_name_ch1", "!Sample_description")


def matrix_file_pattern(accession: str) -> re.Pattern:
    return re.compile(re.escape(accession) + r"(?:-GPL\d+)?_series_matrix(?:-(\d+))?\.txt\.gz")


def list_matrix_files(index_html: str, accession: str) -> list[str]:
    """Series-matrix file names in a GEO ``matrix/`` folder listing, part 1, 2, … in order."""
    pat = matrix_file_pattern(accession)
    names = {m.group(0) for m in pat.finditer(index_html)}
    return sorted(names, key=lambda n: (int(pat.fullmatch(n).group(1) or 0), n))


def check_gzip(path: Path | str) -> int:
    """Decompress the whole file (streaming) and return the number of text bytes; DataError if damaged."""
    d = zlib.decompressobj(wbits=47)
    total = 0
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                total += len(d.decompress(chunk))
                while d.unused_data:  # concatenated gzip members
                    rest = d.unused_data
                    d = zlib.decompressobj(wbits=47)
                    total += len(d.decompress(rest))
        if not d.eof:
            raise DataError(f"{path}: gzip stream is truncated")
    except zlib.error as exc:
        raise DataError(f"{path}: not a valid gzip file ({exc})") from None
    return total


def _cells(line: str) -> list[str]:
    return [c.strip().strip('"') for c in line.rstrip("\r\n").split("\t")]


@dataclass
class SeriesHeader:
    """What precedes the table of one series-matrix file."""

    path: str
    samples: list[str]
    lines: dict[str, list[list[str]]] = field(default_factory=dict)  # !Sample_* key → rows of per-sample cells
    columns: list[str] = field(default_factory=list)  # table header: ID_REF, GSM…
    skip_lines: int = 0  # lines before the first table row


def read_header(path: Path | str) -> SeriesHeader:
    """Read the lines up to and including the table's column header."""
    lines: dict[str, list[list[str]]] = {}
    n_read = 0
    try:
        with gzip.open(path, "rt", encoding="utf-8", errors="replace", newline="") as fh:
            for line in fh:
                n_read += 1
                cells = _cells(line)
                key = cells[0]
                if key.lower() == TABLE_BEGIN:
                    columns = _cells(fh.readline())
                    break
                if key.startswith("!Sample_"):
                    lines.setdefault(key, []).append(cells[1:])
            else:
                raise DataError(f"{path}: no {TABLE_BEGIN} line: not a series-matrix file")
    except (OSError, EOFError, zlib.error) as exc:
        raise DataError(f"{path}: cannot read gzip text ({exc})") from None
    samples = (lines.get("!Sample_geo_accession") or [[]])[0]
    if not columns or columns[0] != "ID_REF":
        raise DataError(f"{path}: table header should start with ID_REF, found {columns[:1]}")
    if not samples:
        raise DataError(f"{path}: no !Sample_geo_accession line")
    if columns[1:] != samples:
        raise DataError(
            f"{path}: table columns do not match !Sample_geo_accession ({len(columns) - 1} vs {len(samples)})"
        )
    return SeriesHeader(str(path), samples, lines, columns, n_read + 1)  # + the column header line


def find_labels(headers: Sequence[SeriesHeader], pattern: str = r"(low|average)\s*IQ") -> tuple[np.ndarray, str]:
    """The group of every sample (lower-cased match group 1), from the first header line whose cells *all* match.

    Lines are searched in the order of :data:`LABEL_LINES`; with several part files their cells are concatenated.
    """
    rx = re.compile(pattern, re.IGNORECASE)
    for key in LABEL_LINES:
        n_rows = min(len(h.lines.get(key, [])) for h in headers)
        for row in range(n_rows):
            cells = [c for h in headers for c in h.lines[key][row]]
            found = [rx.search(c) for c in cells]
            if cells and all(found):
                return np.array([f.group(1).lower() for f in found]), f"{key} (line {row + 1} of that key)"
    example = [c for h in headers for c in (h.lines.get(LABEL_LINES[0]) or [[""]])[0]][:3]
    raise DataError(f"no sample line has a label matching /{pattern}/ in every cell (e.g. {example})")


def check_groups(labels: np.ndarray, expected: dict[str, int]) -> None:
    found = {g: int((labels == g).sum()) for g in sorted(set(labels.tolist()))}
    if found != {g: int(n) for g, n in sorted(expected.items())}:
        raise DataError(f"label counts {found} differ from the expected {dict(sorted(expected.items()))}")


@dataclass
class Block:
    ids: np.ndarray  # (rows,) probe ids
    a1: np.ndarray  # (rows, samples) int8 allele codes, −1 = no call
    a2: np.ndarray


def iter_blocks(header: SeriesHeader, *, block_size: int = 1 << 22, accession: str = "series") -> Iterator[Block]:
    """Stream the table of one file as blocks of allele codes, CN_* and AFFX-* rows dropped."""
    samples = header.columns[1:]
    end_seen = []

    def on_invalid(row):
        if row.text.strip().strip('"').lower() == TABLE_END:
            end_seen.append(True)
            return "skip"
        return "error"

    types = dict.fromkeys(header.columns, pa.string())
    reader = pacsv.open_csv(
        pa.input_stream(header.path, compression="gzip"),
        read_options=pacsv.ReadOptions(skip_rows=header.skip_lines, column_names=header.columns, block_size=block_size),
        parse_options=pacsv.ParseOptions(delimiter="\t", quote_char='"', invalid_row_handler=on_invalid),
        convert_options=pacsv.ConvertOptions(
            column_types=types, strings_can_be_null=False, quoted_strings_can_be_null=False, null_values=[]
        ),
    )
    try:
        for batch in reader:
            ids = batch.column(0)
            drop = pc.or_(pc.starts_with(ids, DROP_PREFIXES[0]), pc.starts_with(ids, DROP_PREFIXES[1]))
            keep = np.flatnonzero(~drop.to_numpy(zero_copy_only=False))
            if keep.size == 0:
                continue
            # every row decoded, then the kept ones taken: cheaper than filtering 387 string columns first
            cells = pa.concat_arrays([batch.column(i + 1) for i in range(len(samples))])
            a1, a2 = (a.take(keep, axis=1).T for a in decode_cells(cells, batch.num_rows))  # a column per sample
            if (a1 == -2).any():
                sample, row = np.nonzero(a1.T == -2)
                used = set(cells.take(pa.array(sample * batch.num_rows + keep[row])).to_pylist())
                raise DataError(
                    f"{accession} matrix holds no genotype calls: values such as {sorted(used)[:5]} in "
                    f"{header.path} are not SNP calls (AA/AB/BB, base pairs, 0/1/2 or a no-call token); "
                    "a copy-number or intensity submission cannot be used"
                )
            yield Block(np.asarray(ids.take(pa.array(keep)).to_numpy(zero_copy_only=False), dtype=object), a1, a2)
    except pa.ArrowInvalid as exc:
        raise DataError(f"{header.path}: malformed table ({str(exc).splitlines()[0]})") from None
    except (OSError, EOFError) as exc:
        raise DataError(f"{header.path}: cannot read the table ({exc})") from None
    if not end_seen:
        raise DataError(f"{header.path}: no {TABLE_END} line: the file is truncated")


def iter_joined(headers: Sequence[SeriesHeader], **kw) -> Iterator[Block]:
    """Blocks of all part files side by side (samples concatenated), checking the parts list the same probes."""
    if len(headers) == 1:
        yield from iter_blocks(headers[0], **kw)
        return
    all_samples = [s for h in headers for s in h.columns[1:]]
    if len(set(all_samples)) != len(all_samples):
        raise DataError("the part files share samples; expected disjoint sample sets")
    its = [iter_blocks(h, **kw) for h in headers]
    pending: list[list[Block]] = [[] for _ in its]
    done = [False] * len(its)

    def available(k):
        return sum(len(b.ids) for b in pending[k])

    while True:
        for k, it in enumerate(its):
            while not done[k] and available(k) == 0:
                try:
                    pending[k].append(next(it))
                except StopIteration:
                    done[k] = True
        counts = [available(k) for k in range(len(its))]
        if all(c == 0 for c in counts):
            return
        take = min(counts)
        if take == 0:
            raise DataError("the part files hold different numbers of probes")
        parts = []
        for k in range(len(its)):
            blk = _concat(pending[k])
            parts.append(Block(blk.ids[:take], blk.a1[:take], blk.a2[:take]))
            rest = Block(blk.ids[take:], blk.a1[take:], blk.a2[take:])
            pending[k] = [rest] if len(rest.ids) else []
        for p in parts[1:]:
            if not np.array_equal(p.ids, parts[0].ids):
                raise DataError("the part files do not list the same probes in the same order (ID_REF differs)")
        yield Block(parts[0].ids, np.hstack([p.a1 for p in parts]), np.hstack([p.a2 for p in parts]))


def _concat(blocks: list[Block]) -> Block:
    if len(blocks) == 1:
        return blocks[0]
    return Block(
        np.concatenate([b.ids for b in blocks]), np.vstack([b.a1 for b in blocks]), np.vstack([b.a2 for b in blocks])
    )


@dataclass
class Selection:
    ids: np.ndarray  # (k,) SNP ids, rank order
    genotypes: np.ndarray  # (k, samples) int8 minor-allele counts
    maf: np.ndarray  # (k,)
    minor: np.ndarray  # (k,) minor allele letter
    missing_rate: np.ndarray  # (k,)
    stats: dict  # rows seen, dropped, eligible


def _minor_allele_stats(blk: Block):
    n_samples = blk.a1.shape[1]
    counts = np.stack([(blk.a1 == k).sum(axis=1) + (blk.a2 == k).sum(axis=1) for k in range(len(ALLELES))], axis=1)
    called = (blk.a1 >= 0).sum(axis=1)
    n_alleles = (counts > 0).sum(axis=1)
    code = np.arange(len(ALLELES))
    major = np.argmax(counts * 8 - code, axis=1)  # most frequent; tie → earlier letter (A before B)
    rest = np.where(code[None, :] == major[:, None], -1, counts * 8 + code)
    minor = np.argmax(rest, axis=1)  # second most frequent; tie → later letter, so a 50/50 A/B SNP counts B
    minor_count = counts[np.arange(len(minor)), minor]
    with np.errstate(invalid="ignore", divide="ignore"):
        maf = np.where(called > 0, minor_count / (2 * called), 0.0)
    return maf, minor, 1 - called / n_samples, n_alleles


def select_snps(
    blocks: Iterator[Block],
    *,
    n_snps: int,
    max_missing_rate: float = 0.0,
    tie_break: str = "id",
) -> Selection:
    """Keep the ``n_snps`` SNPs of highest minor-allele frequency in one pass.

    Eligible: at most two alleles observed and a no-call rate ≤ ``max_missing_rate``; MAF is computed over called
    genotypes. Ties in MAF (MAF = k/2n ties heavily) are broken by SNP id ascending (``tie_break="id"``) or by
    file order (``"file_order"``). Remaining no-calls in kept SNPs (only if max_missing_rate > 0) are imputed with
    the SNP's most frequent genotype. Genotypes are returned as minor-allele counts 0/1/2.
    """
    if tie_break not in ("id", "file_order"):
        raise DataError(f"tie_break must be 'id' or 'file_order', got {tie_break!r}")
    kept: Block | None = None
    keys = {
        "maf": np.empty(0),
        "order": np.empty(0, dtype=np.int64),
        "minor": np.empty(0, dtype=np.int64),
        "miss": np.empty(0),
    }
    stats = {"rows": 0, "more_than_two_alleles": 0, "too_many_no_calls": 0}
    offset = 0
    for blk in blocks:
        n = len(blk.ids)
        maf, minor, miss, n_alleles = _minor_allele_stats(blk)
        ok = (n_alleles <= 2) & (miss <= max_missing_rate + 1e-12)
        stats["rows"] += n
        stats["more_than_two_alleles"] += int((n_alleles > 2).sum())
        stats["too_many_no_calls"] += int(((n_alleles <= 2) & ~ok).sum())
        if kept is not None and len(kept.ids) == n_snps:
            ok &= maf >= keys["maf"].min()  # cannot enter the top set otherwise
        sel = np.flatnonzero(ok)
        cand_ids = np.concatenate([kept.ids, blk.ids[sel]]) if kept is not None else blk.ids[sel]
        cand = {
            "maf": np.concatenate([keys["maf"], maf[sel]]),
            "order": np.concatenate([keys["order"], offset + sel]),
            "minor": np.concatenate([keys["minor"], minor[sel]]),
            "miss": np.concatenate([keys["miss"], miss[sel]]),
        }
        a1 = np.vstack([kept.a1, blk.a1[sel]]) if kept is not None else blk.a1[sel]
        a2 = np.vstack([kept.a2, blk.a2[sel]]) if kept is not None else blk.a2[sel]
        tie = cand_ids.astype(str) if tie_break == "id" else cand["order"]
        top = np.lexsort((tie, -cand["maf"]))[:n_snps]
        kept = Block(cand_ids[top], np.ascontiguousarray(a1[top]), np.ascontiguousarray(a2[top]))
        keys = {k: v[top] for k, v in cand.items()}
        offset += n
    if kept is None or len(kept.ids) < n_snps:
        got = 0 if kept is None else len(kept.ids)
        raise DataError(f"only {got} SNPs are eligible (max_missing_rate={max_missing_rate}); {n_snps} requested")
    minor = keys["minor"][:, None]
    g = ((kept.a1 == minor).astype(np.int8) + (kept.a2 == minor)).astype(np.int8)
    missing = kept.a1 < 0
    if missing.any():
        for r in np.flatnonzero(missing.any(axis=1)):
            values, freq = np.unique(g[r, ~missing[r]], return_counts=True)
            g[r, missing[r]] = values[np.argmax(freq)]
    return Selection(kept.ids.astype(str), g, keys["maf"], np.array(list(ALLELES))[keys["minor"]], keys["miss"], stats)


def fetch_series_matrices(
    matrix_url: str, accession: str, dest_dir: Path | str, manual_dir: Path | str | None = None, **download_kw
) -> dict:
    """List a GEO ``matrix/`` folder, download every series-matrix part, verify each gzip stream; return a manifest.

    GEO publishes no checksums for these files: each is checked by decompressing it completely, and its size and
    sha256 are recorded. A part already present and intact (from an earlier, interrupted run) is not fetched again.
    Parts placed by hand in ``manual_dir`` under GEO's names are used instead, without the network (never deleted).
    """
    from .download import download, sha256_file  # local import: parsing needs no network stack

    manual = Path(manual_dir) if manual_dir is not None else None
    placed = list_matrix_files("\n".join(os.listdir(manual)), accession) if manual and manual.is_dir() else []
    folder, index = (manual, {"retrieved": "placed by hand"}) if placed else (Path(dest_dir), None)
    files = []
    try:
        if not placed:
            index = download(matrix_url, folder / "matrix_index.html", **download_kw)
        names = placed or list_matrix_files(Path(index["path"]).read_text(errors="replace"), accession)
        if not names:
            raise DataError(f"{matrix_url} lists no {accession}(-GPL…)_series_matrix(-N).txt.gz file")
        for name in names:
            path = folder / name
            try:
                if path.exists():
                    rec = {
                        "url": matrix_url + name,
                        "path": str(path),
                        "bytes": path.stat().st_size,
                        "sha256": sha256_file(path),
                        "retrieved": "placed by hand" if placed else "earlier run",
                    }
                else:
                    rec = download(matrix_url + name, path, **download_kw)
                rec["text_bytes"] = check_gzip(path)
            except DataError:
                if not placed:
                    path.unlink(missing_ok=True)  # never leave a damaged part looking valid
                raise
            files.append({"name": name, **rec})
    except DownloadError as exc:
        where = f" place the parts ({accession}_series_matrix*.txt.gz from {matrix_url}) in {manual}/, or"
        raise DownloadError(
            f"{exc}. Check the network, or{where if manual else ''} leave the SNP analyses (snp, snp_logistic) out of "
            "`datasets`"
        ) from None
    return {"accession": accession, "matrix_url": matrix_url, "index_retrieved": index["retrieved"], "files": files}
