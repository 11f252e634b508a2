"""The preparation every ``kind: table`` analysis shares (docs/usage.md, "Your own data"): columns, levels,
transforms, the held-out split, standardization and the truth, from the raw table a source delivered
(:mod:`dpcost.data.table`).

Nothing here is private: the columns, the levels of the categorical columns (unless declared), the rows dropped, the
split's size, the checks that could refuse the table, the standardization and the truth are all computed from the
whole table. :func:`prepare` records each of them.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..errors import DataError

log = logging.getLogger(__name__)

TRANSFORMS = {"log": (np.log, 0.0, "> 0"), "log1p": (np.log1p, -1.0, "> -1")}
INDEX_COLUMNS = ("rownames", "", "Unnamed: 0")  # R's row names (Rdatasets' CSVs), a pandas index written to CSV
MAX_LEVELS = 50  # a categorical column with more levels is more likely an identifier than a factor


def _missing_column(name: str, column: str, table: pd.DataFrame, key: str) -> DataError:
    near = difflib.get_close_matches(column, [str(c) for c in table.columns], n=1)
    hint = f"; did you mean {near[0]!r}?" if near else f"; the columns are {[str(c) for c in table.columns][:20]}"
    return DataError(f"{name}.{key}: the table has no column {column!r}{hint}")


def _numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def prepare(
    table: pd.DataFrame, preparation: Mapping, *, name: str, max_m: int, rng: np.random.Generator
) -> tuple[pd.DataFrame, dict]:
    """The analysis table (``y``, the covariates, ``split``) and the record of every step, from the raw table.

    ``preparation``: ``response``; ``covariates`` (default: every other column but an index column); ``categorical``
    (numeric-coded columns to treat as factors; text and boolean columns always are); ``levels`` ({column: [levels]},
    declared in advance and so public: the first is the reference, a value outside them is refused, and d no longer
    depends on the data); ``transforms`` ({column: log | log1p}, before anything else); ``y_scale`` ("sd" or a
    public number); ``test_fraction`` (a held-out split drawn from ``rng``, for R²); ``max_levels``.

    Steps, all on the whole table (NOT private): rows with a missing value in a used column dropped and counted;
    transforms; each categorical column one-hot encoded from its declared levels or else the levels it holds, the
    first (declared, or in sorted order) the reference; numeric covariates standardized with their mean and sd,
    indicators centred at their mean (kept in units of the indicator, so no row has an entry above 1 in magnitude);
    the response centred and divided by its sd, or divided by a public ``y_scale`` and centred; truth = OLS on every
    row (no intercept needed: every column is centred). The record says which of d, the split's size and the refusals
    (:data:`REFUSALS`) read the data. Every error names the analysis ``name`` and the key to fix.
    """
    response = preparation["response"]
    covariates, forced, declared, transforms = _select_columns(table, preparation, name)
    data, rows_read, dropped = _drop_missing(table, [response, *covariates], preparation, name)
    del table  # the caller's last reference, when it passes the table it read: freed before the design is built
    _apply_transforms(data, transforms, name)
    max_levels = int(preparation.get("max_levels", MAX_LEVELS))
    columns, kinds, levels_of, encoded = _encode_levels(data, covariates, forced, declared, max_levels, name)
    n = len(data)
    if n < max_m + 4:
        raise DataError(
            f"{name}.m: the largest m is {max_m} but the table has {n} complete rows"
            + (f" ({dropped} dropped for missing values)" if dropped else "")
        )
    X, standardization = _standardized_design(data, columns, encoded, kinds)
    y = data[response].to_numpy(float)
    del data, encoded
    y, response_record = _standardized_response(y, preparation, name, transforms)
    if not (np.isfinite(X).all() and np.isfinite(y).all()):
        raise DataError(f"{name}: a value overflows after standardizing (a column of extreme magnitude)")
    split, test_split = _held_out_split(n, float(preparation.get("test_fraction", 0.0)), max_m, name, rng)
    beta = _truth(X, y, name)
    n_test = test_split["n_test"]
    meta = {
        "n": n,
        "n_train": n - n_test,
        "n_test": n_test,
        "rows_read": int(rows_read),
        "rows_dropped_missing": dropped,
        **response_record,
        "intercept": False,
        "covariates": [k for k, _, _ in columns],
        "kinds": kinds,
        "categorical": levels_of,
        "transforms": transforms,
    }
    return _record(X, y, beta, split, meta, standardization, test_split)


def _select_columns(table: pd.DataFrame, preparation: Mapping, name: str) -> tuple[list, list, dict, dict]:
    """(covariates, categorical, declared levels, transforms): the columns the preparation names, each checked
    against the table (a missing one with the nearest name) and against each other; the response numeric."""
    response = preparation["response"]
    if response not in table.columns:
        raise _missing_column(name, response, table, "response")
    if preparation.get("covariates"):
        covariates = list(preparation["covariates"])
        for c in covariates:
            if c not in table.columns:
                raise _missing_column(name, c, table, "covariates")
    else:
        index = [str(table.columns[0])] if str(table.columns[0]) in INDEX_COLUMNS else []
        covariates = [str(c) for c in table.columns if str(c) != response and str(c) not in index]
    if response in covariates:
        raise DataError(f"{name}.covariates: the response {response!r} is listed as a covariate")
    forced = list(preparation.get("categorical") or [])
    for c in forced:
        if c not in covariates:
            raise DataError(f"{name}.categorical: {c!r} is not one of the covariates")
    declared = {str(c): list(levels) for c, levels in (preparation.get("levels") or {}).items()}
    for c in declared:
        if c not in covariates:
            raise DataError(f"{name}.levels: {c!r} is not one of the covariates")
    transforms = dict(preparation.get("transforms") or {})
    for c in transforms:
        if c != response and c not in covariates:
            raise DataError(f"{name}.transforms: {c!r} is neither the response nor a covariate")
    if not _numeric(table[response]):
        raise DataError(
            f"{name}.response: column {response!r} is not numeric (dtype {table[response].dtype}); "
            "a regression needs a numeric response"
        )
    return covariates, forced, declared, transforms


def _drop_missing(table: pd.DataFrame, used: list, preparation: Mapping, name: str) -> tuple[pd.DataFrame, int, int]:
    """(data, rows read, rows dropped): one copy of the used columns' complete rows; a used column with no value in
    any row is refused (a list of the covariates to use leaves it out)."""
    response = used[0]
    missing = table[used].isna()
    empty = [str(c) for c in used if missing[c].all()]
    if empty and empty[0] == response:
        raise DataError(
            f"{name}.response: column {response!r} has no value in any of the {len(table)} rows; choose "
            f"another response"
        )
    if empty:
        raise DataError(
            f"{name}: column {empty[0]!r} has no value in any of the {len(table)} rows; leave it out"
            + (" (list the covariates to use)" if not preparation.get("covariates") else "")
        )
    keep = ~missing.to_numpy().any(axis=1)
    del missing
    data = table.loc[keep, used].reset_index(drop=True)
    rows_read, dropped = len(table), int((~keep).sum())
    if dropped:
        log.info("%s: %d of %d rows dropped for a missing value", name, dropped, rows_read)
    return data, rows_read, dropped


def _apply_transforms(data: pd.DataFrame, transforms: Mapping, name: str) -> None:
    """Each transform (:data:`TRANSFORMS`) applied in place, refused for a column outside its domain."""
    for c, kind in transforms.items():
        fn, bound, need = TRANSFORMS[kind]
        if not _numeric(data[c]):
            raise DataError(f"{name}.transforms: {c!r} is not numeric; {kind} needs numbers")
        bad = int((data[c].to_numpy(float) <= bound).sum())
        if bad:
            raise DataError(f"{name}.transforms: {kind} of {c!r} needs values {need}; {bad} rows are not")
        data[c] = fn(data[c].to_numpy(float))


def _encode_levels(
    data: pd.DataFrame, covariates: list, forced: list, declared: Mapping, max_levels: int, name: str
) -> tuple[list, dict, dict, dict]:
    """(columns, kinds, levels, encoded): the design's columns as (name, covariate, level or None) — a numeric
    covariate one column, a categorical one an indicator per level but its first (the reference) — each column's
    kind, each categorical covariate's levels and where they come from, and its codes (:func:`_encode`)."""
    columns, kinds, levels_of = [], {}, {}
    encoded = {}
    for c in covariates:
        col = data[c]
        if c in forced or c in declared or not _numeric(col):
            codes, distinct, counts = _encode(col)
            if c in declared:
                levels = [_as_level(v, col) for v in declared[c]]
                _check_declared(name, c, distinct, counts, levels)
            else:
                levels = sorted(distinct)
            if len(levels) > max_levels:
                raise DataError(
                    f"{name}.covariates: {c!r} has {len(levels)} levels (> max_levels = {max_levels}); "
                    "drop it or raise max_levels"
                )
            if len(levels) < 2:
                raise DataError(f"{name}.covariates: {c!r} is constant ({levels[0]!r} in every row); drop it")
            levels_of[c] = {
                "reference": levels[0],
                "levels": levels,
                "from": "declared in the config (public)" if c in declared else "read from the data",
            }
            encoded[c] = (codes, distinct)
            for lev in levels[1:]:
                columns.append((f"{c}={lev}", c, lev))
                kinds[f"{c}={lev}"] = "indicator"
        else:
            values = col.to_numpy(float)
            if np.ptp(values) == 0:
                raise DataError(f"{name}.covariates: {c!r} is constant ({values[0]:g} in every row); drop it")
            columns.append((c, c, None))
            kinds[c] = "numeric"
    return columns, kinds, levels_of, encoded


