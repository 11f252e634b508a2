"""Targeted membership inference (dpcost.attacks.targeted; LiRA, Carlini et al. S&P 2022) on a synthetic population
with one planted heavy row: OLS gives the heavy row away and not an average row; AdaSSP at ε = 1 (proven) stays
within the (ε, δ) ceiling; an SSP whose noise is a tenth of its plan's, labelled ε = 1, is caught (ε_lb > 1).

Population: n = 10,000 rows, x ~ N(0, I₃/3), y = x'β + N(0, 0.05²); the heavy row sits at x = −4β/‖β‖ with
y = 1.5, a residual of 5.4 (≈ 110σ) and leverage 16× the mean (the population's highest). Subsamples of m = 1,000;
250 shadow releases per side fit the attack, 1,000 per side score it (6 s for the file on one core).

Tolerances, from the sampling error of the AUC: its standard error is Hanley & McNeil's (1982)
SE² = [A(1 − A) + (n₁ − 1)(Q₁ − A²) + (n₀ − 1)(Q₂ − A²)]/(n₁n₀), Q₁ = A/(2 − A), Q₂ = 2A²/(1 + A), which at A = ½ and
n₁ = n₀ = 1,000 is √(2,000/(12·10⁶)) = 0.0129. "≈ 0.5" is |A − ½| ≤ 3 SE (two-sided P = 0.003 under A = ½); the
average row's true AUC under the population model is Φ(μ/√2), μ = |e/σ|√h/(1 − h) (h its leverage in the subsample,
e its residual; Dorseuil, Atif & Cappé 2026), which the test checks is within 0.01 of ½. "Within the ceiling" is
A ≤ ceiling + 2 SE and ε_lb ≤ ε (ε_lb is a 95 % lower bound: P(ε_lb > ε) ≤ 0.05 for a truly ε-DP release).
Power of the planted checks, measured over rng seeds 0–4: at noise ÷ 10 the attack reaches A = 0.81–0.84 against a
ceiling of 0.73 (+ 2 SE = 0.75) in all five, but ε_lb only 1.2–1.9 (> 1 in all five, by a thin margin at the
worst); at ÷ 20, A = 0.97 and ε_lb = 3.2–4.2. So ÷ 10 is tested on the AUC, ÷ 20 on ε_lb (at ÷ 100: A = 1 and ε_lb =
4.9, the most 500 bounding draws can show).
"""

import functools
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpcost.analysis.streams import rng_for
from dpcost.analysis.targeted import sums_releases
from dpcost.attacks import targeted
from dpcost.attacks.targeted import (
    auc_standard_error,
    leverage,
    lira,
    ols_releases,
    one_by_one,
    pick_targets,
    shadow_rows,
)
from dpcost.dp.privacy import Privacy
from dpcost.dp.samplers import add_noise
from dpcost.errors import ConfigError
from dpcost.estimators import base as estimators_base
from dpcost.estimators import ssp
from dpcost.estimators.base import clip_design
from dpcost.estimators.registry import METHODS

N, D, M, SIGMA, DELTA = 10_000, 3, 1_000, 0.05, 1e-5
B = dict(B_X=2.5, B_Y=1.5)
PRIVACY = Privacy(1.0, DELTA, calibration="tight")


@functools.cache
def population():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(N, D)) / np.sqrt(D)
    beta = np.array([0.6, -0.6, 0.5])
    y = X @ beta + SIGMA * rng.normal(size=N)
    X[0] = -4.0 * beta / np.linalg.norm(beta)
    y[0] = 1.5
    return X, y, beta


def _rng_of(seed=7):
    return functools.partial(rng_for, seed)


def _average_row():
    """The row of median leverage among those with |residual| below the median."""
    X, y, beta = population()
    h, e = leverage(X), np.abs(y - X @ beta)
    calm = np.flatnonzero(e <= np.median(e))
    return int(calm[np.argmin(np.abs(h[calm] - np.median(h)))])


def test_leverage_and_targets():
    X, _, _ = population()
    h = leverage(X)
    np.testing.assert_allclose(h, np.einsum("ij,jk,ik->i", X, np.linalg.inv(X.T @ X), X), rtol=1e-10)
    assert h.sum() == pytest.approx(D)
    rows, kinds = pick_targets(X, 3, 3, np.random.default_rng(0))
    assert rows[0] == 0 and h[0] > 10 * h.mean()
    assert list(kinds) == ["top"] * 3 + ["random"] * 3
    assert len(set(rows)) == 6 and min(h[rows[:3]]) >= max(h[rows[3:]])
    with pytest.raises(ConfigError):
        pick_targets(X, 0, 0, np.random.default_rng(0))


