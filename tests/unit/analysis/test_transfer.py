"""The knowledge-transfer study's engine (dpcost.analysis.transfer): scoring, constants, fresh noise per release,
the table beside Wang & Gu (2020) and the ledger, on a small sparse split."""

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

from dpcost.analysis import transfer
from dpcost.errors import ConfigError

N, M, D, S = 120, 100, 40, 3


def prepared(task="regression", seed=0):
    rng = np.random.default_rng(seed)
    theta = np.zeros(D)
    theta[:S] = [3.0, -2.0, 2.5]

    def part(n):
        X = sp.random(n, D, density=0.3, random_state=rng, format="csr")
        X = sp.csr_matrix(X.multiply(1 / np.maximum(1e-12, sp.linalg.norm(X, axis=1))[:, None]))
        u = X @ theta
        y = (u + rng.normal(scale=0.1, size=n) > 0).astype(float) if task == "binary" else 5.0 + u
        return X, y

    (Xp, yp), (Xq, yq), (Xt, yt) = part(N), part(M), part(50)
    return SimpleNamespace(
        X_private=Xp,
        y_private=yp,
        X_public=Xq,
        y_public=yq,
        X_test=Xt,
        y_test=yt,
        meta={"task": task, "n": {"private": N}, "n_features": D, "n_private": N, "seed": seed},
    )


RUN = dict(s=S, epsilons=[1.0, 4.0], delta=1e-5, trials=3, calibration="tight", on_invalid="refuse", sampler="exact",
           seed=11)  # fmt: skip
KT = {"c_lambda": 1.0, "c_x": 1.0, "eta2": "1/L"}


def test_split_shifts_by_the_public_mean_and_scores_by_hand():
    p = prepared()
    split = transfer.Split.of("toy", p)
    assert split.shift == pytest.approx(np.mean(p.y_public))
    theta = np.linspace(-1, 1, D)
    by_hand = np.mean((p.y_test - split.shift - p.X_test @ theta) ** 2)
    assert split.score(theta) == pytest.approx(by_hand, rel=1e-12)
    b = transfer.Split.of("toy", prepared("binary"))
    assert b.shift == 0.0 and b.loss == "logistic"
    assert b.score(np.zeros(D)) == pytest.approx(np.mean(b.y_test == 1))  # xᵀ0 = 0 predicts class 0 everywhere


def test_constants_evaluate_public_formulas():
    split = transfer.Split.of("toy", prepared())
    L = np.linalg.svd(split.X_public.toarray(), compute_uv=False)[0] ** 2 / M
    from dpcost.estimators.registry import get

    tun = split.constants(get("iht"), {"eta0": "1/L", "T": "ceil(log(n))"}, S)
    assert tun["eta0"] == pytest.approx(1 / L, rel=1e-5) and tun["T"] == int(np.ceil(np.log(N)))
    with pytest.raises(ConfigError, match="sigma is not defined"):
        split.constants(get("iht"), {"eta0": "sigma", "T": 5}, S)


def test_every_release_draws_fresh_noise_and_reruns_are_identical():
    split = transfer.Split.of("toy", prepared())
    a, plans = transfer.run_method(split, "dpsl_kt", tuning=KT, **RUN)
    b, _ = transfer.run_method(split, "dpsl_kt", tuning=KT, **RUN)
    assert a.drop(columns="seconds").equals(b.drop(columns="seconds"))
    assert a.value.nunique() == len(a) == 6  # 2 ε × 3 trials, no two alike
    assert [p["epsilon"] for p in plans] == [1.0, 4.0] and all(p["tuning"]["eta2"] > 1 for p in plans)
    assert a.proven.all() and a.private.all()
    # another seed, other noise
    c, _ = transfer.run_method(split, "dpsl_kt", tuning=KT, **{**RUN, "seed": 12})
    assert not np.allclose(a.value, c.value)
    # the same rows under another split's description (e.g. another feature subset): other noise too
    other = transfer.Split.of(
        "toy", SimpleNamespace(**{**vars(prepared()), "meta": {"task": "regression", "n_features": D - 1}})
    )
    assert other.identity != split.identity
    e, _ = transfer.run_method(other, "dpsl_kt", tuning=KT, **RUN)
    assert not np.allclose(a.value, e.value)


