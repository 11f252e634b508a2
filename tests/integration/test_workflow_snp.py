"""End to end, SNP branch: `snakemake` lists a loopback GEO matrix/ folder, downloads split parts, parses, estimates."""

import json

import numpy as np
import pandas as pd
import pytest

from geo_synth import make_series, write_series_matrix
from support import LoopbackServer
from workflow_runner import TINY_MAP, run_workflow

pytestmark = pytest.mark.e2e

M = [10, 40, 120]
REPS = 8
N_SNPS = 150
METHODS = ["sample_mean", "top_s_mean", "peeling", "frank_wolfe"]
LOGISTIC_M = [40, 120, 360]
NAMES = ["GSE106818-GPL6801_series_matrix-1.txt.gz", "GSE106818-GPL6801_series_matrix-2.txt.gz"]


def index_html(names):
    rows = "".join(f'<a href="{n}">{n}</a>  20-Nov-2017 10:00  12M\n' for n in names)
    return f"<html><head><title>Index of /geo/series/GSE106nnn/GSE106818/matrix</title></head><body><pre>{rows}</pre>"


@pytest.fixture(scope="module")
def mirror(tmp_path_factory):
    d = tmp_path_factory.mktemp("geo")
    series = make_series(n_snps=500, n_average=241, n_low=146, missing_rate=0.0005, seed=3, signal=15, shift=0.3)
    p1 = write_series_matrix(d / "p1.gz", series, "ab", columns=slice(0, 200))
    p2 = write_series_matrix(d / "p2.gz", series, "ab", columns=slice(200, None))
    cn = write_series_matrix(d / "cn.gz", series, values=np.full(series.B.shape, "0.125", dtype=object))
    with LoopbackServer() as srv:
        srv.add("/ok/", index_html([*NAMES, "GSE106818_family.soft.gz"]).encode())
        srv.add("/ok/" + NAMES[0], p1.read_bytes(), actions=["status:503", "ok"])
        srv.add("/ok/" + NAMES[1], p2.read_bytes())
        srv.add("/cn/", index_html(["GSE106818_series_matrix.txt.gz"]).encode())
        srv.add("/cn/GSE106818_series_matrix.txt.gz", cn.read_bytes())
        srv.add("/empty/", index_html(["GSE106818_family.soft.gz"]).encode())
        yield srv


def override(url, datasets=("snp",), **snp):
    return {
        "datasets": list(datasets),
        "reps": REPS,
        "download": {"max_tries": 2, "backoff": 0.0, "timeout": 10},
        "snp": {
            "matrix_url": url,
            "n_snps": N_SNPS,
            "m": M,
            "s": 10,
            "tuning": {"frank_wolfe": {"T": 10}},
            "map": TINY_MAP["snp"],
            **snp,
        },
        "snp_logistic": {"m": LOGISTIC_M, "s": 5, "truth_fit": {"T": 100, "eta0": 0.5}},
    }


