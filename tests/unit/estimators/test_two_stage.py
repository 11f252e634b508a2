"""Two-stage private sparse regression (after Kifer, Smith & Thakurta 2012; subsample-and-aggregate support
selection, then output perturbation of a ridge fit): plan numbers in both calibrations, refusals, sparse == dense,
support recovery rising with ε, each stage's sensitivity on worst-case and random neighbours, and statistical audits
of both releases that pass at the stated ε and catch a planted bug."""

import math

import numpy as np
import pytest
from scipy import sparse
from scipy.special import expit

from dpcost.dp.accountant import gaussian_epsilon
from dpcost.dp.audit import epsilon_lower_bound
from dpcost.dp.mechanisms import gaussian_delta
from dpcost.dp.privacy import Privacy
from dpcost.dp.samplers import grid_scale
from dpcost.errors import DataError, PrivacyError
from dpcost.estimators import two_stage as ts
from dpcost.estimators.two_stage import (
    count_sensitivity,
    release_counts,
    top_s,
    two_stage,
    two_stage_plan,
    vote_counts,
)

TRUE = [3, 17, 42, 60, 88]


def regression_data(n=1000, d=100, seed=0):
    """x uniform on [−1, 1]^d, θ* = ±1 on TRUE scaled to d (‖θ*‖ = √5), y = x'θ* + N(0, 0.3²)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d))
    theta = np.zeros(d)
    theta[[j * d // 100 for j in TRUE]] = [1, -1, 1, -1, 1]
    return X, X @ theta + 0.3 * rng.normal(size=n), theta


SQ = dict(s=5, blocks=50, B_X=math.sqrt(5), residual_clip=1.0)  # |x_j| ≤ 1 on 5 coordinates: B_X clips nothing
DEF = dict(blocks=50, block_iters=10, share=0.5, B_X=1.0, residual_clip=1.0, c_lambda=1.0, tol=0.01)


# ---- plans ---------------------------------------------------------------------------------------------------------


def test_plan_paper_squared_by_hand():
    p = Privacy(1.5, 1e-5, "paper", sampler="float-unsafe")
    plan = two_stage_plan(p, 1000, 200, s=8, **(DEF | {"B_X": 2.0, "residual_clip": 3.0}))
    count, fit = plan.releases
    # stage 1 at (0.75, 5e-6): sqrt(2*8) sqrt(2 ln(1.25 / 5e-6)) / 0.75 = 4 * 4.98582 / 0.75
    assert count.sensitivity == 4.0 and count.noise_scale == pytest.approx(26.5910, rel=1e-5)
    assert count.noise_scale == pytest.approx(4 * math.sqrt(2 * math.log(1.25 / 5e-6)) / 0.75, rel=1e-12)
    # stage 2 at (0.75, 5e-6): G = 2 * 3 = 6; lambda^2 = sqrt(8 ln(2e5)) / (1000 * 0.75) = 0.013176;
    # sensitivity 1.02 * 2 * 6 / (1000 * lambda) = 0.10664; sigma = that * sqrt(2 ln(1.25 / 5e-6)) / 0.75
    lam = math.sqrt(math.sqrt(8 * math.log(2e5)) / 750)
    assert plan.parameters["lambda"] == pytest.approx(lam, rel=1e-12) and lam == pytest.approx(0.114785, rel=1e-5)
    assert fit.sensitivity == pytest.approx(1.02 * 12 / (1000 * lam), rel=1e-12)
    assert fit.noise_scale == pytest.approx(fit.sensitivity * math.sqrt(2 * math.log(1.25 / 5e-6)) / 0.75, rel=1e-12)
    assert (count.epsilon, count.delta, fit.epsilon, fit.delta) == (0.75, 5e-6, 0.75, 5e-6)
    assert plan.proven and plan.parameters["blocks"] == 50 and plan.parameters["rows per block"] == 20


def test_plan_tight_logistic_by_hand():
    p = Privacy(2.0, 1e-4, "tight", sampler="float-unsafe")
    plan = two_stage_plan(p, 500, 300, s=10, loss="logistic", **(DEF | {"share": 0.25, "B_X": 1.5}))
    count, fit = plan.releases
    # stage 1 at (0.5, 2.5e-5): the analytic Gaussian, the smallest sigma with delta(sigma) <= delta1
    sens = math.sqrt(20)
    assert gaussian_delta(count.noise_scale, sens, 0.5) <= 2.5e-5 < gaussian_delta(count.noise_scale * 0.999, sens, 0.5)
    assert count.noise_scale < sens * math.sqrt(2 * math.log(1.25 / 2.5e-5)) / 0.5  # below the classic sigma
    # stage 2 at (1.5, 7.5e-5): G = B_X = 1.5 whatever residual_clip says; the analytic Gaussian on its sensitivity
    assert plan.parameters["G"] == 1.5
    assert gaussian_delta(fit.noise_scale, fit.sensitivity, 1.5) <= 7.5e-5
    assert gaussian_delta(fit.noise_scale * 0.999, fit.sensitivity, 1.5) > 7.5e-5


def test_plan_exact_sampler_pays_the_grid():
    kw = DEF | {"B_X": 2.0}
    unsafe = two_stage_plan(Privacy(1.5, 1e-5, "tight", sampler="float-unsafe"), 1000, 200, s=8, **kw)
    exact = two_stage_plan(Privacy(1.5, 1e-5, "tight"), 1000, 200, s=8, **kw)
    for k, m in ((0, 200), (1, 8)):
        sigma, sens = unsafe.releases[k].noise_scale, unsafe.releases[k].sensitivity
        assert exact.releases[k].noise_scale == grid_scale(sigma, sens, m, "l2", "gaussian", "exact") > sigma


def test_refusals():
    p = Privacy(1.0, 1e-5, "tight")
    ok = DEF | {"s": 5}
    for bad in ({"s": 0}, {"s": 101}, {"s": 2.5}, {"blocks": 0}, {"blocks": 1001}, {"block_iters": 0}, {"B_X": 0.0},
                {"residual_clip": -1.0}, {"c_lambda": 0.0}, {"tol": 0.0}):  # fmt: skip
        with pytest.raises(PrivacyError):
            two_stage_plan(p, 1000, 100, **(ok | bad))
    for share in (0, 1, -0.1, 1.5, True, float("nan")):
        with pytest.raises(PrivacyError, match="share"):
            two_stage_plan(p, 1000, 100, **(ok | {"share": share}))
    with pytest.raises(PrivacyError, match="loss"):
        two_stage_plan(p, 1000, 100, **(ok | {"loss": "huber"}))
    with pytest.raises(PrivacyError, match="replace-one"):
        two_stage_plan(Privacy(1.0, 1e-5, neighbours="add_remove"), 1000, 100, **ok)
    with pytest.raises(PrivacyError, match="stage 1"):  # the classic Gaussian at share * eps = 1
        two_stage_plan(Privacy(2.0, 1e-5, "paper"), 1000, 100, **ok)
    with pytest.raises(PrivacyError, match="stage 2"):  # stage 1 at 0.45, stage 2 at 1.05
        two_stage_plan(Privacy(1.5, 1e-5, "paper"), 1000, 100, **(ok | {"share": 0.3}))
    with pytest.warns(RuntimeWarning, match="PRIVACY WARNING"):
        two_stage_plan(Privacy(2.0, 1e-5, "paper", on_invalid="warn"), 1000, 100, **ok)
    X, y, _ = regression_data(200, 20)
    with pytest.raises(DataError, match="logistic"):
        two_stage(X, y, privacy=p, rng=np.random.default_rng(0), s=3, loss="logistic")


# ---- the estimator -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_sparse_equals_dense(loss):
    X, y, theta = regression_data(300, 40, seed=1)
    X[np.abs(X) < 0.6] = 0.0  # 60 % zeros
    kw = SQ | {"blocks": 10} if loss == "squared" else dict(s=5, blocks=10, loss="logistic", B_X=2.0)
    kw |= {"tol": 1e-4}  # both fits certified close to the same minimiser
    if loss == "logistic":
        y = (np.random.default_rng(2).random(300) < expit(X @ theta)).astype(float)
    p = Privacy(4.0, 1e-5, "tight")
    dense = two_stage(X, y, privacy=p, rng=np.random.default_rng(7), **kw)
    csr = two_stage(sparse.csr_matrix(X), y, privacy=p, rng=np.random.default_rng(7), **kw)
    assert np.count_nonzero(dense) == 5
    assert set(np.flatnonzero(csr)) == set(np.flatnonzero(dense))  # the same support, drawn from the same counts
    np.testing.assert_allclose(csr, dense, rtol=1e-3, atol=1e-3)  # the same noise on fits certified to 1e-4 x 2G/nλ


def test_the_estimate_is_top_s_of_the_released_counts():
    """two_stage uses the audited pieces: perm, vote_counts, release_counts at the plan's sigma1, top_s."""
    X, y, _ = regression_data(400, 30)
    p = Privacy(3.0, 1e-5, "tight")
    est = two_stage(X, y, privacy=p, rng=np.random.default_rng(5), **(SQ | {"blocks": 20}))
    rng = np.random.default_rng(5)
    counts = vote_counts(X, y, loss="squared", s=5, blocks=20, block_iters=10, perm=rng.permutation(400))
    sigma1 = two_stage_plan(p, 400, 30, **(DEF | SQ | {"blocks": 20})).releases[0].noise_scale
    np.testing.assert_array_equal(np.flatnonzero(est), top_s(release_counts(counts, sigma1, rng)[0], 5))