def test_non_private_is_one_fit_and_the_paper_version_is_unproven():
    split = transfer.Split.of("toy", prepared())
    iht, plans = transfer.run_method(split, "iht", tuning={"eta0": "1/L", "T": 200}, **RUN)
    assert len(iht) == 1 and not iht.private.any() and np.isnan(iht.epsilon.iloc[0]) and plans == []
    # the target is learnt: far below the variance of the shifted test target
    assert iht.value.iloc[0] < 0.2 * np.var(split.y_test)
    paper, _ = transfer.run_method(split, "dpsl_kt_paper", tuning={"c_lambda": 1.0, "beta_tilde": 1.0}, **RUN)
    assert not paper.proven.any()


def test_refusals():
    split = transfer.Split.of("toy", prepared())
    with pytest.raises(ConfigError, match="not run on this study"):
        transfer.run_method(split, "ols", tuning={}, **RUN)
    with pytest.raises(ConfigError, match="s = 41"):
        transfer.run_method(split, "iht", tuning={"eta0": 1.0, "T": 5}, **{**RUN, "s": D + 1})


def test_table_and_ledger():
    split = transfer.Split.of("e2006", prepared())
    runs = [transfer.run_method(split, m, tuning=t, **{**RUN, "epsilons": [0.8, 2.0]})
            for m, t in (("iht", {"eta0": 1.0, "T": 20}), ("dpsl_kt", KT))]  # fmt: skip
    import pandas as pd

    errors = pd.concat([r[0] for r in runs], ignore_index=True)
    table = transfer.table(errors, "e2006", {})
    # the union of our grid and the paper's; the non-private fit at every ε
    assert sorted(table.epsilon.unique()) == [0.8, 1.5, 2.0, 2.5, 3.5, 4.5]
    iht = table[table.method == "iht"]
    assert iht["mean"].nunique() == 1 and (iht.trials == 1).all()
    assert iht.set_index("epsilon").paper_mean.loc[0.8] == 0.8541 and np.isnan(iht.set_index("epsilon").paper_mean[2.0])
    kt = table[table.method == "dpsl_kt"].set_index("epsilon")
    assert kt.trials.loc[0.8] == 3 and kt.trials.loc[1.5] == 0 and kt.paper_mean.isna().all()
    assert kt["sd"].loc[0.8] == pytest.approx(
        errors[(errors.method == "dpsl_kt") & (errors.epsilon == 0.8)].value.std()
    )
    # the paper's methods not run here keep their published row
    paper_only = {m for m, g in table.groupby("method") if (g.trials == 0).all()}
    assert paper_only == {"two_stage", "dp_ight", "frank_wolfe_lasso", "dpsl_kt_paper"}
    ledger = transfer.ledger("e2006", [p for r in runs for p in r[1]], errors, {"n": {"private": N}}, shift=1.0)
    entry = ledger["methods"]["dpsl_kt"]
    assert entry["table_total_basic_composition"] == {"epsilon": pytest.approx(3 * 2.8), "delta": pytest.approx(6e-5)}
    assert entry["releases"] == 6 and len(entry["plans"]) == 2
    assert not ledger["methods"]["iht"]["private"]


BLOCK = {"methods": ["iht"], "tuning": {"iht": {"eta0": "1/L", "T": 10}}, "s": 10,
         "files": {"n_features_total": 100, "n_train": 50, "n_test_total": 10},
         "split": {"n_features": 20, "n_private": 25, "n_public": 25, "n_test": None}}  # fmt: skip


@pytest.mark.parametrize(
    "change,message",
    [
        ({"methods": ["ols"]}, "not run on this study"),
        ({"tuning": {"iht": {"eta": 1.0, "T": 10}}}, r"unknown key\(s\) \['eta'\]"),
        ({"tuning": {"iht": {"eta0": 1.0, "T": 10}, "dpsl_k": {}}}, r"toy.tuning: unknown method\(s\) \['dpsl_k'\]"),
        ({"tuning": {"iht": {"eta0": "1/q", "T": 10}}}, "may use only"),
        ({"s": 21}, r"1 … 20 features"),
        ({"split": {"n_features": 20, "n_private": 30, "n_public": 25, "n_test": None}}, "55 private and public"),
    ],
)
def test_check_block(change, message):
    transfer.check_block("toy", BLOCK)
    with pytest.raises(ConfigError, match=message):
        transfer.check_block("toy", {**BLOCK, **change})
