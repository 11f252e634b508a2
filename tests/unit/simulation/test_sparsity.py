"""Choosing s (Figure 2): the grid, the scores' sensitivities (attained by a worst-case pair, never exceeded), the
noise calibrated for s_max, the dominating candidate event, the budgets (within ε; the printed procedure's total by
its argument), the exponential mechanism's scale, and each variant recovering s* where the data make it clear.

Why the private selection has no end-to-end audit: measured at stated ε = 2 (n = 10, d = 2, one candidate, worst-case
neighbours, 5,000 runs a side), the best threshold event gave a lower bound of 0.09, and a selection whose candidates
spend 6× their budget only 0.83 — the accounting (Papernot & Steinke's bound) is so far above the true loss that such
an audit could not fail. Its parts are audited instead: each release's sensitivity here, the accountant's
RepeatAndSelect in tests/unit/dp/test_selection.py.
"""

import math

import numpy as np
import pytest

from dpcost.analysis.streams import rng_for
from dpcost.dp.accountant import dpa, pure_releases_event, rdp_epsilon
from dpcost.dp.mechanisms import report_noisy_max
from dpcost.dp.plan import PrivacyPlan, Release
from dpcost.dp.privacy import Privacy
from dpcost.errors import ConfigError, PrivacyError
from dpcost.estimators.registry import get
from dpcost.estimators.sparse_mean import dp_sparse_mean_plan, peeling_plan
from dpcost.estimators.sparse_regression import dp_iht_plan
from dpcost.simulation import sparsity
from dpcost.simulation.designs import Design, draw

SPEC = {"grid": [0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0], "folds": 5, "loss_quantile": 0.975, "mean_K": 3, "eta": 0,
        "score_share": 0.2}  # fmt: skip
ST = sparsity.STuning.from_config(SPEC)
IHT = {"R": 3.0, "C": 1.0, "eta0": 40.0, "T": 3}


def test_the_grid_is_s_star_over_two_to_twice_s_star_within_d():
    assert ST.candidates(20, 4000) == (10, 15, 20, 25, 30, 35, 40)
    assert ST.candidates(20, 30) == (10, 15, 20, 25, 30) and ST.candidates(1, 5) == (1, 2)
    for bad, match in (({"folds": 1}, "folds"), ({"score_share": 1.0}, "score_share"), ({"grid": []}, "grid"),
                       ({"eta": 0.5}, "eta")):  # fmt: skip
        with pytest.raises(ConfigError, match=match):
            sparsity.STuning.from_config({**SPEC, **bad})


def _worst_mean_pair(est, R, n=50, d=6, seed=0):
    X = np.random.default_rng(seed).uniform(-R, R, size=(n, d))
    X2 = X.copy()
    X[0], X2[0] = R * np.sign(est), -R * np.sign(est)  # the replaced record pulls ⟨x, μ̂⟩ from +R‖μ̂‖₁ to −R‖μ̂‖₁
    return (X,), (X2,)


def test_the_mean_score_sensitivity_is_attained_and_never_exceeded():
    R, est = 2.0, np.array([3.0, -1.5, 0.0, 0.0, 0.5, 0.0])
    a, b = _worst_mean_pair(est, R)
    (va, sens), (vb, _) = (sparsity.score_value("sparse_mean", x, est, s=3, tuning={"R": R}) for x in (a, b))
    assert abs(va - vb) == pytest.approx(sens, rel=1e-12)  # the bound 4R‖μ̂‖₁/n is attained
    rng = np.random.default_rng(1)
    for _ in range(200):  # random neighbours, values beyond R included (the clip is what bounds them)
        X = rng.normal(0, 3, size=(50, 6))
        X2 = X.copy()
        X2[rng.integers(50)] = rng.normal(0, 10, size=6)
        diff = sparsity.score_value("sparse_mean", (X,), est, s=3, tuning={"R": R})[0] - sparsity.score_value(
            "sparse_mean", (X2,), est, s=3, tuning={"R": R})[0]  # fmt: skip
        assert abs(diff) <= sens * (1 + 1e-12)