def test_support_recovery_and_error_improve_with_epsilon():
    """Twelve draws at each ε (same data): the mean recovered fraction of the true support rises from ε = 0.5 to 8
    by more than 4 standard errors of the difference; the estimation error falls likewise. Without noise the vote
    counts alone find the support."""
    X, y, theta = regression_data()
    counts = vote_counts(X, y, loss="squared", s=5, blocks=50, block_iters=10, perm=np.arange(1000))
    assert set(top_s(counts, 5)) == set(TRUE)
    rec, err = {}, {}
    for eps in (0.5, 8.0):
        ests = [two_stage(X, y, privacy=Privacy(eps, 1e-3, "tight"), rng=np.random.default_rng(r), **SQ)
                for r in range(12)]  # fmt: skip
        rec[eps] = np.array([len(set(np.flatnonzero(e)) & set(TRUE)) / 5 for e in ests])
        err[eps] = np.array([np.linalg.norm(e - theta) for e in ests])

    def se(a, b):
        return math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)

    assert rec[8.0].mean() - rec[0.5].mean() > 4 * se(rec[8.0], rec[0.5])
    assert err[0.5].mean() - err[8.0].mean() > 4 * se(err[8.0], err[0.5])
    assert rec[8.0].mean() >= 0.9 and err[8.0].mean() < 0.6 * np.linalg.norm(theta)


