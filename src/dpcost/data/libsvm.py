"""LIBSVM data sets (opt-in real data): a streaming svmlight parser, download with a content check, preparation.

Format (LIBSVM README, "Installation and Data Format", https://www.csie.ntu.edu.tw/~cjlin/libsvm/; the text format
of scikit-learn's ``load_svmlight_file``): one instance a line, ``<label> <index>:<value> ...``. **Indices are
1-based** (LIBSVM's convention): feature ``j`` of the file is column ``j - 1``; index 0 is refused, never guessed
(unlike scikit-learn's ``zero_based="auto"``). ``#`` starts a comment; svmlight's ``qid:`` field is refused.

Data (https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/): E2006-tfidf (Kogan et al., NAACL-HLT 2009: 10-K
reports, log volatility), 16,087 / 3,308 rows, 150,360 features; RCV1 binary (Lewis et al., JMLR 5, 2004), 20,242 /
677,399 rows, 47,236 features, labels ±1.

Speed: Python splits lines (label, comment, row structure); pyarrow's CSV reader parses ~8 MB of ``index:value``
pairs at a time as ``index,value`` records. A chunk pyarrow rejects is re-read token by token in Python, which names
the bad line. Memory: the CSR result plus one chunk; nothing is densified (10 rows × 10⁷ features cost kilobytes).
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import json
import math
import os
import tempfile
import zipfile
import zlib
from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pyarrow as pa
import scipy.sparse as sp
from pyarrow import csv as pacsv

from ..errors import ConfigError, DataError

BASE_URL = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/"
_FILES = {
    "e2006": {"train": "regression/E2006.train.bz2", "test": "regression/E2006.test.bz2"},
    "rcv1": {"train": "binary/rcv1_train.binary.bz2", "test": "binary/rcv1_test.binary.bz2"},
}
# {dataset: {split: {url, filename, sha256}}}. The LIBSVM pages publish no checksums: pin the sha256 fetch records.
SOURCES = {
    ds: {split: {"url": BASE_URL + f, "filename": f.rsplit("/", 1)[1], "sha256": None} for split, f in files.items()}
    for ds, files in _FILES.items()
}
# prepare()'s ``sizes``: the shapes published on the LIBSVM pages | this experiment's draws
DATASETS = {
    "e2006": dict(name="E2006-tfidf", task="regression", n_features_total=150360, n_train=16087, n_test_total=3308)
    | dict(n_features=25000, n_private=8044, n_public=8043, n_test=None),
    "rcv1": dict(name="rcv1.binary", task="binary", n_features_total=47236, n_train=20242, n_test_total=677399)
    | dict(n_features=20000, n_private=10121, n_public=10121, n_test=10000),
}
FORMAT = "dpcost-libsvm-prepared-1"
PARTS = ("private", "public", "test")
VERIFY_ROWS = 50  # rows a download must parse before it is accepted
CHUNK_BYTES = 1 << 23  # feature text handed to pyarrow at once
INDEX_LIMIT = 2**31 - 1  # int32 column indices
_TO_CSV = bytes.maketrans(b": \t", b",\n\n")  # "3:0.5 7:1" -> "3,0.5\n7,1"
_CSV = {
    "read_options": pacsv.ReadOptions(column_names=["i", "v"], use_threads=False, block_size=1 << 24),
    "parse_options": pacsv.ParseOptions(quote_char=False, escape_char=False, ignore_empty_lines=True),
    "convert_options": pacsv.ConvertOptions(column_types={"i": pa.int64(), "v": pa.float64()}, null_values=[]),
}


def _show(token: bytes) -> str:
    return repr(token[:40].decode("ascii", "backslashreplace") + ("..." if len(token) > 40 else ""))


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of the text, read in 4 MB blocks; bz2 or gzip told by the magic bytes, not the name."""
    with open(path, "rb") as fh:
        kind = {b"BZh": "bz2", b"\x1f\x8b\x08": "gzip"}.get(fh.read(3), "plain")
    lineno, tail = 0, b""
    with {"bz2": bz2.open, "gzip": gzip.open, "plain": open}[kind](path, "rb") as stream:
        while True:
            try:
                block = stream.read(1 << 22)
            except (OSError, EOFError, zlib.error) as exc:
                raise DataError(f"{path}: line {lineno + 1}: damaged {kind} stream ({exc})") from None
            if not block:
                break
            lines = (tail + block).split(b"\n")
            tail = lines.pop()
            for line in lines:
                lineno += 1
                yield lineno, line
    if tail:
        yield lineno + 1, tail