def test_the_regression_score_sensitivity_is_attained_and_never_exceeded():
    R, c_x, s, n, d = 2.0, 1.5, 2, 40, 5
    bound = c_x / math.sqrt(s)
    est = np.array([0.6, -0.8, 0.0, 0.0, 0.0])
    tun = {"R": R, "c_x": c_x}
    rng = np.random.default_rng(2)
    X, y = rng.uniform(-bound, bound, size=(n, d)), rng.uniform(-R, R, size=n)
    a = bound * np.abs(est).sum()
    # the term 2ỹt − t² is largest at t = a, ỹ = R (2Ra − a²) and smallest at t = −a, ỹ = R (−2Ra − a²)
    X1, X2, y1, y2 = X.copy(), X.copy(), y.copy(), y.copy()
    X1[0], y1[0] = bound * np.sign(est), R
    X2[0], y2[0] = -bound * np.sign(est), R
    (v1, sens), (v2, _) = (
        sparsity.score_value("sparse_ols", data, est, s=s, tuning=tun) for data in ((X1, y1), (X2, y2))
    )
    assert abs(v1 - v2) == pytest.approx(4 * R * a / n, rel=1e-12) and abs(v1 - v2) <= sens  # within a²/n of it
    assert sens == pytest.approx((4 * R * a + a * a) / n)
    for _ in range(200):
        Xa, ya = rng.normal(0, 2, size=(n, d)), rng.normal(0, 4, size=n)
        Xb, yb = Xa.copy(), ya.copy()
        i = rng.integers(n)
        Xb[i], yb[i] = rng.normal(0, 5, size=d), rng.normal(0, 9)
        va = sparsity.score_value("sparse_ols", (Xa, ya), est, s=s, tuning=tun)[0]
        vb = sparsity.score_value("sparse_ols", (Xb, yb), est, s=s, tuning=tun)[0]
        assert abs(va - vb) <= sens * (1 + 1e-12)


def test_a_zero_fit_scores_zero_without_noise():
    X = np.ones((5, 3))
    assert sparsity.score("sparse_mean", (X,), np.zeros(3), s=1, tuning={"R": 1.0}, epsilon=0.1,
                          privacy=Privacy(1.0, 1e-5), rng=np.random.default_rng(0)) == 0.0  # fmt: skip


def test_s_max_calibrates_the_noise_for_more_selections_than_are_made():
    for cal in ("paper", "tight"):
        p = Privacy(0.5, 1e-5, cal)
        at_40 = peeling_plan(p, s=40, lam=1.0).releases
        plan = peeling_plan(p, s=10, lam=1.0, s_max=40)
        assert plan.releases[0].noise_scale == at_40[0].noise_scale and plan.releases[0].count == 10
        assert plan.releases[0].epsilon == at_40[0].epsilon
        with pytest.raises(PrivacyError, match="s_max must be"):
            peeling_plan(p, s=10, lam=1.0, s_max=5)
        iht = dp_iht_plan(p.at(500), 500, 200, s=10, c_x=0.5, B=None, s_max=20, **IHT)
        assert iht.releases[0].count == 3 * 10
        twenty = dp_iht_plan(p.at(500), 500, 200, s=20, c_x=0.5 * math.sqrt(2), B=None, **IHT)  # the same Δ
        assert iht.releases[0].epsilon == pytest.approx(twenty.releases[0].epsilon)
    # and the estimator draws the noise its plan states
    via_registry = get("peeling").make_plan(Privacy(0.5, 1e-5), 100, 50, {"R": 1.0}, {"s": 5, "s_max": 9})
    nine = dp_sparse_mean_plan(Privacy(0.5, 1e-5), 100, 50, s=9, R=1.0)
    assert via_registry.releases[0].noise_scale == nine.releases[0].noise_scale


def test_the_candidate_event_dominates_every_candidate():
    p = Privacy(0.3, 1e-5, "tight")
    plans = [dp_sparse_mean_plan(p, 100, 50, s=s, R=1.0) for s in (2, 5, 9)]  # own calibrations: ε per release falls
    event = pure_releases_event(plans)
    lib = dpa()[0]
    for plan in plans:
        own = pure_releases_event([plan])
        for delta in (1e-3, 1e-6):
            assert rdp_epsilon([event], delta) >= rdp_epsilon([own], delta)
    assert rdp_epsilon([event], 1e-5) > rdp_epsilon([pure_releases_event([plans[-1]])], 1e-5) * 1.05  # not just one
    rel = Release("gaussian", 1.0, "l2", 3.0, 1, None, kind="gaussian", noise="exact", coordinates=1)
    gauss = PrivacyPlan(
        "x", 1.0, 1e-5, "tight", "", "", (rel,), whole_mechanism=True, whole_mechanism_why="one Gaussian"
    )
    with pytest.raises(PrivacyError, match="not a pure release"):
        pure_releases_event([gauss])
    assert isinstance(event, lib.ComposedDpEvent)


