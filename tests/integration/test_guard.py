"""The guard of the package reshape: a small run of every default method, compared with reference tables kept here.

The 37 cases (tests/guard_tables.py, ``CASES``): every default method on the real housing data (m = 200, 2000) and
on a fixed synthetic genotype matrix (m = 20, 40), 20 repetitions, both calibrations. Each case's table is compared
with its reference, ``tests/data/guard/<dataset>-<calibration>-<method>.csv`` (every column of the table, floats to
17 significant digits): the discrete columns — method, m, rep, abstained, support_recovered, and any other column
that is not float — must be equal; the float columns (ε, δ, error, r2, rmse) must agree to a relative 1e-9
(|a − b| ≤ 1e-9 · max(|a|, |b|), NaN where NaN). A column added to the tables is not compared until a re-pin writes it.
The references are the tables of the run the last digests were taken on (the 16-hex sha256 digests of raw float
bytes this file pinned before: each reference reproduces its digest). A changed table is a bug of a refactoring,
not a new baseline; a change that alters the noise draws on purpose re-pins and says why in its commit:

    python tests/guard_tables.py --repin [dataset/calibration/method ...]

(from the repository's root; all cases by default), then ``git diff --stat tests/data/guard`` shows which tables
moved. ``python tests/guard_tables.py [case ...]`` compares without writing and prints the mismatches.

Why a tolerance, and why 1e-9. The digests pinned the last bits of one BLAS kernel: under OPENBLAS_CORETYPE=Haswell
OPENBLAS_L2_SIZE=512 every case failed. Measured against the reference run (OpenBLAS 0.3.31/0.3.30 of numpy 2.4 and
scipy 1.17, kernel SkylakeX as threadpoolctl reports it, 2 threads), the largest relative difference of any float
value of the 37 tables was
  Haswell (L2 512 KB)  9.0e-13 (r2; error 2.9e-13, OLS's error 2.3e-14)
  Sandybridge          1.9e-12 (r2; error 9.9e-13)
  Nehalem              6.8e-13 (r2; error 2.0e-13)
  Prescott (Katmai)    1.9e-12 (r2; error 5.6e-13)
  1 thread             0 (bit-identical)
and with numpy's own SIMD dispatch capped too (NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" with Haswell:
an AVX2 machine; "X86_V3" added, with Nehalem: an SSE4.2 machine) as with the kernel alone, but noisy SGD's r2 up to
8.6e-13. The largest differences are diffprivlib's (≤ 1.9e-12), then SSP's (≤ 3.2e-13); ε and δ were bit-identical,
and so was every discrete value: no grid rounding of the exact samplers flipped and no selection changed.

What the guard must still see is a changed noise draw. Moving one noise value by one grid step (scale/2^20, the
smallest change a draw can make) in the 1st, 7th or 33rd exact release of a housing case's run moved its table, in
47 of 63 tries, by 2.9e-9 to 3.3e-5 relative (mostly 1e-8 to 1e-6) in 43 of them; in 4 by less (2.0e-10 and 2.9e-11 for
a step early in noisy GD, 7.5e-15 and 6.3e-16 for precond GD, where later steps damp it below rounding). In the other
16 the table did not move at all (AdaSSP's first release, AdaOPS's, Sheffet's test: releases the table's numbers
do not follow continuously), nor in the SNP selections (peeling, Frank–Wolfe), which one grid step does not flip.
Moving a value by one whole noise scale moved the tables, where it moved them at all, by 1e-5 to 1 relative. 1e-9
is 500× the largest kernel difference measured, and below 43 of the 47 one-step moves that moved a table at all; no
tolerance above kernel noise sees the damped ones.

What can still move with the kernel: a grid rounding round(f / g) flips when f / g lies within its last-bit
difference of a half-step. Over the 37 tables the released values sum to ~2.4e11 grid steps, so with pre-noise
values differing by ~1e-16 to 1e-15 relative the expected number of flips per change of kernel is 5e-5 to 5e-4. One flip
shows as one row of one case differing by ~1e-7 (a one-step move, above). Such a row is not a re-pin: check that
it is one row and that the difference is one grid step of that release.

test_the_guard_holds_under_two_blas_kernels runs five cases in subprocesses under two OpenBLAS kernels this CPU
supports (the variable is read when numpy loads OpenBLAS, hence a subprocess), and in the same processes plants a
one-step move in SSP's first release, which the comparison must report in that row and no other.
"""

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dpcost

import guard_tables
from guard_tables import CASES, RTOL, mismatches, read_reference, run_case
from support import HOUSING_PARQUET, QUICK_TIMEOUT, REPO

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def designs():
    return guard_tables.designs()


@pytest.mark.parametrize("key", CASES)
def test_tables_match_the_reference(key, designs):
    found = mismatches(run_case(key, designs), read_reference(key))
    assert not found, f"{key} differs from tests/data/guard (rtol {RTOL:g}):\n" + "\n".join(found)


