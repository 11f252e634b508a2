"""The score attack (dpcost.attacks.score; Cai, Wang & Zhang §2.2): the scores are gradients of the log-likelihood
(the Bradley–Terry–Luce item scores of §4 too, and their item attack is sound for resampled outcomes), Theorem 2.1's
soundness (E A = 0 off the data) and completeness (Σ_i E A_i = Σ_j ∂E M_j/∂θ_j, = d for unbiased M) by simulation,
the metrics against brute force and known answers, the repetition summary, a Homer-style SNP tracing demo that
succeeds on a plain mean and fails on a Gaussian-mechanism release, and bad input refused.

Tolerances: simulated means are compared within 4 standard errors (sample sd/√reps, or the exact null SE of the
Mann–Whitney AUC, √((m + n + 1)/(12 m n))); two-sided P(|Z| > 4) = 6·10⁻⁵ per check. Every seed is fixed.
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

from dpcost.attacks.score import (
    METRICS,
    SCORES,
    attack_auc,
    attack_epsilon_lower_bound,
    attack_metrics,
    btl_item_score,
    gaussian_mean_score,
    linear_score,
    logistic_score,
    score,
    score_attack,
    summarise_attack_metrics,
    tpr_at_fpr,
)
from dpcost.errors import ConfigError, DataError

REPS = 2000


def null_auc_se(m, n):
    """SE of the Mann–Whitney AUC when both samples come from one continuous law."""
    return math.sqrt((m + n + 1) / (12 * m * n))


def within_4se(values, target):
    values = np.asarray(values, dtype=float)
    se = values.std(ddof=1) / math.sqrt(values.size)
    return abs(values.mean() - target) <= 4 * se, (values.mean(), se)


# ---------------------------------------------------------------------------------------------------------------
# the three models: data, the estimator M, and the attack statistics of one repetition
# ---------------------------------------------------------------------------------------------------------------


def ols(X, y):
    return np.linalg.lstsq(X, y, rcond=None)[0]


def logistic_mle(X, y):
    """Newton–Raphson (= IRLS) on the logistic log-likelihood, batched over a leading axis of repetitions."""
    b = np.zeros((X.shape[0], X.shape[2]))
    for _ in range(50):
        p = special.expit(np.einsum("rnd,rd->rn", X, b))
        grad = np.einsum("rnd,rn->rd", X, y - p)
        hess = np.einsum("rnd,rn,rne->rde", X, p * (1 - p), X)
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        b += step
        if np.max(np.abs(step)) < 1e-12:
            return b
    raise AssertionError("Newton did not converge (separated data?)")


SIGMA = 2.0  # a non-unit σ checks the 1/σ² of the Gaussian and linear scores


def gaussian_reps(rng, n=50, d=5):
    theta = rng.normal(size=d)
    X = theta + SIGMA * rng.standard_normal((REPS, n, d))
    z = theta + SIGMA * rng.standard_normal((REPS, 1, d))  # a fresh record, independent of X
    M = X.mean(axis=1)
    member = [score_attack(M[r], theta, gaussian_mean_score(X[r], theta, sigma=SIGMA)) for r in range(REPS)]
    outsider = [score_attack(M[r], theta, gaussian_mean_score(z[r], theta, sigma=SIGMA))[0] for r in range(REPS)]
    info_max = 1 / SIGMA**2  # I(θ) = I/σ²
    return np.array(member), np.array(outsider), np.sum((M - theta) ** 2, axis=1), info_max, d


def linear_reps(rng, n=60, d=4):
    beta = rng.normal(size=d)
    X = rng.standard_normal((REPS, n + 1, d))  # row n is the outsider
    y = X @ beta + SIGMA * rng.standard_normal((REPS, n + 1))
    member, outsider, err2 = [], [], []
    for r in range(REPS):
        M = ols(X[r, :n], y[r, :n])
        S = linear_score(X[r], y[r], beta, sigma=SIGMA)
        A = score_attack(M, beta, S)
        member.append(A[:n])
        outsider.append(A[n])
        err2.append(np.sum((M - beta) ** 2))
    return np.array(member), np.array(outsider), np.array(err2), 1 / SIGMA**2, d  # I(β) = E xx'/σ² = I/σ²


def logistic_reps(rng, n=400, d=3):
    beta = np.array([0.5, -0.5, 0.25])
    X = rng.standard_normal((REPS, n + 1, d))
    y = (rng.random((REPS, n + 1)) < special.expit(X @ beta)).astype(float)
    M = logistic_mle(X[:, :n], y[:, :n])
    A = np.array([score_attack(M[r], beta, logistic_score(X[r], y[r], beta)) for r in range(REPS)])
    return A[:, :n], A[:, n], None, None, d


MODELS = {"gaussian_mean": gaussian_reps, "linear": linear_reps, "logistic": logistic_reps}


@pytest.fixture(scope="module", params=list(MODELS))
def reps(request):
    return request.param, MODELS[request.param](np.random.default_rng(2025))


# ---------------------------------------------------------------------------------------------------------------
# scores
# ---------------------------------------------------------------------------------------------------------------


def test_scores_are_gradients_of_the_log_likelihood():
    # S_θ(z) = ∇_θ log f_θ(z), checked by central differences of the log densities (error O(h²) ≈ 1e-10)
    rng = np.random.default_rng(0)
    N, d, h = 7, 3, 1e-5
    x, theta = rng.normal(size=(N, d)), rng.normal(size=d)
    y_lin, y_log = rng.normal(size=N), rng.integers(0, 2, N).astype(float)
    sig = np.array([0.5, 1.0, 2.0])
    logf = {
        "gaussian_mean": lambda t: stats.norm.logpdf(x, t, sig).sum(axis=1),
        "linear": lambda t: stats.norm.logpdf(y_lin, x @ t, SIGMA),
        "logistic": lambda t: y_log * (x @ t) - np.logaddexp(0, x @ t),
    }
    analytic = {
        "gaussian_mean": gaussian_mean_score(x, theta, sigma=sig),
        "linear": linear_score(x, y_lin, theta, sigma=SIGMA),
        "logistic": logistic_score(x, y_log, theta),
    }
    for name, f in logf.items():
        numeric = np.column_stack([(f(theta + h * e) - f(theta - h * e)) / (2 * h) for e in np.eye(d)])
        assert analytic[name].shape == (N, d)
        np.testing.assert_allclose(analytic[name], numeric, atol=1e-7, err_msg=name)


def test_registry_dispatches_to_the_score_functions():
    rng = np.random.default_rng(1)
    x, theta, y = rng.normal(size=(5, 2)), rng.normal(size=2), np.array([0.0, 1, 1, 0, 1])
    assert set(SCORES) == {"gaussian_mean", "linear", "logistic"}
    np.testing.assert_array_equal(score("gaussian_mean", x, theta, sigma=3.0), gaussian_mean_score(x, theta, sigma=3))
    np.testing.assert_array_equal(score("linear", x, theta, y, sigma=0.5), linear_score(x, y, theta, sigma=0.5))
    np.testing.assert_array_equal(score("logistic", x, theta, y), logistic_score(x, y, theta))
    # the attack is the row-wise inner product with M − θ
    M = rng.normal(size=2)
    S = score("logistic", x, theta, y)
    np.testing.assert_allclose(score_attack(M, theta, S), [np.dot(M - theta, s) for s in S])


def btl_data(rng, n=6):
    """A complete comparison graph on n items, both orientations of the pairs present, and BTL outcomes."""
    theta = rng.uniform(-1, 1, n)
    i, j = np.triu_indices(n, 1)
    edges = np.column_stack([i, j])
    edges[::2] = edges[::2, ::-1]  # rows (a, b) with a > b too: the score must not depend on the orientation
    y = (rng.random(len(edges)) < special.expit(theta[edges[:, 0]] - theta[edges[:, 1]])).astype(float)
    return edges, y, theta


def test_btl_item_score_is_the_gradient_of_each_items_log_likelihood():
    # row i = ∇_θ Σ_{comparisons of item i} [y(θ_a − θ_b) − log(1 + e^{θ_a − θ_b})], by central differences; an item
    # with no comparison has a zero row
    rng = np.random.default_rng(4)
    edges, y, theta = btl_data(rng)
    theta = np.append(theta, 0.3)  # item 6: never compared
    S, h = btl_item_score(edges, y, theta), 1e-5

    def loglik(t, i):
        mine = np.any(edges == i, axis=1)
        u = t[edges[mine, 0]] - t[edges[mine, 1]]
        return np.sum(y[mine] * u - np.logaddexp(0, u))

    numeric = [[(loglik(theta + h * e, i) - loglik(theta - h * e, i)) / (2 * h) for e in np.eye(7)] for i in range(7)]
    assert S.shape == (7, 7)
    np.testing.assert_allclose(S, numeric, atol=1e-8)
    np.testing.assert_array_equal(S[6], 0.0)
    # each comparison is in two items' outcomes: Σ_i S_i is twice the score of the data, −2∇L of dpcost.estimators.btl
    from dpcost.estimators.btl import btl_grad

    upper = edges[:, 0] > edges[:, 1]  # btl_grad wants rows (i, j), i < j: flip those rows and their outcomes
    canon, y_canon = np.where(upper[:, None], edges[:, ::-1], edges), np.where(upper, 1 - y, y)
    order = np.lexsort((canon[:, 1], canon[:, 0]))
    np.testing.assert_allclose(S.sum(axis=0), -2 * btl_grad(theta, canon[order], y_canon[order]), atol=1e-12)
    np.testing.assert_allclose(btl_item_score(canon, y_canon, theta), S, atol=1e-15)


def test_btl_item_attack_is_sound_for_resampled_outcomes():
    # §4's non-member: item i's outcomes redrawn independently of the release, so E⟨M − θ, S_i⟩ = 0 whatever M is
    # (here M = θ + the member scores' mean, a release that depends on the data); 2000 repetitions, within 4 SE
    rng = np.random.default_rng(5)
    edges, _, theta = btl_data(rng)
    p = special.expit(theta[edges[:, 0]] - theta[edges[:, 1]])
    outsider = []
    for _ in range(REPS):
        y, fresh = (rng.random((2, len(edges))) < p).astype(float)
        M = theta + btl_item_score(edges, y, theta).mean(axis=0)
        outsider.append(score_attack(M, theta, btl_item_score(edges, fresh, theta)))
    for i, col in enumerate(np.array(outsider).T):
        ok, (mean, se) = within_4se(col, 0.0)
        assert ok, f"item {i}: mean {mean:.4f}, SE {se:.4f}"


# ---------------------------------------------------------------------------------------------------------------
# Theorem 2.1
# ---------------------------------------------------------------------------------------------------------------


def test_soundness_outsider_has_mean_zero(reps):
    # E A_θ(z, M(X)) = 0 for z independent of X (2.4): one outsider per repetition, 2000 repetitions
    name, (_, outsider, err2, info_max, _) = reps
    ok, (mean, se) = within_4se(outsider, 0.0)
    assert ok, f"{name}: mean {mean:.4f}, SE {se:.4f}"
    if err2 is not None:
        # and E|A| ≤ √(E‖M − θ‖²)·√λ_max(I(θ)) (2.4), each side estimated: the 4-SE slack covers the left side's error
        bound = math.sqrt(err2.mean() * info_max)
        assert np.abs(outsider).mean() <= bound + 4 * np.abs(outsider).std(ddof=1) / math.sqrt(REPS), name


def test_completeness_members_sum_to_d(reps):
    # Σ_i E A_θ(x_i, M(X)) = Σ_j ∂E M_j/∂θ_j (2.5). The sample mean (σ known) and OLS are unbiased for every θ, so
    # the right side is d exactly; both sums are then χ²_d (n‖x̄ − θ‖²/σ², ε'H ε/σ²), SE = √(2d/2000) ≈ 0.07.
    # The logistic MLE has bias b(β) = O(1/n) (Cox & Snell 1968), so the right side is d + tr ∂b/∂β = d + O(1/n);
    # measured over 5000 repetitions: +0.19 at n = 100, +0.05 at n = 200, +0.03 at n = 400 (each ± 0.035), i.e.
    # about 20/n. At n = 400 it gets an allowance of 0.1 (twice 20/n) on top of the 4 SE (≈ 0.22).
    name, (member, _, _, _, d) = reps
    sums = member.sum(axis=1)
    mean, se = sums.mean(), sums.std(ddof=1) / math.sqrt(sums.size)
    allowance = 0.1 if name == "logistic" else 0.0
    assert abs(mean - d) <= 4 * se + allowance, f"{name}: Σ A_i averages {mean:.3f} ± {se:.3f}, d = {d}"
    # members are traced: the per-member mean d/n is far from the outsiders' 0 relative to their SEs
    assert mean > d / 2


# ---------------------------------------------------------------------------------------------------------------
# metrics
# ---------------------------------------------------------------------------------------------------------------


def test_auc_of_one_law_is_one_half_and_of_separated_samples_is_one():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=3000), rng.normal(size=2000)
    assert abs(attack_auc(a, b) - 0.5) <= 4 * null_auc_se(3000, 2000)  # SE ≈ 0.0083
    assert attack_auc(a + 100, b) == 1.0
    assert attack_auc(a - 100, b) == 0.0
    assert attack_auc(np.ones(4), np.ones(6)) == 0.5  # all tied: each pair counts ½


def test_auc_matches_brute_force_with_ties():
    rng = np.random.default_rng(4)
    for _ in range(20):
        a, b = rng.integers(0, 6, rng.integers(1, 40)), rng.integers(0, 6, rng.integers(1, 40))
        brute = np.mean((a[:, None] > b[None, :]) + 0.5 * (a[:, None] == b[None, :]))
        assert attack_auc(a, b) == pytest.approx(brute, abs=1e-12)


def test_tpr_at_fpr_known_answers():
    non, mem = np.arange(10.0), np.arange(10.0) + 0.5
    # fpr 0.1 → k = 1 → t = 8 (2nd largest non-member): FPR 1/10, members above 8 are 8.5 and 9.5
    assert tpr_at_fpr(mem, non, 0.1) == 0.2
    assert tpr_at_fpr(mem, non, 0.05) == 0.1  # k = 0 → t = 9
    assert tpr_at_fpr(mem, non, 0.0) == 0.1
    assert tpr_at_fpr(mem, non, 1.0) == 1.0  # t = −∞
    # k = ⌊0.29·100⌋ = 29 (in floats 0.29·100 = 28.999…96): t = 70, 30 members above it (28 would give 0.29)
    assert tpr_at_fpr(np.arange(100.0) + 0.5, np.arange(100.0), 0.29) == 0.30
    # ties at t count as non-members: with k = 1, t = 1, and no non-member exceeds it (empirical FPR 0 ≤ 0.2)
    assert tpr_at_fpr([1.0, 1.0, 2.0, 3.0], [0, 0, 0, 1, 1], 0.2) == 0.5
    # N(2, 1) against N(0, 1): TPR(0.05) = Φ(2 − z₀.₉₅) = 0.639; binomial SE 0.0034 and the threshold's own
    # sampling error (√(0.05·0.95/n)/φ(1.645)·φ(0.355) ≈ 0.0056) give SE ≈ 0.0066, so 4 SE ≈ 0.027
    rng = np.random.default_rng(5)
    tpr = tpr_at_fpr(rng.normal(2, 1, 20_000), rng.normal(0, 1, 20_000), 0.05)
    assert tpr == pytest.approx(stats.norm.cdf(2 - stats.norm.ppf(0.95)), abs=0.027)


def test_epsilon_lower_bound_zero_for_one_law_large_for_separated():
    # one law: the held-out Clopper–Pearson bound is positive only if an interval misses (≤ α/2 = 2.5 % a run);
    # seed 0 gives 0, and over 40 seeds P(≥ 5 positive) < 0.01 under Binomial(40, 0.025)
    rng = np.random.default_rng(6)
    a, b = rng.normal(size=1000), rng.normal(size=1000)
    assert attack_epsilon_lower_bound(a, b, 1e-5, seed=0) == 0.0
    positive = sum(attack_epsilon_lower_bound(a, b, 1e-5, seed=s) > 0 for s in range(40))
    assert positive <= 4
    # separated: half of each sample (500 draws) bounds the chosen event; with no crossing, k = 500 of 500 and 0 of
    # 500, so TPR_lo = 0.025^(1/500) and FPR_hi = 1 − 0.025^(1/500): ε_lb = log((0.99265 − δ)/0.00735) ≈ 4.91, the
    # most 500 draws a side can show. Seed 0 gets 4.89: among equally good pilot thresholds, audit.choose_event
    # keeps the first, at the edge of the pilot members, and 4 held-out members fall below it (496 of 500)
    eps = attack_epsilon_lower_bound(a + 20, b, 1e-5)
    q = 0.025 ** (1 / 500)
    assert 4.5 < eps <= math.log((q - 1e-5) / (1 - q)) + 1e-12
    # the rows' order does not matter (the split is a random one, seeded)
    assert attack_epsilon_lower_bound(np.sort(a + 20), np.sort(b), 1e-5) == eps


def test_metrics_and_their_summary():
    rng = np.random.default_rng(7)
    rows = []
    for group, shift in (("weak", 0.2), ("strong", 3.0)):
        for rep in range(4):
            m = attack_metrics(rng.normal(shift, 1, 400), rng.normal(0, 1, 400), delta=1e-5, seed=rep)
            rows.append({"group": group, "rep": rep, **m})
    per_rep = pd.DataFrame(rows)
    assert set(METRICS) <= set(per_rep.columns)
    out = summarise_attack_metrics(per_rep, by="group")
    assert list(out.columns[:2]) == ["group", "n_reps"]
    assert {f"{m}{s}" for m in METRICS for s in ("", "_se")} <= set(out.columns)
    strong = out.set_index("group").loc["strong"]
    ref = per_rep[per_rep.group == "strong"]
    for m in METRICS:
        assert strong[m] == pytest.approx(ref[m].mean())
        assert strong[f"{m}_se"] == pytest.approx(ref[m].std(ddof=1) / 2)  # sd/√4
    assert strong["n_reps"] == 4 and strong["auc"] > 0.95 and strong["epsilon_lb"] > 1
    assert out.set_index("group").loc["weak", "auc"] < 0.7
    overall = summarise_attack_metrics(per_rep)
    assert len(overall) == 1 and overall["n_reps"].iloc[0] == 8
    one = summarise_attack_metrics(per_rep.iloc[:1], by=["group"])
    assert np.isnan(one["auc_se"].iloc[0])


# ---------------------------------------------------------------------------------------------------------------
# traceability demo (§7: θ replaced by a public reference estimate; Homer et al. 2008)
# ---------------------------------------------------------------------------------------------------------------


def test_snp_tracing_succeeds_on_the_mean_and_fails_under_the_gaussian_mechanism():
    rng = np.random.default_rng(8)
    d, m, n_ref = 2000, 120, 2000
    freq = rng.uniform(0.05, 0.5, d)
    genotypes = lambda k: rng.binomial(2, freq, size=(k, d)).astype(float)  # noqa: E731
    members, outsiders, reference = genotypes(m), genotypes(m), genotypes(n_ref)
    theta_hat = reference.mean(axis=0)
    sigma = np.sqrt(np.clip(theta_hat * (1 - theta_hat / 2), 0.05, None))  # sd of Binomial(2, p̂), p̂ = θ̂/2
    S_in = gaussian_mean_score(members, theta_hat, sigma=sigma)
    S_out = gaussian_mean_score(outsiders, theta_hat, sigma=sigma)
    release = members.mean(axis=0)
    # a member moves the mean by (x − θ)/m: E A ≈ d/m ≈ 17, against an sd ≈ √(d(1/m + 1/n_ref)) ≈ 4.2,
    # so AUC ≈ Φ(17/(4.2√2)) = Φ(2.8) ≈ 0.997
    auc = attack_auc(score_attack(release, theta_hat, S_in), score_attack(release, theta_hat, S_out))
    assert auc > 0.95
    # Gaussian mechanism at (ε, δ) = (0.9, 1e-5): genotypes in [0, 2]^d, replace-one ℓ2 sensitivity 2√d/m ≈ 0.75,
    # σ_noise = Δ√(2 log(1.25/δ))/ε ≈ 4.0 per coordinate. The noise term ⟨w, S⟩ has sd ≈ 4·√(Σ 1/σ_j²) ≈ 320
    # against the signal 17: AUC ≈ Φ(17/(320√2)) ≈ 0.515, within 4 null SE (4·0.037 = 0.15) of ½
    noise_sd = 2 * math.sqrt(d) / m * math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.9
    private = release + noise_sd * rng.standard_normal(d)
    auc_dp = attack_auc(score_attack(private, theta_hat, S_in), score_attack(private, theta_hat, S_out))
    assert abs(auc_dp - 0.5) <= 4 * null_auc_se(m, m)


# ---------------------------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: gaussian_mean_score(np.ones(3), np.ones(3)), DataError),  # one record must be (1, d)
        (lambda: gaussian_mean_score(np.ones((2, 3)), np.ones(2)), DataError),
        (lambda: gaussian_mean_score(np.ones((2, 3)), np.ones(3), sigma=0.0), ConfigError),
        (lambda: gaussian_mean_score(np.ones((2, 3)), np.ones(3), sigma=[1.0, 2.0]), ConfigError),
        (lambda: gaussian_mean_score([[np.nan, 1.0]], [0.0, 0.0]), DataError),
        (lambda: linear_score(np.ones((2, 3)), np.ones(3), np.ones(3)), DataError),
        (lambda: linear_score(np.ones((2, 3)), np.ones(2), np.ones(3), sigma=[1.0, 1, 1]), ConfigError),
        (lambda: logistic_score(np.ones((2, 3)), [0.0, 2.0], np.ones(3)), DataError),
        (lambda: btl_item_score([[0, 1]], [0.5], np.zeros(2)), DataError),  # outcomes are 0 or 1
        (lambda: btl_item_score([[0, 0]], [1.0], np.zeros(2)), DataError),  # no self-comparison
        (lambda: btl_item_score([[0, 2]], [1.0], np.zeros(2)), DataError),  # no such item
        (lambda: btl_item_score([[0.0, 1.0]], [1.0], np.zeros(2)), DataError),  # indices are integers
        (lambda: btl_item_score([[0, 1]], [1.0, 0.0], np.zeros(2)), DataError),  # one outcome per comparison
        (lambda: score("poisson", np.ones((2, 3)), np.ones(3)), ConfigError),
        (lambda: score("logistic", np.ones((2, 3)), np.ones(3)), DataError),
        (lambda: score("gaussian_mean", np.ones((2, 3)), np.ones(3), y=np.ones(2)), DataError),
        (lambda: score("logistic", np.ones((2, 3)), np.ones(3), np.ones(2), sigma=1.0), ConfigError),
        (lambda: score_attack(np.ones(2), np.ones(3), np.ones((4, 3))), DataError),
        (lambda: attack_auc([], [1.0]), DataError),
        (lambda: tpr_at_fpr([1.0], [0.0], 1.5), ConfigError),
        (lambda: attack_epsilon_lower_bound([1.0], [0.0, 1.0], 1e-5), DataError),
        (lambda: attack_epsilon_lower_bound([1.0, 2], [0.0, 1.0], 1.0), ConfigError),
        (lambda: attack_epsilon_lower_bound([1.0, 2], [0.0, 1.0], 1e-5, alpha=0.0), ConfigError),
        (lambda: summarise_attack_metrics(pd.DataFrame({"auc": [0.5]})), DataError),
        (lambda: summarise_attack_metrics(pd.DataFrame(dict.fromkeys(METRICS, [np.nan]))), DataError),
    ],
)
def test_bad_input_is_refused(call, error):
    with pytest.raises(error):
        call()


def test_dp_auc_ceiling_is_the_pure_dp_closed_form_and_randomised_response_attains_the_roc_ceiling():
    from dpcost.attacks.score import dp_auc_ceiling, dp_roc_ceiling

    for eps in (0.1, 0.5, 1.0, 3.0):
        assert dp_auc_ceiling(eps, 0.0) == pytest.approx(np.exp(eps) / (1 + np.exp(eps)), abs=1e-8)
    assert dp_auc_ceiling(0.0, 0.0) == pytest.approx(0.5)
    assert dp_auc_ceiling(0.5, 0.05) > dp_auc_ceiling(0.5, 0.0)
    # randomised response at ε reports the truth with probability e^ε/(1 + e^ε): its test "member iff it says so"
    # has FPR 1/(1 + e^ε) and TPR e^ε/(1 + e^ε), a point of the ceiling
    eps = 0.7
    f = 1 / (1 + np.exp(eps))
    assert dp_roc_ceiling(f, eps, 0.0) == pytest.approx(1 - f)
    with pytest.raises(ConfigError):
        dp_auc_ceiling(0.5, 1.0)
