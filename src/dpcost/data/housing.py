"""California housing (Pace & Barry 1997; 1990 census, 20,640 block groups): what is housing's own — the readers of
its two published archives (StatLib's ``houses.zip``, figshare's ``cal_housing.tgz``) and of scikit-learn's derived
copy, and its published content checksum. Housing is a built-in ``kind: table`` block of config/config.yaml
(``reader: housing``): its sources, download, preparation and analysis are any table's (:mod:`dpcost.data.table`,
:mod:`dpcost.data.prepare`), every copy read by :func:`read` and checked by :func:`canonical_sha256`."""

from __future__ import annotations

import hashlib
import io
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import DataError

N_ROWS = 20640
COLUMNS = [  # canonical order, as in StatLib's cadata.txt
    "value",
    "income",
    "age",
    "total_rooms",
    "total_bedrooms",
    "population",
    "households",
    "latitude",
    "longitude",
]
FIGSHARE_COLUMNS = [  # CaliforniaHousing/cal_housing.data
    "longitude",
    "latitude",
    "age",
    "total_rooms",
    "total_bedrooms",
    "population",
    "households",
    "income",
    "value",
]
INTEGER_COLUMNS = ["value", "age", "total_rooms", "total_bedrooms", "population", "households"]
SKLEARN_COLUMNS = [  # scikit-learn's fetch_california_housing(as_frame=True): derived ratios, value in $100,000
    "MedInc",
    "HouseAge",
    "AveRooms",
    "AveBedrms",
    "Population",
    "AveOccup",
    "Latitude",
    "Longitude",
    "MedHouseVal",
]
CONTAINERS = ("statlib", "figshare", "csv", "parquet")
ARCHIVE_NAMES = {"statlib": "houses.zip", "figshare": "cal_housing.tgz"}  # as the two publishers name them


def _rows_of_nine_floats(text: str) -> np.ndarray:
    """Every line that parses as exactly 9 floats (skips cadata.txt's prose header, whatever its length)."""
    rows = []
    for line in text.splitlines():
        parts = line.replace(",", " ").split()
        if len(parts) != 9:
            continue
        try:
            rows.append([float(p) for p in parts])
        except ValueError:
            continue
    return np.asarray(rows, dtype=float).reshape(-1, 9)


def names_a_copy(name: str) -> bool:
    """Whether a file name is one a copy may have: .zip, .tgz, .tar.gz, .tar, or a .csv / .parquet part (e.g.
    california_housing.parquet.brotli, scikit-learn's file) — not a README beside it."""
    name = name.lower()
    return name.endswith((".zip", ".tgz", ".tar.gz", ".tar")) or bool({"csv", "parquet"} & set(name.split(".")[1:]))


def container_of(path: Path | str) -> str:
    """The container of a copy: by its name (.zip StatLib, .tgz/.tar.gz/.tar figshare, .csv, .parquet), else by its
    first bytes (a download saved under another name: zip, gzip, parquet's PAR1, else text)."""
    name = Path(path).name.lower()
    if name.endswith(".zip"):
        return "statlib"
    if name.endswith((".tgz", ".tar.gz", ".tar")):
        return "figshare"
    for fmt in ("csv", "parquet"):
        if fmt in name.split(".")[1:]:
            return fmt
    with open(path, "rb") as fh:
        head = fh.read(4)
    return {b"PK\x03\x04": "statlib", b"PAR1": "parquet"}.get(head, "figshare" if head[:2] == b"\x1f\x8b" else "csv")


def _floats(df: pd.DataFrame, path: Path) -> pd.DataFrame:
    try:
        return df.astype(float)
    except (ValueError, TypeError) as exc:
        raise DataError(f"{path}: a column is not numeric ({exc})") from None