@pytest.fixture(scope="module")
def run(mirror, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("snp")
    res = run_workflow(workdir, override(mirror.base + "/ok/", datasets=("snp", "snp_logistic")))
    assert res.returncode == 0, res.stderr[-3000:]
    return workdir


def test_outputs(run):
    errors = pd.read_parquet(run / "results/snp/errors.parquet")
    assert len(errors) == len(METHODS) * len(M) * REPS
    summary = pd.read_csv(run / "results/snp/summary.csv")
    assert list(summary.columns) == ["method", "m", "n_reps", "mean", "se", "median", "q05", "q95", "sp_rmse",
                                     "sp_rmse_se", "abstain_rate", "support_recovered", "private", "proven",
                                     "epsilon", "delta", "calibration", "tuning_mode", "end_to_end"]  # fmt: skip
    assert (run / "results/snp/error_curves.png").read_bytes()[:4] == b"\x89PNG"
    assert (run / "results/snp/error_curves.pdf").read_bytes()[:5] == b"%PDF-"
    geno = pd.read_parquet(run / "results/snp/genotypes.parquet")
    assert geno.shape == (387, 2 + N_SNPS) and list(geno.columns[:2]) == ["sample", "group"]
    assert geno.columns[2].startswith("SNP_A-") and set(np.unique(geno.iloc[:, 2:].to_numpy())) <= {0, 1, 2}
    assert geno.group.value_counts().to_dict() == {"average": 241, "low": 146}
    snps = pd.read_csv(run / "results/snp/snps.csv")
    assert list(snps.snp) == list(geno.columns[2:]) and snps.maf.is_monotonic_decreasing


def test_provenance(run):
    manifest = json.loads((run / "resources/snp/manifest.json").read_text())
    assert [f["name"] for f in manifest["files"]] == NAMES  # the family SOFT file is not touched
    meta = json.loads((run / "results/snp/preprocessing.json").read_text())
    assert meta["private"] is False and "NOT PRIVATE" in meta["privacy_note"]
    assert meta["groups"] == {"average": 241, "low": 146} and meta["labels_from"].startswith("!Sample_char")
    assert len(meta["truth"]) == N_SNPS


def test_results_make_sense(run):
    s = pd.read_csv(run / "results/snp/summary.csv").set_index(["method", "m"])
    for m in M:
        assert s.loc[("peeling", m), "mean"] > s.loc[("top_s_mean", m), "mean"]  # the price of privacy
        assert 0 <= s.loc[("peeling", m), "support_recovered"] <= 10
    assert np.isnan(s.loc[("sample_mean", 10), "support_recovered"])
    for method in ("sample_mean", "top_s_mean", "peeling"):
        assert s.loc[(method, M[-1]), "mean"] < s.loc[(method, M[0]), "mean"], method
    assert s.loc[("top_s_mean", 120), "support_recovered"] > s.loc[("top_s_mean", 10), "support_recovered"]


def test_score_attack(run):
    a = pd.read_csv(run / "results/snp/attack.csv").set_index(["method", "m"])
    assert sorted(a.index.get_level_values(0).unique()) == sorted(METHODS) and (a.n_reps == REPS).all()
    # k = min(m, ⌊(N_g − m)/2⌋) people per group: at m = 120, 60 of "average" (241) and 13 of "low" (146)
    assert a.loc[("sample_mean", 120), "n_candidates"] == 73 and a.loc[("sample_mean", 10), "n_candidates"] == 20
    # 150 SNPs, 10 pairs: the plain mean gives its members away (AUC 0.96 measured), peeling at ε = 0.5 does not
    # (0.54; at m = 10 the paper's δ = 10/n^1.1 is 0.79, and (ε, δ)-DP would allow an AUC of 0.98)
    assert a.loc[("sample_mean", 10), "auc"] > 0.85 and a.loc[("peeling", 10), "auc"] < 0.7
    assert (a.loc["peeling", "auc"] < a.loc["peeling", "auc_ceiling"]).all()
    assert (run / "results/snp/attack.png").read_bytes()[:4] == b"\x89PNG"


def test_snp_logistic_branch(run):
    """The second estimand: sparse logistic regression of the IQ group on the same SNPs, private and not."""
    meta = json.loads((run / "results/snp_logistic/preprocessing.json").read_text())
    assert meta["private"] is False and "NOT PRIVATE" in meta["privacy_note"]
    assert len(meta["truth"]) == N_SNPS + 1 and list(meta["truth"])[0] == "intercept"
    assert sum(v != 0 for v in meta["truth"].values()) == 5
    s = pd.read_csv(run / "results/snp_logistic/summary.csv").set_index(["method", "m"])
    assert sorted(s.index.get_level_values(0).unique()) == ["dp_sparse_glm", "sparse_glm_iht"]
    assert s.loc[("sparse_glm_iht", 360), "mean"] < s.loc[("sparse_glm_iht", 40), "mean"]
    assert s.loc[("sparse_glm_iht", 360), "support_recovered"] > s.loc[("dp_sparse_glm", 360), "support_recovered"]
    ledger = json.loads((run / "results/snp_logistic/privacy_ledger.json").read_text())
    rel = ledger["methods"]["dp_sparse_glm"]["per_m"][0]["releases"]
    assert [r["mechanism"] for r in rel] == ["report-noisy-max (Laplace)", "laplace"]
    attack = pd.read_csv(run / "results/snp_logistic/attack.csv")
    assert set(attack.m) == set(LOGISTIC_M) and (attack.auc[attack.private] < attack.auc_ceiling[attack.private]).all()
    for name in ("error_curves.png", "attack.png"):
        assert (run / "results/snp_logistic" / name).read_bytes()[:4] == b"\x89PNG"


def _one_error_line(stderr):
    lines = [ln for ln in stderr.splitlines() if ln.startswith("ERROR [")]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


@pytest.mark.parametrize(
    "path,extra,expected",
    [
        (
            "/ok/",
            {"groups": {"average": 240, "low": 147}},
            "label counts {'average': 241, 'low': 146} differ from the expected {'average': 240, 'low': 147}",
        ),
        ("/cn/", {}, "GSE106818 matrix holds no genotype calls: values such as ['0.125']"),
        ("/empty/", {}, "lists no GSE106818(-GPL…)_series_matrix(-N).txt.gz file"),
    ],
)
def test_bad_data_fails_with_one_line(mirror, tmp_path, path, extra, expected):
    res = run_workflow(tmp_path, override(mirror.base + path, **extra))
    assert res.returncode != 0
    assert expected in _one_error_line(res.stderr)
    assert not (tmp_path / "results/snp/genotypes.parquet").exists()


def test_privacy_ledger(run):
    ledger = json.loads((run / "results/snp/privacy_ledger.json").read_text())
    assert "NOT PRIVATE" in ledger["not_private"][0] and "MAF" in ledger["not_private"][0]
    peel = ledger["methods"]["peeling"]
    assert [r["mechanism"] for r in peel["per_m"][0]["releases"]] == ["report-noisy-max (Laplace)", "laplace"]
    assert peel["per_m"][0]["releases"][0]["sensitivity"] == pytest.approx(2 * 2.0 / M[0])  # λ = 2R/n
    assert ledger["methods"]["sample_mean"]["private"] is False
