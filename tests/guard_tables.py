"""The guard's cases, its reference tables and their comparison (tests/integration/test_guard.py explains why).

A case is ``dataset/calibration/method``: a small run of one default method (20 repetitions) on the real housing data
(m = 200, 2000) or on a fixed synthetic genotype matrix (m = 20, 40). Its reference table is
``tests/data/guard/<dataset>-<calibration>-<method>.csv``, every column of the run's table, floats written with 17
significant digits (so they read back to the same doubles).

As a script (from the repository's root, with the package importable):

    python tests/guard_tables.py --repin            # re-run every case and rewrite every reference table
    python tests/guard_tables.py --repin KEY ...    # only these cases, e.g. housing/tight/ssp
    python tests/guard_tables.py [KEY ...]          # compare (all cases by default); prints a JSON report

The JSON report — the OpenBLAS kernels threadpoolctl sees, each case's mismatches, and with ``--plant KEY`` the
mismatches of that case when one noise value of its first release is moved by one grid step — is what the
two-kernel test reads from its subprocesses.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
REFERENCE_DIR = TESTS / "data" / "guard"

# Kernel-to-kernel differences measured on the 37 tables (every float column, 5 OpenBLAS kernels, 1 and 2 threads,
# numpy's SIMD dispatch down to AVX2 and SSE4.2): at most 1.9e-12 relative. One noise value moved by one grid step
# (scale / 2^20) moved a table, in 43 of the 47 tries where it moved it at all, by 2.9e-9 to 3.3e-5 relative (the
# other 4, damped by later steps of a descent, by 6e-16 to 2e-10); moved by a whole noise scale, by 1e-5 to 1. The
# reasoning and the numbers: tests/integration/test_guard.py.
RTOL = 1e-9
# compared exactly: any column that is not float, and these float columns (counts, NaN where they do not apply)
EXACT_FLOAT_COLUMNS = ("support_recovered",)

# the cases pinned since the package was reshaped (AdaOPS under the tight calibration only, as it was pinned then)
_HOUSING = "ols noisy_gd noisy_truncated_ols ssp adassp joint_ssp precond_gd subsample_aggregate ops adaops objpert"
_HOUSING += " noisy_sgd sheffet_jl diffprivlib opendp_ssp"
CASES = [
    f"{dataset}/{calibration}/{method}"
    for calibration in ("tight", "paper")
    for dataset, methods in (
        ("housing", _HOUSING.split()),
        ("snp", ["sample_mean", "top_s_mean", "peeling", "frank_wolfe"]),
    )
    for method in methods
    if (calibration, method) != ("paper", "adaops")
]


def reference_path(key: str) -> Path:
    return REFERENCE_DIR / (key.replace("/", "-") + ".csv")


def designs() -> dict:
    """{dataset: (design, m grid, params)}: the real housing design as the workflow prepares it, and a genotype
    matrix of two groups (60 and 50 individuals, 300 SNPs) drawn from a fixed seed."""
    from dpcost.analysis.designs import RegressionDesign, TwoGroupMeanDesign
    from dpcost.estimators.ols import ols

    from support import housing_design

    X, y, _, _ = housing_design()
    g = np.random.default_rng(7)
    A = g.binomial(2, g.uniform(0.05, 0.5, 300), size=(60, 300)).astype(np.int8)
    B = g.binomial(2, g.uniform(0.05, 0.5, 300), size=(50, 300)).astype(np.int8)
    return {
        "housing": (RegressionDesign(X, y, ols(X, y)), [200, 2000], {}),
        "snp": (TwoGroupMeanDesign(A, B, A.mean(0) - B.mean(0), 20), [20, 40], {"s": 20}),
    }


def run_case(key: str, designs: dict) -> pd.DataFrame:
    """The table of ``key``'s run: one row per (m, rep), every column :func:`dpcost.analysis.engine.run_grid` gives."""
    import yaml

    from dpcost.analysis.engine import run_grid
    from dpcost.dp.privacy import Privacy
    from dpcost.estimators.registry import METHODS
    from dpcost.run.config import with_defaults

    dataset, calibration, name = key.split("/")
    config = with_defaults(yaml.safe_load((REPO / "config/config.yaml").read_text()))
    design, m_grid, params = designs[dataset]
    method = METHODS[name]
    table, _ = run_grid(
        design,
        method,
        tuning=method.resolve_tuning(config[dataset]["tuning"].get(name)),
        params=params,
        m_grid=m_grid,
        reps=20,
        seed=config["seed"],
        privacy=Privacy(0.5, "10/n^1.1", calibration, on_invalid="warn"),
        dataset=dataset,
    )
    return table.reset_index(drop=True)