def _read_table_file(path: Path, fmt: str) -> pd.DataFrame:
    """A csv (with a header) or parquet holding the 9 raw columns (:data:`COLUMNS`, any order, extra columns
    ignored) or scikit-learn's derived form (:data:`SKLEARN_COLUMNS`), as canonical raw columns, as floats."""
    try:
        df = pd.read_csv(path) if fmt == "csv" else pd.read_parquet(path)
    except Exception as exc:  # pandas and pyarrow raise many types for a damaged file; all mean "not readable"
        raise DataError(f"{path}: not a readable {fmt} file ({type(exc).__name__}: {str(exc)[:200]})") from None
    if set(COLUMNS) <= set(df.columns):
        return _floats(df[COLUMNS], path)
    if set(SKLEARN_COLUMNS) <= set(df.columns):
        # the raw counts come back exactly from the ratios (each within 1e-10 of an integer before rounding)
        df = _floats(df[SKLEARN_COLUMNS], path)
        households = np.round(df["Population"] / df["AveOccup"])
        return pd.DataFrame(
            {
                "value": np.round(df["MedHouseVal"] * 1e5),
                "income": df["MedInc"],
                "age": df["HouseAge"],
                "total_rooms": np.round(df["AveRooms"] * households),
                "total_bedrooms": np.round(df["AveBedrms"] * households),
                "population": df["Population"],
                "households": households,
                "latitude": df["Latitude"],
                "longitude": df["Longitude"],
            }
        )
    raise DataError(
        f"{path}: a {fmt} file needs the columns {COLUMNS} or scikit-learn's {SKLEARN_COLUMNS}; "
        f"found {list(df.columns)[:12]}"
    )


def _read_member(path: Path, fmt: str) -> str:
    try:
        if fmt == "statlib":
            with zipfile.ZipFile(path) as zf:
                names = [n for n in zf.namelist() if n.rsplit("/", 1)[-1] == "cadata.txt"]
                if not names:
                    raise DataError(f"{path}: zip archive has no member cadata.txt (members: {zf.namelist()[:5]})")
                return zf.read(names[0]).decode("latin-1")
        if fmt == "figshare":
            with tarfile.open(path, "r:*") as tf:
                members = [m for m in tf.getmembers() if m.name.endswith("cal_housing.data")]
                if not members:
                    raise DataError(f"{path}: tar archive has no member CaliforniaHousing/cal_housing.data")
                return tf.extractfile(members[0]).read().decode("latin-1")
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as exc:
        raise DataError(f"{path}: not a readable {fmt} archive ({type(exc).__name__}: {exc})") from None
    raise DataError(f"unknown housing archive format {fmt!r}; expected one of {CONTAINERS}")


def read(path: Path | str, fmt: str | None = None) -> pd.DataFrame:
    """Any copy of the table: ``houses.zip`` (container "statlib"), ``cal_housing.tgz`` ("figshare"), or a csv /
    parquet table (:func:`_read_table_file`), the container told by ``fmt`` or else :func:`container_of`.

    Returns 20,640 rows with :data:`COLUMNS`; count columns as int64. Raises :class:`DataError` on anything else.
    """
    path = Path(path)
    fmt = fmt or container_of(path)
    if fmt in ("csv", "parquet"):
        df = _read_table_file(path, fmt)
        if len(df) != N_ROWS:
            raise DataError(f"{path}: expected {N_ROWS} rows of 9 numbers, found {len(df)}")
    else:
        table = _rows_of_nine_floats(_read_member(path, fmt))
        if table.shape != (N_ROWS, 9):
            raise DataError(f"{path}: expected {N_ROWS} rows of 9 numbers, found {table.shape[0]}")
        df = pd.DataFrame(table, columns=COLUMNS if fmt == "statlib" else FIGSHARE_COLUMNS)[COLUMNS]
    if not np.isfinite(df.to_numpy()).all():
        raise DataError(f"{path}: table holds NaN or infinite values")
    for col in INTEGER_COLUMNS:
        rounded = np.round(df[col].to_numpy())
        if np.abs(df[col].to_numpy() - rounded).max() > 1e-6:
            raise DataError(f"{path}: column {col} should hold whole numbers")
        df[col] = rounded.astype(np.int64)
    return df


def canonical_sha256(df: pd.DataFrame) -> str:
    """sha256 of the canonical text rendering "%d,%.4f,%d,%d,%d,%d\\n" of (value, income, age, total_rooms,
    population, households), one line per row in file order (definition, value and provenance: docs/proofs.md,
    "The housing data: column orders and checksums")."""
    buf = io.StringIO()
    cols = ("value", "income", "age", "total_rooms", "population", "households")
    for row in zip(*(df[c] for c in cols), strict=True):
        buf.write("%d,%.4f,%d,%d,%d,%d\n" % row)  # noqa: UP031 — the published definition, kept verbatim
    return hashlib.sha256(buf.getvalue().encode()).hexdigest()