@pytest.mark.parametrize("design", ["population", "ill-conditioned", "rank-deficient"])
def test_leverage_a_block_of_rows_at_a_time_is_the_whole_qrs(design, monkeypatch):
    """Past LEVERAGE_ROWS rows (here 64, of 10,000 in 157 blocks) the blocked QR gives the whole QR's leverage: on the
    population, on columns scaled 1 to 1e-6, and, rank-deficient (a repeated column), by falling back to it."""
    X, _, _ = population()
    X = np.c_[np.ones(N), X]
    if design == "ill-conditioned":
        X = X * np.logspace(0, -6, X.shape[1])
    if design == "rank-deficient":
        X = np.c_[X, X[:, 1]]
    whole = leverage(X)
    monkeypatch.setattr(targeted, "LEVERAGE_ROWS", 64)
    np.testing.assert_allclose(leverage(X), whole, rtol=1e-9, atol=1e-15)


def test_shadow_rows_are_in_or_out():
    rng = np.random.default_rng(0)
    out = [shadow_rows(50, 10, 7, False, rng) for _ in range(400)]
    inn = [shadow_rows(50, 10, 7, True, rng) for _ in range(400)]
    assert all(len(set(r)) == 10 and 7 not in r for r in out)
    assert all(len(set(r)) == 10 and 7 in r for r in inn)
    # IN is uniform over the 10-subsets holding row 7: every other row appears with probability 9/49
    freq = np.bincount(np.concatenate(inn), minlength=50)[np.arange(50) != 7] / 400
    assert abs(freq.mean() - 9 / 49) < 1e-12 and freq.max() < 9 / 49 + 4 * np.sqrt(9 / 49 * 40 / 49 / 400)