def _records(path: Path) -> Iterator[tuple[int, bytes, bytes]]:
    """(line number, label, feature text) of every data line; comments and blank lines skipped."""
    for lineno, line in _lines(path):
        if b"#" in line:
            line = line[: line.index(b"#")]
        parts = line.split(None, 1)
        if parts:
            yield lineno, parts[0], parts[1] if len(parts) > 1 else b""


class _Builder:
    """Accumulates rows into CSR pieces (numpy chunks), validating a chunk at a time."""

    def __init__(self, path: Path, n_features: int | None, columns):
        self.path, self.limit = path, n_features if n_features is not None else INDEX_LIMIT
        self.colmap, self.width = None, n_features
        if columns is not None:  # keep these columns only, renumbered 0..len-1
            cols = np.asarray(columns, dtype=np.int64)
            ok = n_features is not None and cols.ndim == 1 and bool((np.diff(cols) > 0).all())
            if not ok or (cols.size and not 0 <= cols[0] <= cols[-1] < n_features):
                raise ValueError("columns must be sorted distinct 0-based indices below a given n_features")
            self.colmap = np.full(n_features, -1, dtype=np.int32)  # O(n_features), public and small
            self.colmap[cols] = np.arange(cols.size)
            self.width = int(cols.size)
        self.labels, self.max_col = array("d"), -1
        self.counts, self.indices, self.data = [], [], []  # CSR pieces, one per chunk
        self.texts, self.lines, self.size = [], array("q"), 0  # the current chunk

    def error(self, lineno: int, what: str) -> DataError:  # the one line a user reads
        return DataError(f"{self.path}: line {lineno}: {what}")

    def add(self, lineno: int, label: bytes, rest: bytes) -> None:
        try:
            y = float(label)
        except ValueError:
            hint = " (this looks like an HTML/XML page, not svmlight)" if label.startswith(b"<") else ""
            raise self.error(lineno, f"label {_show(label)} is not a number{hint}") from None
        if not math.isfinite(y):
            raise self.error(lineno, f"label {_show(label)} is not finite")
        self.labels.append(y)
        self.lines.append(lineno)
        self.texts.append(rest)
        self.size += len(rest)
        if self.size >= CHUNK_BYTES:
            self.flush()

    def _fast(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        ntok = np.fromiter((t.count(b":") for t in self.texts), dtype=np.int64, count=len(self.texts))
        if not ntok.any():
            return np.zeros(0, np.int64), np.zeros(0), ntok
        try:
            table = pacsv.read_csv(pa.py_buffer(b"\n".join(self.texts).translate(_TO_CSV)), **_CSV)
        except pa.ArrowInvalid:
            return None
        if table.num_rows != ntok.sum():  # a token without exactly one colon: let the slow path name it
            return None
        return table.column("i").to_numpy(), table.column("v").to_numpy(), ntok

    def _slow(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        idx, val, ntok = array("q"), array("d"), array("q")
        for lineno, rest in zip(self.lines, self.texts, strict=True):
            tokens = rest.split()
            for tok in tokens:
                head, colon, tail = tok.partition(b":")
                if tok.startswith(b"qid:"):
                    raise self.error(lineno, "qid: field found; svmlight ranking files are not supported")
                if not colon or not head or not tail or b":" in tail:
                    raise self.error(lineno, f"malformed token {_show(tok)} (expected index:value)")
                if not head.isdigit() or len(head) > 18:
                    raise self.error(lineno, f"feature index {_show(head)} is not an integer in 1..{self.limit}")
                try:
                    val.append(float(tail.replace(b"_", b"!")))  # float() would accept "1_0"
                except ValueError:
                    raise self.error(lineno, f"value {_show(tail)} of feature {int(head)} is not a number") from None
                idx.append(int(head))
            ntok.append(len(tokens))
        return np.asarray(idx, np.int64), np.asarray(val, np.float64), np.asarray(ntok, np.int64)

    def flush(self) -> None:
        if not self.texts:
            return
        idx, val, ntok = self._fast() or self._slow()
        row_of = np.repeat(np.arange(ntok.size), ntok)

        def fail(k, what):
            raise self.error(self.lines[int(row_of[k])], what)

        bad = (idx < 1) | (idx > self.limit)
        if bad.any():
            k = int(np.argmax(bad))
            why = "LIBSVM indices start at 1" if idx[k] < 1 else f"allowed 1..{self.limit}"
            fail(k, f"feature index {idx[k]} out of range ({why})")
        if not np.isfinite(val).all():
            k = int(np.argmax(~np.isfinite(val)))
            fail(k, f"value {val[k]} of feature {idx[k]} is not finite")
        col = idx - 1
        same_row = row_of[1:] == row_of[:-1]
        if (same_row & (np.diff(col) <= 0)).any():  # unsorted row(s): sort within rows, then look for repeats
            order = np.lexsort((col, row_of))
            col, val = col[order], val[order]
            dup = same_row & (np.diff(col) == 0)
            if dup.any():
                k = int(np.argmax(dup)) + 1
                fail(k, f"feature index {col[k] + 1} appears twice")
        self.max_col = max(self.max_col, int(col.max(initial=-1)))
        counts = ntok
        if self.colmap is not None:
            mapped = self.colmap[col]
            keep = mapped >= 0
            col, val, counts = mapped[keep], val[keep], np.bincount(row_of[keep], minlength=ntok.size)
        self.counts.append(counts)
        self.indices.append(col.astype(np.int32))
        self.data.append(val)
        self.texts, self.lines, self.size = [], array("q"), 0

    def matrix(self) -> tuple[sp.csr_matrix, np.ndarray]:
        self.flush()
        n = len(self.labels)
        if n == 0:
            raise DataError(f"{self.path}: no data rows (empty, or only comments and blank lines)")
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.concatenate(self.counts), out=indptr[1:])
        indices, self.indices = np.concatenate(self.indices), []  # one piece at a time: peak CSR + its largest part
        data, self.data = np.concatenate(self.data), []
        width = self.width if self.width is not None else self.max_col + 1
        X = sp.csr_matrix((data, indices, indptr), shape=(n, width))
        X.has_sorted_indices = True
        X.eliminate_zeros()
        return X, np.frombuffer(self.labels, dtype=np.float64).copy()


def read_svmlight(
    path: Path | str,
    *,
    n_features: int | None = None,
    max_rows: int | None = None,
    rows=None,
    columns=None,
    expect_rows: int | None = None,
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Parse a plain, bz2 or gzip svmlight/LIBSVM file into ``(X, y)``: X CSR float64 (sorted indices, explicit
    zeros dropped), y float64; file index ``j`` (1-based) is column ``j - 1``. Unsorted indices are sorted; a
    repeated index, index 0 or above ``n_features``, a non-finite value or label, a malformed token, a ``qid:``
    field or a file without data rows raise :class:`DataError` with the file and line.

    ``n_features``: the width (default: the largest index seen). ``max_rows``: stop after that many rows. ``rows``:
    0-based data rows to keep (the others are counted, not parsed). ``columns``: sorted 0-based columns to keep
    (needs ``n_features``), dropped while streaming. ``expect_rows``: the published row count, checked.
    """
    path = Path(path)
    builder = _Builder(path, n_features, columns)
    want = None if rows is None else set(np.asarray(rows, dtype=np.int64).ravel().tolist())
    if want is not None and min(want, default=0) < 0:
        raise ValueError("rows must be non-negative")
    total, stopped = 0, False
    with contextlib.closing(_records(path)) as records:
        for lineno, label, rest in records:
            total += 1
            if want is not None and total - 1 not in want:
                continue
            builder.add(lineno, label, rest)
            got = len(builder.labels)
            if got >= (max_rows or math.inf) or (want is not None and got == len(want) and expect_rows is None):
                stopped = True
                break
    if not stopped and expect_rows is not None and total != expect_rows:
        raise DataError(f"{path}: {total} data rows, expected {expect_rows}; not the file the data set describes")
    if want is not None and not stopped and len(builder.labels) < len(want):
        raise DataError(f"{path}: rows up to {max(want)} asked for, but the file has only {total} data rows")
    return builder.matrix()


def binary_labels(y: np.ndarray, where: str = "labels") -> np.ndarray:
    """Labels ±1 (LIBSVM's binary sets) or 0/1 as 0/1 floats (−1 → 0); anything else is refused."""
    values = set(np.unique(y).tolist())
    if values <= {0.0, 1.0} or values <= {-1.0, 1.0}:
        return (y > 0).astype(np.float64)
    odd = sorted(values - {-1.0, 0.0, 1.0})[:5] or sorted(values)
    raise DataError(f"{where}: a binary data set needs labels ±1 or 0/1; found {len(values)} values, e.g. {odd}")


def split_rows(n: int, n_private: int, n_public: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint uniformly random row sets (sorted 0-based indices) of sizes ``n_private`` and ``n_public`` from
    ``range(n)``: one permutation, cut in two. Uses only ``n``, never the data."""
    if n_private < 1 or n_public < 0 or n_private + n_public > n:
        raise ConfigError(f"cannot split {n} rows into {n_private} private and {n_public} public")
    perm = rng.permutation(n)
    private, public = np.sort(perm[:n_private]), np.sort(perm[n_private : n_private + n_public])
    if np.intersect1d(private, public).size or private.size != n_private or public.size != n_public:
        raise AssertionError("private and public rows overlap")  # cannot happen; checked because it must not
    return private, public


def _atomic_savez(out: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """Write a compressed .npz so that ``out`` holds the whole file or is untouched (temp file + os.replace)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=out.name + ".", suffix=".tmp", dir=out.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez_compressed(fh, **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def prepare(train, test, out, *, rng: np.random.Generator, sizes: Mapping, seed=None, provenance=None) -> dict:
    """Turn the downloaded ``train``/``test`` files into the ``.npz`` at ``out`` (see :func:`load_prepared`); return
    its meta. ``sizes`` as in :data:`DATASETS` (the row counts are checked against the files).

    Draws from ``rng``, in this order, using public counts only: (1) ``n_features`` of the ``n_features_total``
    columns, uniformly without replacement; (2) the split of the training rows into ``n_private`` private and
    ``n_public`` public rows (:func:`split_rows`; ``None``: the rest); (3) ``n_test`` of the ``n_test_total`` test
    rows (``None``: all). Binary labels become 0/1. No centring or scaling: values are as published.
    """
    sizes, state = dict(sizes), rng.bit_generator.state
    d_total, n_test_total, n_test = int(sizes["n_features_total"]), int(sizes["n_test_total"]), sizes.get("n_test")
    d = int(sizes.get("n_features") or d_total)
    if not 1 <= d <= d_total or not 1 <= (n_test or 1) <= n_test_total:
        raise ConfigError(f"need 1 <= n_features <= {d_total} and 1 <= n_test <= {n_test_total}; got {d}, {n_test}")
    if sizes["task"] not in ("regression", "binary"):
        raise ConfigError(f"task {sizes['task']!r} is neither 'regression' nor 'binary'")
    feature_index = np.sort(rng.choice(d_total, size=d, replace=False))
    X_tr, y_tr = read_svmlight(train, n_features=d_total, columns=feature_index, expect_rows=sizes.get("n_train"))
    n_train, n_private = X_tr.shape[0], int(sizes["n_private"])
    n_public = int(sizes["n_public"]) if sizes.get("n_public") is not None else n_train - n_private
    private, public = split_rows(n_train, n_private, n_public, rng)
    subset = None if n_test is None else np.sort(rng.choice(n_test_total, n_test, replace=False))
    X_te, y_te = read_svmlight(test, n_features=d_total, columns=feature_index, rows=subset, expect_rows=n_test_total)
    if sizes["task"] == "binary":
        y_tr, y_te = binary_labels(y_tr, str(train)), binary_labels(y_te, str(test))
    parts = {"private": (X_tr[private], y_tr[private], private), "public": (X_tr[public], y_tr[public], public)}
    parts["test"] = (X_te, y_te, np.arange(n_test_total) if subset is None else subset)
    arrays = {"feature_index": feature_index}
    for name, (X, y, idx) in parts.items():
        arrays.update({f"{name}_data": X.data, f"{name}_indices": X.indices, f"{name}_indptr": X.indptr})
        arrays.update({f"{name}_shape": np.array(X.shape), f"{name}_y": y, f"{name}_rows": idx})
    meta = {
        "format": FORMAT,
        **{k: sizes.get(k) for k in ("name", "task", "n_features", "n_private", "n_public", "n_test")},
        **{"n_features_total": d_total, "n_train": int(n_train), "n_test_total": n_test_total},
        "n": {name: int(X.shape[0]) for name, (X, _, _) in parts.items()},
        "nnz": {name: int(X.nnz) for name, (X, _, _) in parts.items()},
        "density": {name: X.nnz / max(1, X.shape[0] * d) for name, (X, _, _) in parts.items()},
        "labels": "±1 mapped to 0/1 (−1 → 0, +1 → 1)" if sizes["task"] == "binary" else "real target, as published",
        "seed": seed,
        "rng_state": state,
        "draws": "rng.choice(n_features_total, n_features) sorted; rng.permutation(n_train) cut private|public; "
        + ("all test rows" if n_test is None else "rng.choice(n_test_total, n_test) sorted"),
        "indices": "feature_index[j] is the 0-based column of the file (its LIBSVM index is feature_index[j] + 1)",
        "preprocessing": "none by dpcost: no centring, no scaling; explicit zeros dropped",
        "private": False,
        "not_private": "the feature subset, row split and test subset depend on the public seed and public counts "
        "only; the counts (n_train, n_test_total, n_features_total) are read from the files and published on the "
        "LIBSVM pages; nnz and density here are computed from every part, the private one included (a description "
        "of the files, not part of any private release); the publishers' TF-IDF weights, vocabulary and any "
        "normalisation were computed on the whole corpus",
        "looked_at": "labels (to check and map them), indices and values (to parse and validate): no statistic of "
        "the data chose anything",
        "public_part": "public rows, disjoint from the private ones: X_public is knowledge transfer's auxiliary X~; "
        "the mean of y_public shifts the regression target (dpcost.analysis.transfer)",
        "sources": dict(provenance) if provenance else None,
    }
    arrays["meta"] = np.array(json.dumps(meta, allow_nan=False))
    _atomic_savez(Path(out), arrays)
    return meta


@dataclass(frozen=True)
class Prepared:
    """What :func:`prepare` wrote; ``X_public`` is knowledge transfer's X̃, ``y_public``'s mean the target's shift."""

    X_private: sp.csr_matrix
    y_private: np.ndarray
    X_public: sp.csr_matrix
    y_public: np.ndarray
    X_test: sp.csr_matrix
    y_test: np.ndarray
    feature_index: np.ndarray
    meta: dict
    rows: dict  # {"private", "public", "test"}: 0-based rows of the original train/test file


def load_prepared(path: Path | str) -> Prepared:
    """Read :func:`prepare`'s ``.npz`` (no pickles); a damaged or foreign file raises :class:`DataError`."""
    try:
        with np.load(path, allow_pickle=False) as z:
            meta, got = json.loads(str(z["meta"])), {}
            for p in PARTS:
                shape = tuple(int(s) for s in z[f"{p}_shape"])
                got[f"X_{p}"] = sp.csr_matrix((z[f"{p}_data"], z[f"{p}_indices"], z[f"{p}_indptr"]), shape=shape)
                got[f"y_{p}"] = z[f"{p}_y"]
            rows, feature_index = {p: z[f"{p}_rows"] for p in PARTS}, z["feature_index"]
    except (OSError, EOFError, KeyError, ValueError, zipfile.BadZipFile, zlib.error) as exc:
        raise DataError(f"{path}: not a complete prepared LIBSVM file ({type(exc).__name__}: {exc})") from None
    if meta.get("format") != FORMAT:
        raise DataError(f"{path}: format {meta.get('format')!r}, expected {FORMAT!r}")
    return Prepared(**got, feature_index=feature_index, meta=meta, rows=rows)


def fetch(dataset: str, dest_dir: Path | str, *, sources: Mapping | None = None, **download_options) -> dict:
    """Download the train and test files of ``dataset`` (``sources``: ``{split: source or [mirrors]}``, default
    :data:`SOURCES`) and accept a file only when its first :data:`VERIFY_ROWS` rows parse as svmlight: an HTML page
    or other non-svmlight file is refused and removed. A given sha256 is verified; either way the record holds the
    sha256 received, to pin. ``download_options``: those of :func:`dpcost.data.download.download_first` (e.g.
    ``manual_dir``) and :func:`dpcost.data.download.download` (e.g. from ``download.options(config)``).
    """
    from .download import download_first  # local import: parsing needs no network stack

    if sources is None and dataset not in SOURCES:
        raise ConfigError(f"unknown LIBSVM data set {dataset!r}; known: {sorted(SOURCES)}")
    sources = SOURCES[dataset] if sources is None else sources
    width = DATASETS.get(dataset, {}).get("n_features_total")
    check = partial(read_svmlight, n_features=width, max_rows=VERIFY_ROWS)

    files = {}
    for split, entries in sources.items():
        entries = [dict(entries)] if isinstance(entries, Mapping) else [dict(e) for e in entries]
        rec = download_first(entries, dest_dir, verify=lambda path, _: check(path), **download_options)
        pinned = any(e.get("sha256") for e in entries if e["url"] == rec["url"])
        files[split] = {**rec, "sha256_pinned": pinned, "checked": f"first {VERIFY_ROWS} rows parse as svmlight"}
    return {"dataset": dataset, "files": files}