def test_the_comparison_is_exact_on_discrete_columns_and_relative_on_floats():
    ref = read_reference("snp/tight/peeling")
    assert mismatches(ref.copy(), ref) == []
    near = ref.copy()
    near["error"] *= 1 + RTOL / 2
    assert mismatches(near, ref) == []
    far = ref.copy()
    far.loc[3, "error"] *= 1 + 2 * RTOL
    assert [s.split(":")[0] for s in mismatches(far, ref)] == ["error at m=20, rep=3"]
    for column, change in [("support_recovered", 1), ("rep", 1), ("m", 1), ("abstained", True)]:
        bad = ref.copy()
        bad.loc[5, column] = bad.loc[5, column] + change if column != "abstained" else not bad.loc[5, column]
        assert len(mismatches(bad, ref)) == 1, column
    bad = ref.copy()
    bad.loc[0, "method"] = "peeling2"
    assert mismatches(bad, ref)[0].startswith("method at m=20, rep=0")
    bad = ref.copy()
    bad.loc[2, "delta"] = np.nan
    assert len(mismatches(bad, ref)) == 1
    assert mismatches(ref.drop(columns="error"), ref) == ["column 'error' is missing"]
    assert "rows" in mismatches(ref.iloc[:-1], ref)[0]


# OpenBLAS kernels (OPENBLAS_CORETYPE) by the CPU flag they need, newest first: the guard runs under the first two
# this CPU has, neither of which is the kernel OpenBLAS picks on the machines the references were taken on (SkylakeX)
KERNELS = [("Haswell", "avx2"), ("Sandybridge", "avx"), ("Nehalem", "sse4_2")]
# OLS: the non-private fit, BLAS alone (the case the digests failed on first); SSP: noise on sufficient statistics,
# one grid rounding per entry, and the case the planted step goes into; noisy SGD: dozens of noisy steps per run,
# where a difference could grow; diffprivlib: the largest kernel differences measured (a peer library's ill-conditioned
# solve); peeling: a private selection (support_recovered) on the genotype matrix
TWO_KERNEL_CASES = ["housing/tight/ols", "housing/tight/ssp", "housing/tight/noisy_sgd", "housing/tight/diffprivlib"]
TWO_KERNEL_CASES += ["snp/tight/peeling"]
PLANTED = "housing/tight/ssp"


def _kernels() -> list[str]:
    if platform.machine() not in ("x86_64", "AMD64"):
        return []
    flags = set()
    for line in Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []:
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    return [kernel for kernel, flag in KERNELS if flag in flags][:2]


def test_the_guard_holds_under_two_blas_kernels(tmp_path):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    if not any(i["internal_api"] == "openblas" for i in threadpoolctl.threadpool_info()):
        pytest.skip("numpy is not linked to OpenBLAS here: OPENBLAS_CORETYPE chooses nothing")
    if not HOUSING_PARQUET.exists():
        pytest.skip(f"real housing data not found at {HOUSING_PARQUET} (set DPCOST_SHARED to the shared/ folder)")
    kernels = _kernels()
    if len(kernels) < 2:
        pytest.skip(f"needs an x86-64 CPU with two of the OpenBLAS kernels {KERNELS} (Linux /proc/cpuinfo)")
    path = os.pathsep.join(
        [str(Path(dpcost.__file__).parents[1]), str(REPO / "tests"), os.environ.get("PYTHONPATH", "")]
    )
    reports = {}
    # the second kernel also runs OpenBLAS on one thread (the references were taken on two)
    for kernel, extra in zip(kernels, [{"OPENBLAS_L2_SIZE": "512"}, {"OPENBLAS_NUM_THREADS": "1"}], strict=True):
        env = {**os.environ, "PYTHONPATH": path, "OPENBLAS_CORETYPE": kernel, **extra}
        out = subprocess.run(
            [sys.executable, str(REPO / "tests/guard_tables.py"), *TWO_KERNEL_CASES, "--plant", PLANTED],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=QUICK_TIMEOUT,
        )
        assert out.stdout.strip(), out.stderr[-3000:]
        reports[kernel] = report = json.loads(out.stdout)
        threads = extra.get("OPENBLAS_NUM_THREADS")
        assert report["blas"] and all(b.startswith(f"{kernel}, ") for b in report["blas"]), (kernel, report["blas"])
        assert threads is None or all(b.endswith(f", {threads} threads") for b in report["blas"]), report["blas"]
        assert report["mismatches"].keys() == set(TWO_KERNEL_CASES)
        assert not any(report["mismatches"].values()), (kernel, report["mismatches"])
        assert out.returncode == 0, out.stderr[-3000:]
        # one grid step in the first release (m = 200, rep 0): caught there and nowhere else
        assert report["planted"], f"under {kernel} the comparison missed a noise value moved by one grid step"
        assert {s.split(":")[0].split(" at ")[1] for s in report["planted"]} == {"m=200, rep=0"}, report["planted"]