def test_logistic_recovers_the_support_at_large_epsilon():
    rng = np.random.default_rng(3)
    X = rng.choice([-1.0, 1.0], size=(3000, 30))
    theta = np.zeros(30)
    theta[[2, 11, 23]] = [2.0, -2.0, 2.0]
    y = (rng.random(3000) < expit(X @ theta)).astype(float)
    kw = dict(s=3, loss="logistic", blocks=30, B_X=math.sqrt(3))
    est = two_stage(X, y, privacy=Privacy(20.0, 1e-5, "tight"), rng=np.random.default_rng(0), **kw)
    assert set(np.flatnonzero(est)) == {2, 11, 23}
    assert np.all(np.sign(est[[2, 11, 23]]) == [1, -1, 1])


# ---- stage 1: sensitivity and audit --------------------------------------------------------------------------------

# Worst case: every block is one record (blocks = n), whose vote is {0, 1} in D and {2, 3} in D′ for record 0.
X_WORST = np.array([[1.0, 1.0, 0.0, 0.0]] * 4)
X_WORST2 = X_WORST.copy()
X_WORST2[0] = [0.0, 0.0, 1.0, 1.0]
WORST = dict(loss="logistic", s=2, blocks=4, block_iters=1)


def test_worst_case_neighbours_attain_the_count_sensitivity():
    y = np.ones(4)
    for perm in (np.arange(4), np.array([2, 0, 3, 1])):
        c, c2 = vote_counts(X_WORST, y, perm=perm, **WORST), vote_counts(X_WORST2, y, perm=perm, **WORST)
        np.testing.assert_array_equal(c - c2, [1, 1, -1, -1])
        assert np.linalg.norm(c - c2) == count_sensitivity(2) == 2.0