def _standardized_design(
    data: pd.DataFrame, columns: list, encoded: Mapping, kinds: Mapping
) -> tuple[np.ndarray, dict]:
    """(X, standardization): the design, every column centred at its mean, a numeric one divided by its sd (an
    indicator stays in its units), and the means and scales by column name."""
    names = [k for k, _, _ in columns]
    # column by column (Fortran order), written in place: each column's mean and sd are pairwise sums over its rows,
    # and the design is held once (a 5,000,000 x 21 table is 0.8 GB)
    X = np.empty((len(data), len(names)), order="F")
    for j, (_, c, lev) in enumerate(columns):
        if lev is None:
            X[:, j] = data[c].to_numpy(float)
        else:
            codes, distinct = encoded[c]
            np.equal(codes, distinct.index(lev), out=X[:, j], casting="unsafe")
    # column by column: X.std(axis=0) would hold a temporary the size of the design
    mean = np.array([X[:, j].mean() for j in range(X.shape[1])])
    sd = np.array([X[:, j].std() for j in range(X.shape[1])])
    scale = np.where([kinds[k] == "numeric" for k in names], sd, 1.0)
    X -= mean
    X /= scale
    standardization = {
        "mean": dict(zip(names, mean.tolist(), strict=True)),
        "scale": dict(zip(names, scale.tolist(), strict=True)),
    }
    return X, standardization