@pytest.mark.parametrize("compose", [False, True])
def test_the_selection_budget_spends_at_most_the_stated_level(compose):
    n = d = 400
    p = Privacy(0.5, "10/n^1.1", "tight").at(n)
    grid = ST.candidates(20, d)
    b = sparsity.selection_budget(get("peeling"), n, d, grid=grid, s_tuning=ST, privacy=p,
                                  tuning_at=lambda s: {"R": 8.0}, compose=compose)  # fmt: skip
    assert 0.999 * p.epsilon <= b.epsilon <= p.epsilon
    assert b.score_epsilon == pytest.approx(0.25 * b.fit.epsilon)  # score_share 0.2 of the candidate's ε_c
    assert b.fit.epsilon < p.epsilon / 2  # selecting costs: each candidate gets well under half of ε
    assert b.s_max == (None if compose else 40)


def test_the_printed_procedure_spends_what_its_argument_says():
    eps, delta = sparsity.cv_expmech_total(Privacy(0.5, 1e-5), 7, 5)
    assert eps == pytest.approx(31 * 0.5) and delta == pytest.approx(29e-5)


def test_report_noisy_max_picks_with_the_exponential_mechanisms_odds():
    # two candidates, scores (Δ, 0): P(first) = 1 − ½e^{−x}(1 + x/2), x = Δ/b, b = 2Δ/ε (difference of two Laplace);
    # a scale of Δ/ε (the classic slip) would give 0.724 instead of 0.621 at ε = 1
    rng = np.random.default_rng(5)
    N = 20_000
    picks = np.array([report_noisy_max([1.0, 0.0], sensitivity=1.0, epsilon=1.0, rng=rng) for _ in range(N)])
    x = 0.5
    expected = 1 - 0.5 * math.exp(-x) * (1 + x / 2)
    assert abs(np.mean(picks == 0) - expected) < 4 * math.sqrt(expected * (1 - expected) / N)
    assert report_noisy_max([0.0, 1e6, 3.0], sensitivity=1.0, epsilon=1.0, rng=rng) == 1


def _mean_case(n, seed=1):
    (X,), mu = draw(Design(), "sparse_mean", n=n, d=n, s=20, rep=0, seed=seed)
    return (X,), mu


def _stream(tag):
    return lambda *r: rng_for(7, "test", tag, *r)


def test_each_variant_finds_a_clear_sparsity():
    # n = 2,000 at ε = 4: the 20 means (|μ_j| up to 10) stand far above the noise, so every way of choosing s should
    # land near s* = 20, and never at s*/2 (10 signal coordinates lost: error ≥ √(Σ of the 10 smallest μ_j²))
    n = 2000
    data, mu = _mean_case(n)
    p = Privacy(4.0, "10/n^1.1", "tight").at(n)
    m, grid, tun = get("peeling"), ST.candidates(20, n), (lambda s: {"R": 4 * math.sqrt(math.log(n))})
    est, s_hat = sparsity.cv_expmech(m, "sparse_mean", data, grid=grid, s_tuning=ST, privacy=p, tuning_at=tun,
                                     stream=_stream("cv"))  # fmt: skip
    assert s_hat >= 15 and np.linalg.norm(est - mu) < 0.5 * np.linalg.norm(mu)
    for compose in (False, True):
        b = sparsity.selection_budget(m, n, n, grid=grid, s_tuning=ST, privacy=p, tuning_at=tun, compose=compose)
        run = sparsity.composed_selection if compose else sparsity.private_selection
        kw = {} if compose else {"s_tuning": ST}
        est, s_hat = run(m, "sparse_mean", data, grid=grid, budget=b, tuning_at=tun, stream=_stream(compose), **kw)
        assert s_hat >= 15 and np.linalg.norm(est - mu) < 0.5 * np.linalg.norm(mu), compose