def test_random_neighbours_stay_within_the_count_sensitivity():
    rng = np.random.default_rng(11)
    s, n, d = 3, 30, 12
    for trial in range(15):
        X, y = rng.normal(size=(n, d)), rng.normal(size=n)
        X2, y2 = X.copy(), y.copy()
        i = rng.integers(n)
        X2[i], y2[i] = 10 * rng.normal(size=d), 10 * rng.normal()
        perm = rng.permutation(n)
        kw = dict(loss="squared", s=s, blocks=6, block_iters=1 + trial % 4, perm=perm)
        diff = vote_counts(X, y, **kw) - vote_counts(X2, y2, **kw)
        assert np.abs(diff).max() <= 1 and np.abs(diff).sum() <= 2 * s
        assert np.linalg.norm(diff) <= count_sensitivity(s) + 1e-12


def _stage1_audit(n_draws=4000, seed=0):
    """ε lower bounds from the stage-1 release on the worst-case pair at Privacy(2, 0.1), share 1/2, i.e. the counts'
    release at (ε1, δ1) = (1, 0.05): (a) the noisy counts projected on c(D) − c(D′) (the most powerful statistic for
    a Gaussian shift), (b) the selected support itself, as |S ∩ {0, 1}|."""
    p = Privacy(2.0, 0.1, "tight")
    plan = two_stage_plan(p, 4, 4, **(DEF | WORST))
    y = np.ones(4)
    c, c2 = vote_counts(X_WORST, y, perm=np.arange(4), **WORST), vote_counts(X_WORST2, y, perm=np.arange(4), **WORST)
    sigma, d1 = plan.releases[0].noise_scale, plan.parameters["delta1"]
    a = release_counts(c, sigma, np.random.default_rng(seed), repeats=n_draws)
    b = release_counts(c2, sigma, np.random.default_rng(seed + 1), repeats=n_draws)
    u = (c - c2).astype(float)
    sel_a = np.array([np.count_nonzero(top_s(r, 2) < 2) for r in a], dtype=float)
    sel_b = np.array([np.count_nonzero(top_s(r, 2) < 2) for r in b], dtype=float)
    return epsilon_lower_bound(a @ u, b @ u, d1), epsilon_lower_bound(sel_a, sel_b, d1)


def test_stage1_audit_passes_at_the_stated_epsilon_and_catches_a_halved_sensitivity(monkeypatch):
    """Power, measured with this helper over seeds 0, 2, …, 98 at 4000 draws a side: correct calibration, bound (a)
    at most 0.85 and (b) at most 0.42 (claimed ε1 = 1; the true ε1 at δ1 = 0.05 is 1.000, μ = 0.75); halved count
    sensitivity (true ε1 2.93 at δ1), bound (a) above 1 in 50 of 50 (least 1.52), bound (b) in 45 of 50 (the
    selection alone is a coarser output). Seed 0 is one of those."""
    counts_bound, selection_bound = _stage1_audit()
    assert counts_bound <= 1.0 and selection_bound <= 1.0
    sens = ts.count_sensitivity
    monkeypatch.setattr(ts, "count_sensitivity", lambda s: sens(s) / 2)
    plan = two_stage_plan(Privacy(2.0, 0.1, "tight"), 4, 4, **(DEF | WORST))
    mu = plan.releases[0].sensitivity / plan.releases[0].noise_scale * 2  # the true shift over the noise
    assert gaussian_epsilon(mu, 0.05) > 2.5
    counts_bound, selection_bound = _stage1_audit()
    assert counts_bound > 1.0 and selection_bound > 1.0


# ---- stage 2: the fit's sensitivity and audit ---------------------------------------------------------------------