def _standardized_response(
    y: np.ndarray, preparation: Mapping, name: str, transforms: Mapping
) -> tuple[np.ndarray, dict]:
    """(y, record): the response centred and divided by its sd, or divided by the public ``y_scale`` and then
    centred; the record says which, with its centre and scale."""
    response = preparation["response"]
    by_sd = preparation.get("y_scale", "sd") == "sd"
    if by_sd:  # centred, then divided by its sd
        y_center, y_scale = float(y.mean()), float(y.std())
        if y_scale == 0:
            raise DataError(f"{name}.response: {response!r} is constant; nothing to regress")
        y = (y - y_center) / y_scale
    else:  # in public units first, then centred (y_center in those units)
        y_scale = float(preparation["y_scale"])
        y = y / y_scale
        y_center = float(y.mean())
        y = y - y_center
    text = (
        f"{response}"
        + (f", {transforms[response]}-transformed" if response in transforms else "")
        + (", minus its mean, divided by its sd" if by_sd else f" / {y_scale:g} (public), minus its mean")
    )
    return y, {"response": text, "y_center": y_center, "y_scale": y_scale}


def held_out_rows(n: int, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """The one held-out draw of the package: a mask of round(fraction · n) of n rows, the first of a permutation
    drawn from ``rng``. A table's preparation (its ``test_fraction``) and the real-data benchmark
    (:func:`dpcost.analysis.benchmark.held_out`) both hold rows out this way, each from its own stream."""
    test = np.zeros(n, dtype=bool)
    test[rng.permutation(n)[: int(round(fraction * n))]] = True
    return test


def _held_out_split(
    n: int, test_fraction: float, max_m: int, name: str, rng: np.random.Generator
) -> tuple[np.ndarray, dict]:
    """(split, record): round(test_fraction·n) rows drawn from ``rng`` held out ("test"), the others "train"; refused
    when fewer than the largest m plus the score attack's 4 rows are left to subsample."""
    test = held_out_rows(n, test_fraction, rng)
    n_test = int(test.sum())
    split = np.full(n, "train", dtype=object)
    split[test] = "test"
    if n - n_test < max_m + 4:
        raise DataError(
            f"{name}.m: the largest m is {max_m} but there are {n - n_test} rows to subsample ({n_test} "
            f"held out by test_fraction); the score attack needs 4 more outside the subsample"
        )
    record = {
        "fraction": test_fraction,
        "n_test": n_test,
        "drawn_from": "the run's seed and the analysis's name",
        "not_private": f"its size, round({test_fraction} x {n} complete rows), counts the complete rows",
    }
    return split, record


def _truth(X: np.ndarray, y: np.ndarray, name: str) -> np.ndarray:
    """OLS on every row, refused for a design of rank below its number of columns."""
    # lstsq's rank counts the singular values above eps·max(n, d)·σ_max: matrix_rank's threshold, without a second SVD
    beta, _, rank, _ = np.linalg.lstsq(X, y, rcond=None)
    if rank < X.shape[1]:
        raise DataError(
            f"{name}.covariates: the design has rank {rank} < {X.shape[1]} columns (a column is a "
            "combination of others); drop one"
        )
    return beta


def _record(
    X: np.ndarray,
    y: np.ndarray,
    beta: np.ndarray,
    split: np.ndarray,
    meta: dict,
    standardization: dict,
    test_split: dict,
) -> tuple[pd.DataFrame, dict]:
    """The analysis table (y, the design, split) and the preparation's record: ``meta`` (the rows, the response,
    the columns) completed with the standardization, the split, which of d and the refusals read the data, the
    privacy note and the truth."""
    names = meta["covariates"]
    levels_of = meta["categorical"]
    read = [c for c in levels_of if levels_of[c]["from"] == "read from the data"]
    schema = {
        "d": len(names),
        "d_public": not read,
        "levels_declared": [c for c in levels_of if c not in read],
        "read_from_data": read,
        "why": "d is public when every categorical column's levels are declared (levels:) or there are none; else "
        "the levels the data hold set d, and every release's length and the rules of the tuning-free methods read it",
    }
    out = pd.DataFrame(X, columns=names, copy=False)  # the design itself, not a second copy of it
    out.insert(0, "y", y)
    out["split"] = split
    meta = {
        **meta,
        "standardization": standardization,
        "test_split": test_split,
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
        # the yardstick of every cost (docs/methods.md, "The yardstick"): evaluation only, no estimator reads it
        "truth_sampling_variance": ols_sampling_variance(X, y, beta),
    }
    return out, meta


def read_used(path: str, preparation: dict) -> pd.DataFrame:
    """The raw table's columns the preparation uses (the response and the listed covariates), or all of them when
    the covariates are not listed or one is not in the file (prepare then names it, with the file's columns)."""
    import pyarrow.parquet as pq

    if not preparation.get("covariates"):
        return pd.read_parquet(path)
    used = [preparation["response"], *preparation["covariates"]]
    present = set(pq.read_schema(path).names)
    return pd.read_parquet(path, columns=used) if set(used) <= present else pd.read_parquet(path)


def prepare_file(
    path: str, preparation: Mapping, *, name: str, max_m: int, rng: np.random.Generator
) -> tuple[pd.DataFrame, dict]:
    """:func:`prepare` of the raw table at ``path`` (its used columns, :func:`read_used`): what the preprocess job runs
    and what the run checks at start-up before any job (:mod:`dpcost.run.data_check`)."""
    return prepare(read_used(path, preparation), dict(preparation), name=name, max_m=max_m, rng=rng)


def ols_sampling_variance(X: np.ndarray, y: np.ndarray, beta: np.ndarray) -> float:
    """tr Var(β̂) of the OLS fit β̂ = ``beta`` of (X, y), estimated by the heteroscedasticity-robust sandwich (HC0,
    White 1980): tr[(X'X)⁻¹ (Σ e_i² x_i x_i') (X'X)⁻¹], e = y − Xβ̂. The error of the full-data fit as an estimate
    of the superpopulation's coefficients, which the yardstick of a cost adds back (docs/proofs.md, "The
    yardstick")."""
    e = y - X @ beta
    A = X.T @ X
    Xe = X * e[:, None]
    meat = Xe.T @ Xe
    bread = np.linalg.inv(A)
    return float(np.trace(bread @ meat @ bread))


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


def _encode(col: pd.Series) -> tuple[np.ndarray, list[str], np.ndarray]:
    """(codes, distinct, counts): a categorical column's values as the encoding writes them (each value's str; a
    boolean's "True"), as the distinct strings, each row's index among them and how many rows hold each — from the
    column's distinct values, not a string per row."""
    codes, uniques = pd.factorize(col, sort=False)
    index: dict[str, int] = {}  # values that write alike (1 and "1") are one level; a dict: an identifier column's
    # millions of distinct values are mapped in linear time, then refused by max_levels
    to_distinct = np.array([index.setdefault(str(u), len(index)) for u in uniques], dtype=np.intp)
    codes = to_distinct[codes]
    return codes, list(index), np.bincount(codes, minlength=len(index))


def _check_declared(name: str, column: str, distinct: list[str], counts: np.ndarray, levels: list[str]) -> None:
    """At least two distinct declared levels; every value of the column (``distinct``, held by ``counts`` rows) one
    of them, and every one occurring (an indicator column of zeros would make the design rank-deficient): one line
    naming what to fix otherwise."""
    if len(levels) < 2 or len(set(levels)) < len(levels):
        raise DataError(f"{name}.levels.{column}: give at least two distinct levels, got {levels}")
    known = set(levels)
    unseen = sorted(v for v in distinct if v not in known)
    if unseen:
        count = int(sum(k for v, k in zip(distinct, counts, strict=True) if v not in known))
        raise DataError(
            f"{name}.levels.{column}: {count} rows hold values not declared, e.g. {unseen[:3]}; add them "
            "to the levels or drop those rows"
        )
    absent = [lev for lev in levels if lev not in set(distinct)]
    if absent:
        raise DataError(f"{name}.levels.{column}: declared level(s) {absent[:3]} occur in no complete row; remove them")


def preprocessing_notes(meta: Mapping) -> list[str]:
    """What a preprocessing record (preprocessing.json) says is not private: its note and, for a table
    (:func:`prepare`), the held-out split's size, the checks that could have refused the table and
    a dimension d read from the data."""
    out = [meta["privacy_note"]]
    split = meta.get("test_split") or {}
    if split.get("n_test"):
        out.append(f"NOT PRIVATE: the held-out split holds {split['n_test']} rows: {split['not_private']}")
    if meta.get("refusals"):
        out.append(
            "NOT PRIVATE: the whole table passed the checks that would have refused it (a refusal depends on "
            "the data): " + "; ".join(meta["refusals"])
        )
    schema = meta.get("schema")
    if schema and not schema["d_public"]:
        out.append(
            f"NOT PRIVATE: d = {schema['d']} was read from the data (the levels of "
            f"{', '.join(schema['read_from_data'])}): every release's length shows it, and the rules of the "
            "tuning-free methods read it; declare the levels (levels:) to make it public"
        )
    return out
