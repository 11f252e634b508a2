"""Low-dimensional DP means: Alg. 3.1 (noisy truncated mean) and Karwa & Vadhan's Alg. 4 — noise scales, the
printed calibration's validity, the closed-form risk against simulation, accuracy, worst-pair audits that catch
planted bugs, and bad input refused."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpcost.dp.accountant import dpa
from dpcost.dp.audit import exact_epsilon
from dpcost.dp.mechanisms import gaussian_delta, gaussian_sigma
from dpcost.dp.privacy import Privacy
from dpcost.dp.samplers import GRID_BITS, grid_scale
from dpcost.errors import DataError, PrivacyError
from dpcost.estimators import dp_mean as dm
from dpcost.estimators.dp_mean import (
    clipped_normal_moments,
    dp_mean,
    dp_mean_expected_error,
    dp_mean_plan,
    karwa_vadhan_mean,
    karwa_vadhan_mean_plan,
    kv_counts,
    kv_half_width,
    kv_private_centres,
    laplace_composition_scale,
    printed_sigma,
)

GRID = 2.0**-GRID_BITS


# ---- Alg. 3.1: the plan ------------------------------------------------------------------------------------------


def test_dp_mean_noise_scales_are_the_printed_and_the_analytic_sigma():
    n, d, R = 400, 6, 2.0
    sens = 2 * R * math.sqrt(d) / n
    paper = dp_mean_plan(Privacy(0.5, 1e-3), n, d, R=R).releases[0]
    tight = dp_mean_plan(Privacy(0.5, 1e-3, "tight"), n, d, R=R).releases[0]
    assert paper.sensitivity == pytest.approx(sens, rel=1e-15) and paper.norm == "l2"
    printed = math.sqrt(4 * R**2 * d * math.log(1e3) / (n**2 * 0.5**2))  # 004, Alg. 3.1, as printed
    # raised by the grid's rounding (√d steps of σ/2^20) and the 1e-6 margin only
    assert paper.noise_scale == grid_scale(printed, sens, d, "l2", "gaussian") and paper.noise_scale < printed * 1.0001
    analytic = gaussian_sigma(sens, 0.5, 1e-3)
    assert (
        tight.noise_scale == grid_scale(analytic, sens, d, "l2", "gaussian") and tight.noise_scale < analytic * 1.0001
    )
    assert tight.noise_scale < paper.noise_scale  # here (δ = 1e-3) the printed σ is valid but not tight


def test_printed_sigma_is_refused_where_it_is_not_private():
    n, d, R = 400, 6, 2.0
    sens = 2 * R * math.sqrt(d) / n
    # at (0.5, 1e-5) the printed σ = Δ√log(1/δ)/ε spends more than claimed: exact δ(0.5) = 1.68e-5, ε(1e-5) = 0.520
    with pytest.raises(PrivacyError, match="printed noise variance .* is not"):
        dp_mean_plan(Privacy(0.5, 1e-5), n, d, R=R)
    with pytest.warns(RuntimeWarning, match="PRIVACY WARNING"):
        plan = dp_mean_plan(Privacy(0.5, 1e-5, on_invalid="warn"), n, d, R=R)
    assert not plan.proven and plan.composition.startswith("NOT PROVEN")
    s = printed_sigma(n, d, R, 0.5, 1e-5)
    assert gaussian_delta(s, sens, 0.5) == pytest.approx(1.68e-5, rel=1e-2)
    worst = exact_epsilon(
        stats.norm(0, s).logpdf, stats.norm(sens, s).logpdf, 1e-5, window=(-40 * s, sens + 40 * s), n_grid=513
    )
    assert worst == pytest.approx(0.520, abs=1e-3)
    # inside its range it is accepted and proven: (0.5, 1e-3) has exact δ(0.5) = 3.3e-4
    ok = dp_mean_plan(Privacy(0.5, 1e-3), n, d, R=R)
    assert ok.proven and ok.parameters["exact_delta_at_epsilon"] == pytest.approx(3.25e-4, rel=1e-2)
    # the paper's own design (0.5, 10/n^1.1): valid at n = 5,000, not at n = 100,000
    assert dp_mean_plan(Privacy(0.5, "10/n^1.1"), 5000, 20, R=R).proven
    with pytest.raises(PrivacyError, match="not .*-DP"):
        dp_mean_plan(Privacy(0.5, "10/n^1.1"), 100_000, 20, R=R)
    # the tight calibration has no such range
    assert dp_mean_plan(Privacy(0.5, "10/n^1.1", "tight"), 100_000, 20, R=R).proven


# ---- Alg. 3.1: the risk ------------------------------------------------------------------------------------------


def test_clipped_normal_moments_match_numerical_integration():
    for m, s, R in ((0.3, 1.0, 1.0), (2.5, 0.7, 1.5), (-4.0, 2.0, 1.0), (0.0, 1.0, 50.0)):
        x = stats.norm(m, s)
        inner = [
            integrate.quad(lambda t, k=k, x=x: t**k * x.pdf(t), -R, R, epsabs=1e-14, epsrel=1e-13)[0] for k in (1, 2)
        ]
        tails = x.cdf(-R), x.sf(R)
        mean = inner[0] - R * tails[0] + R * tails[1]
        second = inner[1] + R**2 * (tails[0] + tails[1])
        got_mean, got_var = clipped_normal_moments(m, s, R)
        assert got_mean == pytest.approx(mean, abs=1e-12)
        assert got_var == pytest.approx(second - mean**2, abs=1e-12)


@pytest.mark.parametrize(
    "case",
    [
        # nothing clipped (R = 20 is ≥ 9.5 sd from every mean): E = tr(Σ)/n + dσ², both terms of the same size
        dict(privacy=Privacy(50.0, 1e-3, "tight"), R=20.0, mu=[0.5, -1.0, 2.0, 0.0], sd=[1.0, 2.0, 0.5, 1.0]),
        # heavy clipping (R = 1.5 against means up to 2.5): the bias term dominates; printed σ, valid at (2, 0.1)
        dict(privacy=Privacy(2.0, 0.1), R=1.5, mu=[1.5, -1.0, 0.5, 2.5], sd=[1.0, 1.0, 1.0, 1.0]),
    ],
    ids=["unclipped", "clipped"],
)
def test_dp_mean_squared_error_matches_its_closed_form(case):
    n, N = 50, 3000
    mu, sd = np.array(case["mu"]), np.array(case["sd"])
    risk = dp_mean_expected_error(case["privacy"], n, R=case["R"], mu=mu, sd=sd)
    if case["R"] == 20.0:
        sigma = dp_mean_plan(case["privacy"], n, 4, R=20.0).releases[0].noise_scale
        assert risk.total == pytest.approx(np.sum(sd**2) / n + 4 * sigma**2, rel=1e-12)
        assert 0.3 < risk.noise / risk.sampling < 3
    else:
        assert risk.clipping_bias > 5 * (risk.sampling + risk.noise)
    rng = np.random.default_rng(11)
    loss = np.empty(N)
    for i in range(N):
        X = mu + sd * rng.normal(size=(n, mu.size))
        loss[i] = np.sum((dp_mean(X, privacy=case["privacy"], rng=rng, R=case["R"]) - mu) ** 2)
    # The N losses are i.i.d. with mean risk.total, so their average is within 4 standard errors sd(loss)/√N of it
    # unless a 4-sigma event happened (CLT; probability ≈ 6e-5; here N = 3000 and sd(loss) is estimated from the
    # same draws, its relative error ~ 1/√(2N) ≈ 1 %, negligible). The closed form is exact, so any bias in it
    # larger than 4 SE — 4.5 % of the total unclipped, 0.35 % clipped — fails the test.
    se = loss.std(ddof=1) / math.sqrt(N)
    assert abs(loss.mean() - risk.total) <= 4 * se


def test_dp_mean_recovers_the_mean_as_n_and_epsilon_grow():
    mu = np.array([3.0, -2.0, 0.5, 7.0])
    rng = np.random.default_rng(5)
    errs = []
    for n, eps in ((200, 0.5), (20_000, 5.0)):
        p = Privacy(eps, 1e-6, "tight")
        e = [np.linalg.norm(dp_mean(mu + rng.normal(size=(n, 4)), privacy=p, rng=rng, R=12.0) - mu) for _ in range(20)]
        errs.append(np.mean(e))
        # R = 12 clips nothing that matters here; the risk is tr(Σ)/n + dσ² and the mean error is below its root
        assert np.mean(e) < math.sqrt(dp_mean_expected_error(p, n, R=12.0, mu=mu, sd=1.0).total) * 1.2
    assert errs[1] < errs[0] / 20  # 0.0146 vs 0.92 (mostly the noise at n = 200, eps = 0.5)


# ---- Alg. 3.1: a worst-pair audit of the real function ------------------------------------------------------------


def worst_pair(n=40, d=5, R=1.0, seed=3):
    """X and X′ differing in row 0 only, at +3R and −3R in every coordinate: after clipping ±R, the pair on which
    ‖X̄_R − X̄′_R‖₂ = 2R√d/n, the replace-one ℓ2 sensitivity."""
    X = np.random.default_rng(seed).uniform(-R, R, size=(n, d))
    X2 = X.copy()
    X[0], X2[0] = 3 * R, -3 * R
    return X, X2


def gaussian_audit(release, X, X2, plan, *, pairs=500, seed=0):
    """Audit a Gaussian release on one neighbouring pair through the function itself.

    1. Attained sensitivity: with a common seed the noise integers are identical (the exact sampler draws them
       independently of the value), so ‖M(X) − M(X′)‖ is ‖f(X) − f(X′)‖ up to √d grid steps of rounding.
    2. Noise scale: two releases on X with independent noise differ by N(0, 2σ²) per coordinate, whatever f is;
       σ̂² = mean(diff²)/2 over pairs·d differences has relative SE √(2/(pairs·d)), and σ̂ half that.
    3. Exact (ε, δ) curve of the pair: the two output laws are N(f, σ²I) and N(f′, σ²I); their privacy loss depends
       only on the projection on f − f′, so the curve is that of N(0, σ²) against N(‖f − f′‖, σ²), computed exactly
       by :func:`exact_epsilon` — at the plan's σ, and at an upper 4-SE confidence bound on the measured σ.
    """
    d = X.shape[1]
    attained = np.linalg.norm(
        release(X, rng=np.random.default_rng(seed)) - release(X2, rng=np.random.default_rng(seed))
    )
    rng = np.random.default_rng(seed + 1)
    diffs = np.array([release(X, rng=rng) - release(X, rng=rng) for _ in range(pairs)])
    sigma_hat = math.sqrt(np.mean(diffs**2) / 2)
    rel_se = math.sqrt(2 / diffs.size) / 2
    sigma = plan.releases[0].noise_scale

    def eps_at(s, sens):
        p, q = stats.norm(0, s).logpdf, stats.norm(sens, s).logpdf
        return exact_epsilon(p, q, plan.delta, window=(-40 * s, sens + 40 * s), n_grid=513)

    return {
        "attained": attained,
        "rounding": math.sqrt(d) * sigma * GRID,
        "sigma_ratio": sigma_hat / sigma,
        "sigma_band": 4 * rel_se,
        "epsilon": eps_at(sigma, attained),
        "epsilon_measured_noise": eps_at(sigma_hat * (1 + 4 * rel_se), attained),
    }


@pytest.mark.parametrize("privacy", [Privacy(0.5, 1e-5, "tight"), Privacy(0.5, 1e-3)], ids=["tight", "paper"])
def test_dp_mean_audit_on_the_worst_pair(privacy):
    X, X2 = worst_pair()
    n, d = X.shape
    plan = dp_mean_plan(privacy, n, d, R=1.0)
    a = gaussian_audit(lambda Z, rng: dp_mean(Z, privacy=privacy, rng=rng, R=1.0), X, X2, plan)
    assert abs(a["attained"] - plan.releases[0].sensitivity) <= a["rounding"] + 1e-15  # the worst case is reached
    assert abs(a["sigma_ratio"] - 1) <= a["sigma_band"]
    assert a["epsilon"] <= privacy.epsilon
    if privacy.calibration == "tight":
        assert a["epsilon"] > privacy.epsilon * (1 - 1e-4)  # exact: the budget is spent, not more
    else:
        assert a["epsilon"] == pytest.approx(0.428, abs=2e-3)  # the printed σ at δ = 1e-3 is conservative


def test_dp_mean_audit_catches_planted_bugs(monkeypatch):
    privacy = Privacy(0.5, 1e-5, "tight")
    X, X2 = worst_pair()
    n, d = X.shape
    plan = dp_mean_plan(privacy, n, d, R=1.0)

    def release(Z, rng):
        return dp_mean(Z, privacy=privacy, rng=rng, R=1.0)

    with monkeypatch.context() as m:  # bug 1: the clipping removed
        m.setattr(dm, "truncated_mean", lambda Z, R: Z.mean(axis=0))
        a = gaussian_audit(release, X, X2, plan, pairs=50)
    assert a["attained"] == pytest.approx(3 * plan.releases[0].sensitivity, abs=a["rounding"])
    assert a["epsilon"] > 1.5  # 0.5 claimed

    real_add_noise = dm.add_noise
    with monkeypatch.context() as m:  # bug 2: σ halved
        m.setattr(
            dm, "add_noise", lambda v, kind, scale, rng, sampler: real_add_noise(v, kind, scale / 2, rng, sampler)
        )
        a = gaussian_audit(release, X, X2, plan)
    assert abs(a["sigma_ratio"] - 0.5) <= a["sigma_band"] and abs(a["sigma_ratio"] - 1) > a["sigma_band"]
    assert a["epsilon_measured_noise"] > 0.9  # even the upper confidence bound on σ spends about twice the claim


# ---- Karwa & Vadhan ------------------------------------------------------------------------------------------------


def test_kv_plan_scales_and_budget():
    n, d, sigma, R_range = 5000, 20, 1.0, 10.0
    w = 4 * sigma * math.sqrt(math.log(n / 0.05))
    assert kv_half_width(sigma, n, 0.05) == pytest.approx(w)
    paper = karwa_vadhan_mean_plan(
        Privacy(0.5, 1e-5), n, d, sigma=sigma, R_range=R_range, beta=0.05, range_fraction=0.5
    )
    hist, mean = paper.releases
    assert paper.parameters["bins_per_coordinate"] == 21 and paper.parameters["half_width"] == pytest.approx(w)
    # pure DP by basic composition: 2d counts at Laplace(2d/ε₁), d means at Laplace((2w/n)·d/ε₂), ε₁ = ε₂ = ε/2
    assert hist.sensitivity == 1.0 and hist.count == 2 * d
    assert hist.noise_scale == grid_scale(2 * d / 0.25, 1.0, 1, "l1", "laplace")  # + 1 grid step, 1e-6 margin
    assert mean.sensitivity == pytest.approx(2 * w / n) and mean.count == d
    assert mean.noise_scale == grid_scale(2 * w / n * d / 0.25, mean.sensitivity, 1, "l1", "laplace")
    assert hist.count * hist.epsilon + mean.count * mean.epsilon == pytest.approx(0.5)
    # tight: the same releases, less noise, and their joint PLD composition stays within (ε, δ)
    tight = karwa_vadhan_mean_plan(
        Privacy(0.5, 1e-5, "tight"), n, d, sigma=sigma, R_range=R_range, beta=0.05, range_fraction=0.5
    )
    th, tm = tight.releases
    assert th.noise_scale < 0.6 * hist.noise_scale and tm.noise_scale < 0.8 * mean.noise_scale
    lib, pld, _ = dpa()
    acc = pld.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(lib.SelfComposedDpEvent(lib.LaplaceDpEvent(th.noise_scale / th.sensitivity), th.count))
    acc.compose(lib.SelfComposedDpEvent(lib.LaplaceDpEvent(tm.noise_scale / tm.sensitivity), tm.count))
    assert acc.get_epsilon(1e-5) <= 0.5
    assert laplace_composition_scale(1, 2.0, 1e-9) == pytest.approx(0.5, rel=1e-3)  # one release: ≈ pure 1/ε


def test_kv_bins_and_private_centres():
    sigma, r = 1.0, 3
    X = np.array([[-0.5, 0.5, 3.49, 3.51, -3.6, 100.0]]).T  # one coordinate
    counts = kv_counts(X, sigma, r)[0]  # bins (k − ½, k + ½], k = −3 … 3
    assert counts.tolist() == [0, 0, 1, 1, 0, 0, 1]  # −0.5 → k = −1, 0.5 → 0, 3.49 → 3; 3.51, −3.6, 100 outside
    # replacing one record changes at most two counts per coordinate, by one each
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(30, 4)) * 2
    Z2 = Z.copy()
    Z2[0] = Z[0] + 1.3
    assert np.abs(kv_counts(Z, 1.0, 5) - kv_counts(Z2, 1.0, 5)).sum(axis=1).max() <= 2
    # with little noise the centre is the bin of the mean
    mu = np.array([2.2, -4.7, 0.1])
    W = mu + rng.normal(size=(2000, 3))
    c = kv_private_centres(W, sigma=1.0, r=10, scale=1.0, rng=rng, sampler="exact")
    assert c.tolist() == [2.0, -5.0, 0.0]


def test_kv_recovers_the_mean_as_n_and_epsilon_grow():
    mu = np.array([2.3, -4.6, 7.2])
    rng = np.random.default_rng(9)
    errs = []
    for n, eps in ((500, 0.5), (20_000, 5.0)):
        p = Privacy(eps, 1e-6)
        e = [
            np.linalg.norm(
                karwa_vadhan_mean(mu + rng.normal(size=(n, 3)), privacy=p, rng=rng, sigma=1.0, R_range=10.0) - mu
            )
            for _ in range(20)
        ]
        errs.append(np.mean(e))
    # at n = 20,000, ε = 5 the Laplace scale is 2w·d/(nε₂) = 0.0017 and the sampling sd 0.007 a coordinate
    assert errs[1] < 0.05 and errs[1] < errs[0] / 10


def test_kv_audit_on_the_worst_pair_and_a_planted_bug(monkeypatch):
    """Pure Laplace releases: on a pair whose releases' means differ by Δ, the exact privacy loss of a Laplace(b)
    vector release is ‖Δ‖₁/b (attained on a set of positive probability). The pair moves row 0 from μ + 100 to
    μ − 100 in every coordinate: outside every histogram bin in both, so the noisy histograms agree (common seed),
    and the clipped means differ by the full 2w/n per coordinate."""
    n, d = 200, 3
    privacy = Privacy(4.0, 1e-6)
    kw = dict(sigma=1.0, R_range=10.0)
    mu = np.array([2.0, -4.0, 7.0])
    X = mu + np.random.default_rng(1).normal(size=(n, d))
    X2 = X.copy()
    X[0], X2[0] = mu + 100, mu - 100
    plan = karwa_vadhan_mean_plan(privacy, n, d, **kw, beta=0.05, range_fraction=0.5)
    hist, mean = plan.releases

    def loss(**over):
        out = karwa_vadhan_mean(X, privacy=privacy, rng=np.random.default_rng(7), **kw)
        out2 = karwa_vadhan_mean(X2, privacy=privacy, rng=np.random.default_rng(7), **kw)
        return np.abs(out - out2)

    delta_mean = loss()
    assert delta_mean == pytest.approx(np.full(d, mean.sensitivity), abs=mean.noise_scale * GRID * 2)
    eps_mean = delta_mean.sum() / mean.noise_scale
    # the histogram step, on a pair whose replaced row changes bins in every coordinate: ‖Δcounts‖₁ = 2d
    Y, Y2 = X.copy(), X.copy()
    Y[0], Y2[0] = mu + 2.0, mu - 2.0
    eps_hist = np.abs(kv_counts(Y, 1.0, 10) - kv_counts(Y2, 1.0, 10)).sum() / hist.noise_scale
    assert eps_hist == pytest.approx(2 * d / hist.noise_scale)
    assert eps_mean <= plan.parameters["epsilon_mean"] and eps_hist <= plan.parameters["epsilon_range"]
    assert eps_mean + eps_hist == pytest.approx(privacy.epsilon, rel=1e-5)  # the whole budget, no more

    # the released noise has the plan's Laplace scale: on X (all bins certain) two releases differ by the
    # difference of two Laplace(b) draws, of variance 4b²; its square has relative sd √56/4 = 1.87, so over 3·500
    # differences b̂ has relative standard error 1.87/√1500/2 = 2.4 %
    rng = np.random.default_rng(2)
    diffs = np.array(
        [
            karwa_vadhan_mean(X, privacy=privacy, rng=rng, **kw) - karwa_vadhan_mean(X, privacy=privacy, rng=rng, **kw)
            for _ in range(500)
        ]
    )
    assert abs(math.sqrt(np.mean(diffs**2) / 4) / mean.noise_scale - 1) <= 4 * 0.024

    with monkeypatch.context() as m:  # planted bug: the mean step without clipping
        m.setattr(dm, "kv_clipped_mean", lambda Z, centres, w: Z.mean(axis=0))
        bad = loss()
    assert bad == pytest.approx(np.full(d, 200 / n))
    assert bad.sum() / mean.noise_scale > 5 * plan.parameters["epsilon_mean"]


# ---- bad input ------------------------------------------------------------------------------------------------------


def test_bad_input_is_refused():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    p = Privacy(0.5, 1e-3)
    with pytest.raises(PrivacyError, match="R must"):
        dp_mean(X, privacy=p, rng=rng, R=0.0)
    with pytest.raises(PrivacyError, match="R must"):
        dp_mean(X, privacy=p, rng=rng, R=math.inf)
    with pytest.raises(PrivacyError, match="replace-one"):
        dp_mean(X, privacy=Privacy(0.5, 1e-3, neighbours="add_remove"), rng=rng, R=1.0)
    with pytest.raises(PrivacyError, match="delta"):
        dp_mean(X, privacy=Privacy(0.5, 1.0), rng=rng, R=1.0)
    with pytest.raises(DataError, match="shape"):
        dp_mean(X[:, 0], privacy=p, rng=rng, R=1.0)
    with pytest.raises(PrivacyError, match="sd"):
        dp_mean_expected_error(p, 20, R=1.0, mu=[0.0], sd=0.0)
    bad = X.copy()
    bad[1, 2] = np.nan
    with pytest.raises(DataError, match="NaN"):
        dp_mean(bad, privacy=p, rng=rng, R=1.0)
    with pytest.raises(DataError, match="NaN"):
        karwa_vadhan_mean(bad, privacy=p, rng=rng, sigma=1.0, R_range=5.0)
    for kw, msg in (
        (dict(sigma=0.0, R_range=5.0), "sigma must"),
        (dict(sigma=1.0, R_range=-5.0), "R_range must"),
        (dict(sigma=1.0, R_range=5.0, beta=1.0), "beta must"),
        (dict(sigma=1.0, R_range=5.0, range_fraction=1.0), "range_fraction must"),
        (dict(sigma=1e-6, R_range=100.0), "histogram bins"),
    ):
        with pytest.raises(PrivacyError, match=msg):
            karwa_vadhan_mean(X, privacy=p, rng=rng, **kw)
    with pytest.raises(PrivacyError, match="replace-one"):
        karwa_vadhan_mean(X, privacy=Privacy(0.5, 1e-3, neighbours="add_remove"), rng=rng, sigma=1.0, R_range=5.0)
