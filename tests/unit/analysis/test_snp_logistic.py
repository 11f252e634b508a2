"""The SNP branch's second estimand: sparse logistic regression of the IQ group on the SNPs."""

import json

import numpy as np
import pandas as pd
import pytest

from dpcost.analysis.attack import run_attack, summarise_attack
from dpcost.analysis.datasets import ANALYSES, snp_logistic_design, snp_logistic_record
from dpcost.analysis.engine import run_grid
from dpcost.dp.privacy import Privacy
from dpcost.errors import DataError
from dpcost.estimators.registry import get

GROUPS = {"average": 241, "low": 146}
FIT = {"T": 200, "eta0": 0.5}


def _table(d=60, signal=(0.8, -0.8, 0.6), seed=0):
    """Genotypes of the real group sizes in which the first SNPs shift the log-odds of "low"."""
    rng = np.random.default_rng(seed)
    n = sum(GROUPS.values())
    G = rng.binomial(2, rng.uniform(0.3, 0.5, d), (n, d))
    eta = -0.5 + (G[:, : len(signal)] - 1) @ np.array(signal)
    low = rng.random(n) < 1 / (1 + np.exp(-eta))
    table = pd.DataFrame(G.astype(np.int8), columns=[f"SNP_A-{k}" for k in range(d)])
    table.insert(0, "group", np.where(low, "low", "average"))
    table.insert(0, "sample", [f"GSM{k}" for k in range(n)])
    meta = {"accession": "GSE106818", "files": [], "groups": table.group.value_counts().to_dict(), "n_snps": d,
            "selection": "test", "truth": {c: 0.0 for c in table.columns[2:]}}  # fmt: skip
    return table, meta


def test_record_centres_the_genotypes_and_its_truth_finds_the_planted_snps():
    table, meta = _table()
    rec = snp_logistic_record(table, meta, s=4, fit=FIT)
    assert rec["private"] is False and "NOT PRIVATE" in rec["privacy_note"]
    X, y, names = snp_logistic_design(table, meta["groups"], rec["center"])
    assert names[0] == "intercept" and (X[:, 0] == 1).all() and np.abs(X[:, 1:].mean(0)).max() < 1e-12
    assert np.abs(X).max() <= 2 and y.mean() == pytest.approx((table.group == "low").mean())
    beta = pd.Series(rec["truth"])
    assert set(beta.abs().nlargest(4).index) == {"intercept", "SNP_A-0", "SNP_A-1", "SNP_A-2"}
    assert np.sign(beta[["SNP_A-0", "SNP_A-1", "SNP_A-2"]]).tolist() == [1.0, -1.0, 1.0]
    with pytest.raises(DataError, match="lacks the SNPs"):
        snp_logistic_design(table.drop(columns=["SNP_A-5"]), meta["groups"], rec["center"])


def test_the_truths_sampling_variance_is_finite_where_two_chosen_snps_are_identical():
    """SNPs in perfect LD (identical columns) chosen together make the sandwich's H singular: the record is still
    written, with the pseudo-inverse's variance (a full-size synthetic series of repeated rows stopped the run with a
    LinAlgError traceback); where H is invertible the variance is the plain sandwich's."""
    table, meta = _table()
    rec = snp_logistic_record(table, meta, s=4, fit=FIT)
    X, y, _ = snp_logistic_design(table, meta["groups"], rec["center"])
    beta = np.array(list(rec["truth"].values()))
    S = np.flatnonzero(beta)
    p = 1 / (1 + np.exp(-(X @ beta)))
    H = (X[:, S] * (p * (1 - p))[:, None]).T @ X[:, S]
    G = (X[:, S] * ((y - p) ** 2)[:, None]).T @ X[:, S]
    assert rec["truth_sampling_variance"] == pytest.approx(np.trace(np.linalg.inv(H) @ G @ np.linalg.inv(H)), rel=1e-9)
    twin = table.assign(**{"SNP_A-1": table["SNP_A-0"]})  # SNP 1 a copy of SNP 0: both carry signal, IHT keeps both
    twin_rec = snp_logistic_record(twin, meta, s=4, fit=FIT)
    chosen = {k for k, v in twin_rec["truth"].items() if v != 0}
    assert {"SNP_A-0", "SNP_A-1"} <= chosen
    assert np.isfinite(twin_rec["truth_sampling_variance"]) and twin_rec["truth_sampling_variance"] > 0


