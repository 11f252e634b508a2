"""Hostile and bad input, as a table: each case runs the real workflow and must end with a non-zero exit and one
clear line, no traceback, and nothing half-written left looking valid. Completed outputs of other jobs survive."""

import hashlib
import json

import numpy as np
import pytest

from geo_synth import make_series, write_series_matrix
from support import LoopbackServer, free_port, statlib_zip_bytes
from workflow_runner import NO_EXTRAS, TINY_MAP, config_error, run_workflow

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def mirror(housing_df, housing_archives, tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    with_nan = housing_df.copy()
    with_nan["income"] = with_nan["income"].astype(float)
    with_nan.loc[123, "income"] = np.nan
    series = make_series(n_snps=300, n_average=241, n_low=146, missing_rate=0.0, seed=5)
    snp = write_series_matrix(d / "m.txt.gz", series, "ab").read_bytes()
    with LoopbackServer() as srv:
        srv.add("/h/houses.zip", housing_archives["statlib"][0])
        srv.add("/h/nan.zip", statlib_zip_bytes(with_nan))
        srv.add("/h/empty.zip", b"")
        srv.add("/h/page.zip", b"<!DOCTYPE html><html><body><h1>503 Service Temporarily Unavailable</h1></body></html>")
        for folder, body in (("ok", snp), ("trunc", snp[: len(snp) // 2])):
            srv.add(f"/s/{folder}/", b'<a href="GSE106818_series_matrix.txt.gz">GSE106818_series_matrix.txt.gz</a>')
            srv.add(f"/s/{folder}/GSE106818_series_matrix.txt.gz", body)
        yield srv


def housing_cfg(url, sha256=None, **housing):
    src = {"url": url, "format": "statlib", "filename": "houses.zip"}
    if sha256:
        src["sha256"] = sha256
    return {
        **NO_EXTRAS,  # intervals and targeted attacks: test_small_config.py
        "datasets": ["housing"],
        "reps": 3,
        "download": {"max_tries": 2, "backoff": 0.0, "timeout": 10},
        # the config's constants as written: these runs are about input handling, not tuning
        "housing": {"sources": [src], "m": [200, 2000], "tuning_mode": "fixed", "map": TINY_MAP["housing"], **housing},
    }


def snp_cfg(url, **snp):
    return {
        "datasets": ["snp"],
        "reps": 3,
        "download": {"max_tries": 2, "backoff": 0.0, "timeout": 10},
        "snp": {"matrix_url": url, "n_snps": 100, "m": [10, 40], "s": 5, "map": TINY_MAP["snp"], **snp},
    }


# (case, override(base, sha), dry run?, expected text in the one error line)
CASES = [
    (
        "epsilon <= 0",
        lambda b, h: {"housing": {"privacy": {"epsilon": 0}}},
        True,
        "config error: housing.privacy.epsilon: 0 is less than or equal to the minimum of 0",
    ),
    ("epsilon < 0", lambda b, h: {"snp": {"privacy": {"epsilon": -0.5}}}, True, "config error: snp.privacy.epsilon"),
    ("delta <= 0", lambda b, h: {"housing": {"privacy": {"delta": 0}}}, True, "config error: housing.privacy.delta"),
    ("delta >= 1", lambda b, h: {"snp": {"privacy": {"delta": 1.0}}}, True, "config error: snp.privacy.delta"),
    (
        "delta formula that does not parse",
        lambda b, h: {"housing": {"privacy": {"delta": "10/n^^1.1"}}},
        True,
        "delta formula '10/n^^1.1' does not parse",
    ),
    (
        "m larger than the data",
        lambda b, h: {"housing": {"m": [100, 30000]}},
        True,
        "housing.m.1: m=30000 must lie between 2 and the 20640 rows of the data",
    ),
    (
        "m larger than the smaller group",
        lambda b, h: {"snp": {"m": [10, 147]}},
        True,
        "snp.m.1: m=147 must lie between 2 and the 146 samples of the smaller group",
    ),
    ("m < 2", lambda b, h: {"housing": {"m": [1, 100]}}, True, "housing.m.0: 1 is less than the minimum of 2"),
    ("s > d", lambda b, h: {"snp": {"n_snps": 10, "s": 20}}, True, "sparsity s=20 exceeds the number of SNPs kept"),
    ("reps < 1", lambda b, h: {"reps": 0}, True, "config error: reps: 0 is less than the minimum of 1"),
    (
        "paper Gaussian at eps >= 1, on_invalid: refuse",
        lambda b, h: {"housing": {"calibration": "paper", "privacy": {"epsilon": 2}}},
        True,
        "proven only for epsilon < 1 (got epsilon=2)",
    ),
    ("NaN in the data", lambda b, h: housing_cfg(b + "/h/nan.zip"), False, "table holds NaN or infinite values"),
    ("empty file", lambda b, h: housing_cfg(b + "/h/empty.zip"), False, "not a readable statlib archive"),
    (
        "HTML error page instead of data",
        lambda b, h: housing_cfg(b + "/h/page.zip"),
        False,
        "not a readable statlib archive",
    ),
    (
        "checksum mismatch",
        lambda b, h: housing_cfg(b + "/h/houses.zip", "0" * 64),
        False,
        "sha256 mismatch: expected " + "0" * 64,
    ),
    (  # said at start-up, before any job, in one message (its lines: test_offline.py; the download job's own line
        # when the check is off: test_workflow.py)
        "all mirrors down",
        lambda b, h: housing_cfg(f"http://127.0.0.1:{free_port()}/houses.zip", h),
        False,
        "missing data: the targets need 1 data set that can be neither found on this machine nor downloaded",
    ),
    ("truncated gzip", lambda b, h: snp_cfg(b + "/s/trunc/"), False, "gzip stream is truncated"),
]


def test_the_table_covers_the_issue_list():
    assert len(CASES) == 17


# the config's cases (and the missing data) are checked as the workflow checks them at start-up, without Snakemake
# (dpcost.run.startup; test_config.py and test_offline.py start it for one case of each kind), but for the refusal of
# an estimator's own check
THROUGH_SNAKEMAKE = {"paper Gaussian at eps >= 1, on_invalid: refuse"}


@pytest.mark.parametrize("case", [c[0] for c in CASES])
def test_hostile_input(case, mirror, housing_archives, tmp_path):
    _, override, dry, expected = next(c for c in CASES if c[0] == case)
    if dry and case not in THROUGH_SNAKEMAKE:
        line = config_error(override(mirror.base, housing_archives["statlib"][1]))
        assert line.startswith("config error: ") and expected in line, line
        return
    if case == "all mirrors down":  # the start-up check of the data, without Snakemake (test_offline.py starts it)
        message = config_error(override(mirror.base, housing_archives["statlib"][1]), data=tmp_path)
        assert message.startswith("missing data: ") and expected in message.splitlines()[0], message
        assert not list(tmp_path.glob("resources/*/*.json"))
        return
    res = run_workflow(tmp_path, override(mirror.base, housing_archives["statlib"][1]), *(["-n"] if dry else []))
    assert res.returncode != 0
    assert "Traceback" not in res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith(("config error: ", "ERROR [", "missing data: "))]
    assert len(lines) == 1 and expected in lines[0], res.stderr[-2000:]
    # nothing half-written looks valid: no manifest, no results table
    assert not list(tmp_path.glob("resources/*/*.json")) and not list(tmp_path.glob("results/*/*.parquet"))


def _digests(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("*")) if p.is_file()}


# Both runs ask for the same housing tables (and the second for SNP's): what housing completed in the first must
# survive the second, whose SNP download fails. The map, attack and plot jobs would only add more of the same.
HOUSING_TABLES = [
    "results/housing/errors.parquet",
    "results/housing/summary.csv",
    "results/housing/privacy_ledger.json",
]


def test_a_failing_dataset_leaves_completed_outputs_untouched(mirror, housing_archives, tmp_path):
    good = housing_cfg(mirror.base + "/h/houses.zip", housing_archives["statlib"][1], methods=["ols", "adassp"])
    assert run_workflow(tmp_path, good, *HOUSING_TABLES).returncode == 0
    before = _digests(tmp_path / "results/housing")
    assert {"errors.parquet", "summary.csv", "privacy_ledger.json", "data.parquet"} <= set(before)
    both = {**good, **snp_cfg(mirror.base + "/s/trunc/"), "datasets": ["housing", "snp"]}
    res = run_workflow(tmp_path, both, *HOUSING_TABLES, "results/snp/errors.parquet")
    assert res.returncode != 0 and "gzip stream is truncated" in res.stderr
    assert _digests(tmp_path / "results/housing") == before
    assert not (tmp_path / "results/snp/genotypes.parquet").exists()


def test_outside_validity_with_on_invalid_warn_runs_and_says_so(mirror, housing_archives, tmp_path):
    cfg = housing_cfg(
        mirror.base + "/h/houses.zip",
        housing_archives["statlib"][1],
        calibration="paper",
        privacy={"epsilon": 2, "delta": "10/n^1.1"},
        methods=["ols", "noisy_truncated_ols"],
    )
    cfg["on_invalid"] = "warn"
    res = run_workflow(tmp_path, cfg, "results/housing/privacy_ledger.json")  # the estimates and their ledger
    assert res.returncode == 0, res.stderr[-2000:]
    ledger = json.loads((tmp_path / "results/housing/privacy_ledger.json").read_text())
    assert any("PRIVACY WARNING" in w for w in ledger["methods"]["noisy_truncated_ols"]["warnings"])
    assert "PRIVACY WARNING" in (tmp_path / "logs/housing/estimate_noisy_truncated_ols.log").read_text()
