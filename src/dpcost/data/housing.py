"""California housing (Pace & Barry 1997; 1990 census, 20,640 block groups): parsers, content check, preprocessing."""

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
RESPONSE = "value"
COVARIATES = ["income", "age", "population", "households", "total_rooms"]  # the five of 004 §6.2
FORMATS = ("statlib", "figshare")
ARCHIVE_NAMES = {"statlib": "houses.zip", "figshare": "cal_housing.tgz"}  # as the two publishers name them


def with_filename(source: dict) -> dict:
    """A source ``{url, format, sha256, filename?}`` with its file name, derived from the format when absent."""
    if source.get("filename"):
        return dict(source)
    if source.get("format") not in ARCHIVE_NAMES:
        raise DataError(f"unknown housing archive format {source.get('format')!r}; expected one of {FORMATS}")
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
    """Parse ``houses.zip`` (fmt "statlib") or ``cal_housing.tgz`` (fmt "figshare") into the canonical table.

    Returns 20,640 rows with :data:`COLUMNS`; count columns as int64. Raises :class:`DataError` on anything else.
    """
    path = Path(path)
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
    population, households), one line per row in file order (see ../shared/notes/data-sources.md)."""
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
