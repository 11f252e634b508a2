"""California housing (Pace & Barry 1997; 1990 census, 20,640 block groups): parsers, content check, preprocessing,
and the choice of the first source — a hand-placed copy, a local file or a download — whose content verifies."""

from __future__ import annotations

import hashlib
import io
import logging
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import DataError, DownloadError

log = logging.getLogger(__name__)
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
RESPONSE = "value"
COVARIATES = ["income", "age", "population", "households", "total_rooms"]  # the five of 004 §6.2
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
FORMATS = ("statlib", "figshare", "csv", "parquet")
ARCHIVE_NAMES = {"statlib": "houses.zip", "figshare": "cal_housing.tgz"}  # as the two publishers name them


def with_filename(source: dict) -> dict:
    """A source ``{url, format, sha256, filename?}`` with its file name, derived from the format when absent."""
    if source.get("filename"):
        return dict(source)
    if source.get("format") not in ARCHIVE_NAMES:
        raise DataError(
            f"unknown housing archive format {source.get('format')!r}; expected one of {tuple(ARCHIVE_NAMES)}"
        )
    return {**source, "filename": ARCHIVE_NAMES[source["format"]]}


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


def format_of(path: Path | str) -> str | None:
    """The housing format a file name announces (.zip statlib, .tgz/.tar.gz figshare, .csv, .parquet), else None."""
    name = Path(path).name.lower()
    suffixes = name.split(".")[1:]
    if name.endswith(".zip"):
        return "statlib"
    if name.endswith((".tgz", ".tar.gz", ".tar")):
        return "figshare"
    return next((fmt for fmt in ("csv", "parquet") if fmt in suffixes), None)


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
    raise DataError(f"unknown housing archive format {fmt!r}; expected one of {FORMATS}")


def parse_archive(path: Path | str, fmt: str) -> pd.DataFrame:
    """Parse ``houses.zip`` (fmt "statlib"), ``cal_housing.tgz`` (fmt "figshare"), or a csv / parquet table (see
    :func:`_read_table_file`) into the canonical table.

    Returns 20,640 rows with :data:`COLUMNS`; count columns as int64. Raises :class:`DataError` on anything else.
    """
    path = Path(path)
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


def verify_content(df: pd.DataFrame, expected_sha256: str | None) -> str:
    digest = canonical_sha256(df)
    if expected_sha256 is not None and digest != expected_sha256.lower():
        raise DataError(f"housing table content sha256 {digest} does not match the expected {expected_sha256}")
    return digest


def check_source(source: dict, where: str) -> dict:
    """A housing source from the config, checked: ``{url, format (statlib|figshare), sha256?, filename?}`` to download,
    or ``{path, format?, sha256?}`` for a file on this machine (format from its name when omitted). Returns it with
    its format (and a download's file name) filled in; raises :class:`DataError` naming ``where`` otherwise."""
    if ("url" in source) == ("path" in source):
        raise DataError(f"{where}: give either url (to download) or path (a file on this machine), exactly one")
    if "url" in source:
        if source.get("format") not in ARCHIVE_NAMES:
            raise DataError(f"{where}: a url source needs format statlib or figshare, not {source.get('format')!r}")
        return with_filename(source)
    if "filename" in source:
        raise DataError(f"{where}: filename applies to downloads; a path source is read where it is")
    fmt = source.get("format") or format_of(source["path"])
    if fmt not in FORMATS:
        raise DataError(f"{where}: cannot tell the format of {source['path']!r}; add format: one of {FORMATS}")
    return {**source, "format": fmt}


def local_copy(path: Path | str, fmt: str, *, sha256: str | None, content_sha256: str, url: str | None = None) -> dict:
    """Accept a file on this machine (a hand-placed copy, a ``path:`` source) when its *content* verifies.

    The content checksum identifies the data whatever the container: a re-zipped archive, scikit-learn's copy or a
    parquet of the same 20,640 rows pass it, and any changed value fails it. The archive ``sha256`` only identifies
    the published bytes, so a mismatch is logged, not refused. Returns a download record; raises :class:`DataError`.
    """
    from .download import sha256_file  # local import: parsing needs no network stack

    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    verify_content(parse_archive(path, fmt), content_sha256)
    digest = sha256_file(path)
    if sha256 and digest != sha256.lower():
        log.warning("%s: not the published archive (sha256 %s), accepted by its content checksum", path, digest)
    return {
        "url": url or path.resolve().as_uri(),
        "format": fmt,
        "path": str(path),
        "bytes": path.stat().st_size,
        "sha256": digest,
        "retrieved": "local file, identified by its content checksum",
    }