def test_ols_releases_match_lstsq():
    X, y, _ = population()
    Xi = np.c_[np.ones(N), X]
    rng = np.random.default_rng(0)
    for m in (40, 9_000):  # summed rows, and the population minus the rows left out
        rows = np.stack([rng.choice(N, m, replace=False) for _ in range(3)])
        got = ols_releases(Xi, y)(rows, [None] * 3)
        want = [np.linalg.lstsq(Xi[r], y[r], rcond=None)[0] for r in rows]
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_a_memory_budget_gathers_fewer_subsamples_at_a_time_with_the_same_grams(monkeypatch):
    """Under a budget that fits one subsample's rows, the Gram matrices are those of the default chunks, bit for bit
    (summed and complement forms), and shadow_releases hands releases one shadow at a time with the same results."""
    X, y, _ = population()
    Z = np.c_[np.ones(N), X, y]
    rng = np.random.default_rng(1)
    for m in (40, 9_000):
        rows = np.stack([rng.choice(N, m, replace=False) for _ in range(5)])
        want = np.concatenate(list(targeted.subsample_grams(Z, rows)))
        monkeypatch.setattr(targeted, "GATHER_BYTES", 8 * Z.shape[1] * (m if m <= N // 2 else N - m))
        got = list(targeted.subsample_grams(Z, rows))
        monkeypatch.undo()
        assert len(got) == 5 and np.array_equal(np.concatenate(got), want)
    sizes = []

    def releases(rows, rngs):
        sizes.append(len(rows))
        return rows[:, :1].astype(float)

    kw = dict(n=N, m=500, target=3, count=6, member=True, split="train", identity=("x",),
              rng_of=functools.partial(rng_for, 0, "d"))  # fmt: skip
    want = targeted.shadow_releases(releases, **kw)
    monkeypatch.setattr(targeted, "GATHER_BYTES", 8 * 500 * 2)
    got = targeted.shadow_releases(releases, **kw)
    assert sizes == [6, 2, 2, 2] and np.array_equal(got, want)


# each method of analysis.targeted.from_sums with constants whose bounds bind on population()'s rows scaled by 3
FROM_SUMS_TUNING = {"ssp": B, "adassp": B, "joint_ssp": B,
                    "noisy_gd": dict(T=5, R=1.5, C=4.0, c_x=2.5, eta0=0.5)}  # fmt: skip


@pytest.mark.parametrize("name", list(FROM_SUMS_TUNING))
def test_sums_releases_are_the_estimators_releases(name, monkeypatch):
    """The shadow releases of the SSP family and noisy GD from each subsample's clipped sums are the estimator's own,
    on the same generator, to the sums' rounding; at m > n/2 from the population's Gram minus the rows left out. A
    planted slip (the sums of unclipped rows) is caught."""
    X, y, _ = population()
    Xi = np.c_[np.ones(N), 3 * X]  # rows beyond the row bound of 2.5: clipping binds
    method, tuning = METHODS[name], FROM_SUMS_TUNING[name]
    rng = np.random.default_rng(0)
    for m in (400, 9_000):
        rows = np.stack([rng.choice(N, m, replace=False) for _ in range(3)])
        seeds = [np.random.default_rng(k) for k in range(3)], [np.random.default_rng(k) for k in range(3)]
        got = sums_releases(Xi, y, method, privacy=PRIVACY, **tuning)(rows, seeds[0])
        want = [method.fn(Xi[r], y[r], privacy=PRIVACY, rng=g, **tuning) for r, g in zip(rows, seeds[1], strict=True)]
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)
    monkeypatch.setattr(estimators_base, "ball_factor", lambda X, bound: np.ones((len(X), 1)))  # rows unclipped
    unclipped = sums_releases(Xi, y, method, privacy=PRIVACY, **tuning)
    planted = unclipped(rows, [np.random.default_rng(k) for k in range(3)])
    assert not np.allclose(planted, want, rtol=1e-3)


def test_auc_standard_error():
    assert auc_standard_error(0.5, 1000, 1000) == pytest.approx(np.sqrt(2001 / 12 / 1e6), rel=1e-3)
    assert auc_standard_error(1.0, 100, 100) == pytest.approx(0.005)


def _ols_attack(target):
    X, y, _ = population()
    return lira(ols_releases(np.c_[np.ones(N), X], y), N, M, target, identity=("ols",), rng_of=_rng_of(),
                delta=DELTA)  # fmt: skip


def test_ols_gives_the_heavy_row_away():
    r = _ols_attack(0)
    assert r["auc"] >= 0.95
    assert r["tpr_fpr001"] >= 0.5 and r["epsilon_lb"] > 2.0


def test_ols_does_not_give_an_average_row_away():
    X, y, beta = population()
    t = _average_row()
    rows = np.random.default_rng(0).choice(np.arange(1, N), M - 1, replace=False)
    Xs = np.c_[np.ones(M), np.vstack([X[rows], X[t]])]
    h = np.einsum("j,jk,k->", Xs[-1], np.linalg.inv(Xs.T @ Xs), Xs[-1])
    mu = abs(y[t] - X[t] @ beta) / SIGMA * np.sqrt(h) / (1 - h)
    assert stats.norm.cdf(mu / np.sqrt(2)) - 0.5 < 0.01  # the population model's AUC is ½ to within 0.01
    r = _ols_attack(t)
    assert abs(r["auc"] - 0.5) <= 3 * r["auc_se"]


def test_adassp_stays_within_its_ceiling():
    X, y, _ = population()

    def adassp(rows, rng):
        return ssp.adassp(X[rows], y[rows], privacy=PRIVACY.at(M), rng=rng, **B)

    r = lira(one_by_one(adassp), N, M, 0, identity=("adassp", 1.0), rng_of=_rng_of(), delta=DELTA, epsilon=1.0)
    assert r["auc"] <= r["auc_ceiling"] + 2 * r["auc_se"]
    assert r["epsilon_lb"] <= 1.0


def _planted_ssp(divide: float):
    """SSP with the noise of its plan divided by ``divide``: NOT (1, δ)-DP, though labelled so."""
    X, y, _ = population()
    s_xx, s_xy = (r.noise_scale for r in ssp.ssp_plan(PRIVACY, M, D, **B).releases)

    def release(rows, rng):
        Xc, yc = clip_design(X[rows], y[rows], B["B_X"], B["B_Y"])
        A = ssp.noisy_symmetric(Xc.T @ Xc, s_xx / divide, rng)
        return np.linalg.lstsq(A, add_noise(Xc.T @ yc, "gaussian", s_xy / divide, rng), rcond=None)[0]

    return one_by_one(release)


def test_a_planted_leak_is_flagged():
    """Noise ÷ 10 breaks the AUC ceiling; ÷ 20 is what the ε lower bound detects reliably (module docstring)."""
    kw = dict(rng_of=_rng_of(), delta=DELTA, epsilon=1.0)
    r = lira(_planted_ssp(10), N, M, 0, identity=("planted", 10), **kw)
    assert r["auc"] > r["auc_ceiling"] + 2 * r["auc_se"]
    r = lira(_planted_ssp(20), N, M, 0, identity=("planted", 20), **kw)
    assert r["epsilon_lb"] > 1.0


def test_targets_from_a_given_leverage_are_the_ones_computed_from_the_design():
    X = np.random.default_rng(4).normal(size=(300, 4))
    h = leverage(X)
    a = pick_targets(X, 2, 2, np.random.default_rng(7))
    b = pick_targets(X, 2, 2, np.random.default_rng(7), h=h)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    c = pick_targets(X, 2, 0, np.random.default_rng(7), h=-h)  # the caller's h is what is read
    assert not set(c[0]) & set(a[0][:2])


# ---- shadows by blocks (cluster sampling above BLOCK_FROM rows) ------------------------------------------------------
# The tests lower BLOCK_FROM so that the population's m = 1,000 is drawn by blocks: 128 blocks of 7 rows and the first
# 104 rows of one more (b = 1,000 // 128 = 7).


def test_the_block_rule_is_public_and_leaves_small_m_row_by_row():
    assert targeted.block_size(20_640, 20_000) == 1 and targeted.block_size(2_000_000, 65_536) == 1  # as before
    assert targeted.block_size(2_000_000, 100_000) == 781 and targeted.block_size(5_000_000, 1_000_000) == 7_812
    # no room for a shadow's 129 blocks besides the target's: row by row
    assert targeted.block_size(100_000, 99_000) == 1 and targeted.block_size(133_000, 66_000) == 515
    assert targeted.shadow_cost(2_000_000, 100_000, 23) == 128 * 23 + 32  # 128 blocks of 781 rows and 32 rows
    assert targeted.shadow_cost(20_640, 20_000, 6) == 640  # the rows left out
    assert targeted.partition_of(20_640, 20_000, _rng_of()) is None


@settings(max_examples=40, deadline=None)
@given(n=st.integers(700, 4_000), frac=st.floats(0.05, 0.6), member=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_a_shadow_by_blocks_is_in_or_out_and_its_gram_is_its_rows(n, frac, member, seed):
    """Any table size, m and target: a shadow holds m distinct rows, the target exactly when IN, no other row of the
    target's block, whole blocks of the partition; its Gram from the block Grams is its rows' (to rounding)."""
    m = max(3, int(frac * n))
    with patch.object(targeted, "BLOCK_FROM", 2), patch.object(targeted, "BLOCKS_PER_SHADOW", 16):
        if targeted.block_size(n, m) == 1:
            return  # no room for the blocks: drawn row by row (the rule's other branch)
        rng = np.random.default_rng(seed)
        P = targeted.Partition(n, m, rng)
        t = int(rng.integers(n))
        shadows = targeted.BlockShadows(P, t, [P.draw(t, member, rng) for _ in range(3)])
        Z = np.random.default_rng(seed + 1).normal(size=(n, 4))
        grams = shadows.grams(Z)
    home = P.block_of[t]
    for rows, G in zip(shadows, grams, strict=True):
        assert rows.size == m and np.unique(rows).size == m and (t in rows) == member
        others = P.block_of[rows[rows != t]]
        assert home < 0 or not (others == home).any()
        counts = np.bincount(others[others >= 0], minlength=P.J)  # every block whole, one partial (its first r)
        assert sorted(set(counts.tolist()) - {0}) <= sorted({P.b, P.r} - {0}) and (counts == P.b).sum() >= P.q - member
        np.testing.assert_allclose(G, Z[rows].T @ Z[rows], rtol=1e-12, atol=1e-9 * m)


def test_the_member_an_in_shadow_replaces_is_uniform():
    """IN replaces a uniform member (the coupling of the module docstring): its position is uniform on 0 … m − 1."""
    with patch.object(targeted, "BLOCK_FROM", 512):
        P = targeted.Partition(N, M, np.random.default_rng(0))
        rng = np.random.default_rng(1)
        swapped = np.array([P.draw(0, True, rng)[2] for _ in range(4_000)])
    # the share in the partial block's r rows against r/m, and a χ² over 10 equal bins (5 % test)
    assert abs(np.mean(swapped >= P.q * P.b) - P.r / M) < 4 * np.sqrt(P.r / M / 4_000)
    assert stats.chisquare(np.bincount(swapped * 10 // M, minlength=10)).pvalue > 0.001


def _block_lira(releases, target, **kw):
    with patch.object(targeted, "BLOCK_FROM", 512):
        partition = targeted.partition_of(N, M, _rng_of())
        assert partition is not None and partition.b == 7
        return lira(releases, N, M, target, rng_of=_rng_of(), delta=DELTA, partition=partition, **kw)


def test_by_blocks_ols_still_gives_the_heavy_row_away_and_adassp_stays_within_its_ceiling():
    """The attack keeps its power on shadows drawn by blocks, and a proven release its ceiling."""
    X, y, _ = population()
    r = _block_lira(ols_releases(np.c_[np.ones(N), X], y), 0, identity=("ols",))
    assert r["auc"] >= 0.95 and r["epsilon_lb"] > 2.0
    Xi = np.c_[np.ones(N), X]
    adassp = targeted_sums("adassp", Xi, y)
    r = _block_lira(adassp, 0, identity=("adassp", 1.0), epsilon=1.0)
    assert r["auc"] <= r["auc_ceiling"] + 2 * r["auc_se"] and r["epsilon_lb"] <= 1.0


def test_by_blocks_a_planted_leak_is_still_flagged():
    r = _block_lira(_planted_ssp(10), 0, identity=("planted", 10), epsilon=1.0)
    assert r["auc"] > r["auc_ceiling"] + 2 * r["auc_se"]


def targeted_sums(name, Xi, y):
    return sums_releases(Xi, y, METHODS[name], privacy=PRIVACY.at(M), **B)