def _design(tmp_path, s=4):
    table, meta = _table()
    rec = snp_logistic_record(table, meta, s=s, fit=FIT)
    table.to_parquet(tmp_path / "g.parquet")
    (tmp_path / "m.json").write_text(json.dumps(rec))
    inputs = {"genotypes": str(tmp_path / "g.parquet"), "meta": str(tmp_path / "m.json")}
    return ANALYSES["snp_logistic"].load(inputs, {"s": s})


def test_private_and_non_private_fits_approach_the_full_sample_fit(tmp_path):
    design = _design(tmp_path)
    kw = dict(params={"s": 4}, m_grid=[100, 380], reps=4, seed=1, dataset="t")
    base = get("sparse_glm_iht", "glm")
    plain, _ = run_grid(design, base, tuning=base.resolve_tuning(FIT), privacy=Privacy(4.0, 1e-5), **kw)
    assert list(plain.columns) == ["method", "m", "rep", "epsilon", "delta", "error", "support_recovered",
                                   "abstained"]  # fmt: skip
    e = plain.groupby("m").error.mean()
    assert e[380] < e[100] and e[380] < 0.3 * np.linalg.norm(design.truth)
    assert plain.groupby("m").support_recovered.mean()[380] == 4
    # d = 61 against 380 records: the private fit needs a large ε (measured at m = 380: 2 of the 4 coordinates at
    # ε = 16, 3.75 at ε = 64; the error falls from ≈ the truth's norm)
    dp = get("dp_sparse_glm", "glm")
    tun = dp.resolve_tuning({"sigma_x": 2.0, "T": 5, "eta0": 0.5})
    low, _ = run_grid(design, dp, tuning=tun, privacy=Privacy(1.0, 1e-5, "tight"), **kw)
    high, plans = run_grid(design, dp, tuning=tun, privacy=Privacy(64.0, 1e-5, "tight"), **kw)
    at = lambda t: t[t.m == 380]  # noqa: E731
    assert at(high).support_recovered.mean() >= 3 > at(low).support_recovered.mean()
    assert at(high).error.mean() < at(low).error.mean()
    assert [p["m"] for p in plans] == [100, 380] and plans[0]["method"] == "dp_sparse_glm"


def test_attack_uses_the_null_reference_and_traces_the_full_sample_iht_more_than_the_private_fit(tmp_path):
    design = _design(tmp_path)
    cand = design.candidates(design.subsample(200, 0, seed=1, dataset="t"), 200, 0, seed=1, dataset="t", cap=1000)
    assert cand.members.shape == cand.nonmembers.shape == (93, design.d)  # (387 − 200) // 2
    assert cand.theta[0] < 0 and not cand.theta[1:].any()  # logit of the reference's share of "low"; no SNP effect
    priv = Privacy(0.5, 1e-5, "tight")
    kw = dict(params={"s": 4}, m_grid=[60], reps=6, seed=1, privacy=priv, dataset="t", cap=1000)
    base, dp = get("sparse_glm_iht", "glm"), get("dp_sparse_glm", "glm")
    stats = pd.concat([run_attack(design, base, tuning=base.resolve_tuning(FIT), **kw),
                       run_attack(design, dp, tuning=dp.resolve_tuning({"sigma_x": 2.0}), **kw)])  # fmt: skip
    out = summarise_attack(stats, privacy=priv, private={"sparse_glm_iht": False, "dp_sparse_glm": True})
    out = out.set_index("method")
    assert out.loc["dp_sparse_glm", "auc"] < out.loc["dp_sparse_glm", "auc_ceiling"]
    assert out.loc["sparse_glm_iht", "auc"] > out.loc["dp_sparse_glm", "auc"]