def fetch(sources: list[dict], dest_dir: Path | str, *, content_sha256: str, manual_dir: Path | str, **kw) -> dict:
    """The record of the first copy whose content verifies: every file in ``manual_dir`` (a source's file name, or
    any name ending .zip, .tgz, .csv or .parquet), then ``sources`` in order — local ``path:`` files read, ``url``
    ones downloaded with :func:`dpcost.data.download.download` (``kw``: its retry options), each checked by its
    archive sha256 when downloaded and by :func:`verify_content` always. Raises one one-line :class:`DownloadError`
    naming every failure, the manual folder and how to run without the housing data."""
    from .download import first_verified  # local import: parsing needs no network stack

    sources = [check_source(s, f"housing.sources.{k}") for k, s in enumerate(sources)]
    manual_dir, dest_dir = Path(manual_dir), Path(dest_dir)
    by_name = {s["filename"]: s for s in sources if "filename" in s}
    placed = sorted(manual_dir.iterdir()) if manual_dir.is_dir() else []
    local = [(f, by_name.get(f.name, {"format": format_of(f), "url": None})) for f in placed if f.is_file()]
    local = [(f, src) for f, src in local if src["format"] is not None]  # not a README or note beside a copy
    local += [(Path(s["path"]), s) for s in sources if "path" in s]

    def use_local(item):
        path, src = item
        rec = local_copy(
            path, src["format"], sha256=src.get("sha256"), content_sha256=content_sha256, url=src.get("url")
        )
        log.info("using %s (%s)", path, src["format"])
        return {**src, **rec}

    def use_download(src, dest, rec):
        verify_content(parse_archive(dest, src["format"]), content_sha256)
        return {**src, **rec}

    remote = [s for s in sources if "url" in s]
    record, failures = first_verified(local, remote, dest_dir, use_local=use_local, use_download=use_download, **kw)
    if record is not None:
        return record
    raise DownloadError(
        "no source delivered a verified file: " + "; ".join(failures) + ". Check the network and the "
        f"URLs, or place a copy in {manual_dir}/ (houses.zip, cal_housing.tgz, or a .csv/.parquet of the 9 columns "
        "or of scikit-learn's copy; accepted by its content checksum) or list it as a `path:` source (docs/usage.md, "
        '"Running without internet"); to run without the housing analysis, set `datasets: [snp, snp_logistic]`'
    )


def preprocess(df: pd.DataFrame, *, y_scale: float, center_y: bool) -> tuple[pd.DataFrame, dict]:
    """Design and response for the regression analysis of 004 §6.2, with a description of every step.

    X: the five covariates, each standardized with the *full-sample* mean and sd (as the paper does).
    y: median house value divided by ``y_scale`` (a public constant), minus its full-sample mean if ``center_y``.
    No intercept column: the standardized covariates have mean 0, so the slopes equal those of a fit with intercept
    on the full sample. None of this is private: full-sample means and sds are functions of the data.
    """
    X = df[COVARIATES].to_numpy(dtype=float)
    mean, sd = X.mean(axis=0), X.std(axis=0)
    if (sd == 0).any():
        raise DataError("a covariate is constant; cannot standardize")
    y = df[RESPONSE].to_numpy(dtype=float) / y_scale
    y_center = float(y.mean()) if center_y else 0.0
    out = pd.DataFrame((X - mean) / sd, columns=COVARIATES)
    out.insert(0, "y", y - y_center)
    meta = {
        "n": int(len(out)),
        "response": f"median house value / {y_scale:g}" + (" minus its full-sample mean" if center_y else ""),
        "y_scale": y_scale,
        "y_center": y_center,
        "intercept": False,
        "covariates": COVARIATES,
        "standardization": {
            "mean": dict(zip(COVARIATES, mean.tolist(), strict=True)),
            "sd": dict(zip(COVARIATES, sd.tolist(), strict=True)),
        },
        "private": False,
        "privacy_note": (
            "NOT PRIVATE: the design is standardized and the response centred with full-sample statistics, "
            "as in Cai, Wang & Zhang, Ann. Statist. 2021, §6.2. The DP guarantees of the estimators apply to the "
            "preprocessed records; the preprocessing itself releases information about the whole data set."
        ),
    }
    return out, meta


def prepare(manifest: dict, *, content_sha256: str | None, y_scale: float, center_y: bool) -> tuple[pd.DataFrame, dict]:
    """From a download manifest to the analysis table and its record: parse, verify the content, preprocess, and
    compute the truth of Cai, Wang & Zhang (2021) §6.2 — non-private OLS on all rows, against which every error is
    measured."""
    raw = parse_archive(manifest["path"], manifest["format"])
    digest = verify_content(raw, content_sha256)
    table, meta = preprocess(raw, y_scale=y_scale, center_y=center_y)
    meta["source"] = {k: manifest[k] for k in ("url", "format", "sha256", "bytes", "retrieved")}
    meta["content_sha256"] = digest
    X, y = table[COVARIATES].to_numpy(dtype=float), table["y"].to_numpy(dtype=float)
    beta = np.linalg.lstsq(X, y, rcond=None)[0]
    meta["truth"] = dict(zip(COVARIATES, beta.tolist(), strict=True))
    return table, meta