def write_reference(key: str, table: pd.DataFrame) -> Path:
    path = reference_path(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(path, index=False, float_format="%.17g", lineterminator="\n")
    return path


def read_reference(key: str) -> pd.DataFrame:
    return pd.read_csv(reference_path(key))


def mismatches(table: pd.DataFrame, reference: pd.DataFrame, rtol: float = RTOL, limit: int = 5) -> list[str]:
    """What differs between ``table`` and its ``reference``, in words (empty when they agree).

    Every column of the reference must be in the table (a column the table has beyond them is not compared until
    the reference is re-pinned) with as many rows. Float columns agree when |a - b| <= rtol * max(|a|, |b|) and NaN
    stands where NaN stands; every other column (method, m, rep, abstained, ...) and :data:`EXACT_FLOAT_COLUMNS` must
    be equal. At most ``limit`` rows are named per column."""
    out = [f"column {c!r} is missing" for c in reference.columns if c not in table.columns]
    if len(table) != len(reference):
        return out + [f"{len(table)} rows, the reference has {len(reference)}"]
    where = [f"row {i}" for i in range(len(reference))]
    if {"m", "rep"} <= set(reference.columns):
        where = [f"m={m}, rep={r}" for m, r in zip(reference["m"], reference["rep"], strict=True)]
    for c in reference.columns:
        if c not in table.columns:
            continue
        ref, new = reference[c], table[c]
        if pd.api.types.is_float_dtype(ref) and c not in EXACT_FLOAT_COLUMNS:
            a, b = ref.to_numpy(dtype=float), new.to_numpy(dtype=float)
            with np.errstate(invalid="ignore", divide="ignore"):
                bad = (np.isnan(a) != np.isnan(b)) | (np.abs(a - b) > rtol * np.maximum(np.abs(a), np.abs(b)))
                rel = np.abs(a - b) / np.maximum(np.abs(a), np.abs(b))
            out += [
                f"{c} at {where[i]}: {float(b[i])!r}, reference {float(a[i])!r}"
                f" (relative difference {rel[i]:.2e} > {rtol:g})"
                for i in np.flatnonzero(bad)[:limit]
            ]
        else:
            a, b = ref.to_numpy(dtype=object), new.to_numpy(dtype=object)
            bad = np.array([not (x == y or (pd.isna(x) and pd.isna(y))) for x, y in zip(a, b, strict=True)], bool)
            out += [
                f"{c} at {where[i]}: {b[i]!r}, reference {a[i]!r} (compared exactly)"
                for i in np.flatnonzero(bad)[:limit]
            ]
        if bad.sum() > limit:
            out.append(f"{c}: {bad.sum() - limit} more rows differ")
    return out


def planted_run(key: str, designs: dict) -> pd.DataFrame:
    """``key``'s table with one noise value moved by one grid step: the first element of the run's first exact
    release (m = the first m, rep 0) gets scale / 2^20 more. The smallest change of a noise draw there is."""
    from dpcost.dp import samplers

    original = samplers.GridNoise._release
    count = [0]

    def release(self, value):
        out = original(self, value)
        count[0] += 1
        if count[0] == 1:
            out = np.array(out, dtype=float, copy=True)
            out.flat[0] += self.step
        return out

    samplers.GridNoise._release = release
    try:
        table = run_case(key, designs)
    finally:
        samplers.GridNoise._release = original
    if count[0] == 0:
        raise AssertionError(f"{key} made no exact release: nothing was planted")
    return table


def blas_kernels() -> list[str]:
    """The architecture of every OpenBLAS threadpoolctl finds loaded (numpy's and scipy's), with its thread count."""
    import threadpoolctl

    return sorted(
        f"{i['architecture']}, {i['num_threads']} threads"
        for i in threadpoolctl.threadpool_info()
        if i["internal_api"] == "openblas"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("keys", nargs="*", help="cases (dataset/calibration/method); all by default")
    parser.add_argument("--repin", action="store_true", help="rewrite the reference tables of these cases")
    parser.add_argument("--plant", metavar="KEY", help="also run KEY with one noise value moved by one grid step")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.keys) - set(CASES))
    if unknown:
        parser.error(f"unknown cases {unknown}; the cases are {CASES}")
    keys = args.keys or CASES
    d = designs()
    if args.repin:
        for key in keys:
            print(write_reference(key, run_case(key, d)).relative_to(REPO))
        return 0
    report = {"mismatches": {key: mismatches(run_case(key, d), read_reference(key)) for key in keys}}
    if args.plant:
        report["planted"] = mismatches(planted_run(args.plant, d), read_reference(args.plant))
    report["blas"] = blas_kernels()  # after the runs: scipy loads its own OpenBLAS when a method first needs it
    print(json.dumps(report, indent=1))
    return 1 if any(report["mismatches"].values()) else 0


if __name__ == "__main__":
    sys.path.insert(0, str(TESTS))
    sys.exit(main())