# d = s = 1 (stage 1 selects the one coordinate); every residual at its clip: the fit is (1/(n lambda)) sum_i x_i c_r
# sign(y_i), and replacing (B_X, +Y) by (B_X, -Y) moves it by exactly 2 G / (n lambda), the bound
N2, Y_FAR = 6, 1e3
X2_A, Y2_A = np.ones((N2, 1)), np.full(N2, Y_FAR)
Y2_B = Y2_A.copy()
Y2_B[0] = -Y_FAR
KW2 = DEF | {"s": 1, "blocks": 1, "block_iters": 1}
P2 = Privacy(2.0, 0.1, "tight")  # stage 2 at (1, 0.05)


def test_worst_case_neighbours_attain_the_fit_sensitivity():
    plan = two_stage_plan(P2, N2, 1, **KW2)
    lam, tau = plan.parameters["lambda"], plan.parameters["tau"]
    fits = [ts.strongly_convex_teacher(X2_A, y, loss="squared", lam=lam, residual_clip=1.0, tau=tau, c_x=1.0)[0]
            for y in (Y2_A, Y2_B)]  # fmt: skip
    assert abs(fits[0] - fits[1]) == pytest.approx(plan.parameters["fit sensitivity 2G/(n lambda)"], rel=0.02)
    assert abs(fits[0] - fits[1]) <= plan.releases[1].sensitivity


def test_random_neighbours_stay_within_the_fit_sensitivity():
    rng = np.random.default_rng(5)
    plan = two_stage_plan(Privacy(1.0, 1e-5, "tight"), 40, 3, **(DEF | {"s": 3, "blocks": 4, "B_X": 1.5}))
    lam, tau = plan.parameters["lambda"], plan.parameters["tau"]
    for _ in range(10):
        X, y = rng.normal(size=(40, 3)), rng.normal(scale=3, size=40)
        X2, y2 = X.copy(), y.copy()
        X2[0], y2[0] = 20 * rng.normal(size=3), 50 * rng.normal()
        f = [ts.strongly_convex_teacher(ts.clip_rows_l2(A, 1.5), b, loss="squared", lam=lam, residual_clip=1.0,
                                        tau=tau, c_x=1.5) for A, b in ((X, y), (X2, y2))]  # fmt: skip
        assert np.linalg.norm(f[0] - f[1]) <= plan.releases[1].sensitivity


def _stage2_audit(y2, n_draws=3000, seed=0):
    """ε lower bound from the whole estimator's output (the one coordinate) on the pair (X2_A, Y2_A), (X2_A, y2)."""
    a = [two_stage(X2_A, Y2_A, privacy=P2, rng=np.random.default_rng(seed + 2 * r), **KW2)[0] for r in range(n_draws)]
    b = [two_stage(X2_A, y2, privacy=P2, rng=np.random.default_rng(seed + 2 * r + 1), **KW2)[0] for r in range(n_draws)]
    return epsilon_lower_bound(np.array(a), np.array(b), 0.05)


@pytest.mark.slow
def test_stage2_audit_passes_at_the_stated_epsilon_and_catches_unclipped_rows(monkeypatch):
    """Stage 2 released at (ε2, δ2) = (1, 0.05) on the worst-case pair: the bound stays below 1. With the rows'
    clipping removed (a planted bug), a record x = 10·B_X moves the fit 10 times further than the noise is for:
    caught. Measured at 3,000 draws a side on two disjoint sets of seeds (0 and 10,000): 0.50 and 0.50 correct,
    2.27 and 2.41 with the bug; about 15 s each on 2 busy cores."""
    assert _stage2_audit(Y2_B) <= 1.0
    monkeypatch.setattr(ts, "clip_rows_l2", lambda X, c: X)
    X_far = X2_A.copy()
    X_far[0] = 10.0
    a = [two_stage(X2_A, Y2_A, privacy=P2, rng=np.random.default_rng(2 * r), **KW2)[0] for r in range(3000)]
    b = [two_stage(X_far, Y2_B, privacy=P2, rng=np.random.default_rng(2 * r + 1), **KW2)[0] for r in range(3000)]
    assert epsilon_lower_bound(np.array(a), np.array(b), 0.05) > 1.5
