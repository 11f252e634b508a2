"""The score attack on the analyses' releases: candidates, the same releases as the error curves, and the metrics."""

import numpy as np
import pandas as pd
import pytest

from dpcost.analysis.attack import SUMMARY_COLUMNS, ScoreAttack, attack_statistics, run_attack, summarise_attack
from dpcost.analysis.designs import RegressionDesign, TwoGroupMeanDesign, _some_outside, split_candidates
from dpcost.analysis.engine import releases, run_grid
from dpcost.attacks.score import attack_auc, attack_epsilon_lower_bound, tpr_at_fpr
from dpcost.dp.privacy import Privacy
from dpcost.errors import ConfigError, DataError
from dpcost.estimators.registry import get

SEED, PRIV = 7, Privacy(0.5, "10/n^1.1", "tight")


def _snp_design(d=2000, n_a=241, n_b=146, s=5, seed=0):
    """Genotypes 0/1/2 at minor-allele frequencies 0.2 … 0.5, the GSE106818 group sizes."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.2, 0.5, d)
    A = rng.binomial(2, p, (n_a, d)).astype(np.int8)
    B = rng.binomial(2, p, (n_b, d)).astype(np.int8)
    return TwoGroupMeanDesign(A, B, A.mean(0) - B.mean(0), s)


def test_split_candidates_are_disjoint_equal_and_inside_or_outside():
    rng = np.random.default_rng(0)
    inside = rng.choice(100, 30, replace=False)
    mem, non, ref = split_candidates(100, inside, rng, cap=1000, what="rows")
    assert len(mem) == len(non) == 30 and len(ref) == 40
    assert set(mem) <= set(inside) and not set(non) & set(inside) and not set(ref) & set(inside)
    assert not set(non) & set(ref) and len(set(mem)) == 30
    mem, non, ref = split_candidates(100, rng.choice(100, 80, replace=False), rng, cap=1000, what="rows")
    assert len(mem) == len(non) == 10 and len(ref) == 10  # outside 20 rows: half non-members, half reference
    assert len(split_candidates(100, inside, rng, cap=5, what="rows")[0]) == 5
    with pytest.raises(ConfigError, match="at least 2 rows outside"):
        split_candidates(100, rng.choice(100, 97, replace=False), rng, cap=1000, what="rows")


def test_on_a_big_table_only_the_rows_used_are_drawn_uniformly_from_those_outside():
    """Past ~1.1 million rows the outside rows are drawn, not all shuffled (O(21,000) instead of O(n)): still
    disjoint from the subsample and each other, and uniform over the rows outside — the reference's 20,000 rows fall
    in 10 equal bins of them as a uniform draw would (χ² with 9 degrees of freedom below its 0.999 quantile, 27.9;
    a draw that kept the subsample's neighbourhood or the low rows would be far above)."""
    n, rng = 1_500_000, np.random.default_rng(5)
    inside = np.sort(rng.choice(n // 3, 100_000, replace=False))  # the subsample crowds the first third
    assert _some_outside(20_640, inside[:2000], rng, 21_000) is None  # housing: every outside row shuffled, as before
    mem, non, ref = split_candidates(n, inside, rng, cap=1000, what="rows")
    assert len(mem) == len(non) == 1000 and len(ref) == 20_000
    assert set(mem) <= set(inside) and not (set(non) | set(ref)) & set(inside) and not set(non) & set(ref)
    rest = np.setdiff1d(np.arange(n), inside)
    counts = np.bincount(np.searchsorted(rest, ref) * 10 // rest.size, minlength=10)
    chi2 = ((counts - ref.size / 10) ** 2 / (ref.size / 10)).sum()
    assert chi2 < 27.9, counts


def test_regression_reference_is_the_ols_of_rows_outside_members_and_nonmembers():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    design = RegressionDesign(X, X @ [1.0, -1.0, 0.5] + rng.normal(size=60), np.zeros(3))
    idx = design.subsample(20, 0, seed=SEED, dataset="t")
    cand = design.candidates(idx, 20, 0, seed=SEED, dataset="t", cap=1000)
    assert cand.members.shape == cand.nonmembers.shape == (20, 3)
    # the reference is fitted on 20 rows, none of the subsample: a refit on the subsample would differ
    inside_fit = np.linalg.lstsq(X[idx], design.y[idx], rcond=None)[0]
    assert np.abs(cand.theta - [1.0, -1.0, 0.5]).max() < 1.0 and not np.allclose(cand.theta, inside_fit)


def test_attack_sees_the_very_releases_of_the_error_curves():
    design, method = _snp_design(d=300), get("peeling", "mean")
    kw = dict(tuning={"R": 2.0}, params={"s": 5}, m_grid=[20, 60], reps=3, seed=SEED, privacy=PRIV, dataset="t")
    table, _ = run_grid(design, method, **kw)
    errors = [np.linalg.norm(est - design.truth) for _, _, est, *_ in releases(design, method, **kw)]
    np.testing.assert_array_equal(errors, table["error"].to_numpy())


@pytest.mark.parametrize("reps", [1, 2, 4])
def test_scored_in_the_estimate_pass_equals_the_releases_re_created(reps):
    """The estimate job scores its first attack.reps releases as run_grid makes them; the split job re-creates them
    (run_attack): the same statistics, bit for bit, whichever — and only the first ``reps`` repetitions."""
    design, method = _snp_design(d=300), get("peeling", "mean")
    kw = dict(tuning={"R": 2.0}, params={"s": 5}, m_grid=[20, 60], seed=SEED, privacy=PRIV, dataset="t")
    attack = ScoreAttack(design, method, reps=reps, seed=SEED, dataset="t", cap=1000)
    table, _ = run_grid(design, method, reps=4, on_release=attack, **kw)
    scored = attack.table()
    pd.testing.assert_frame_equal(scored, run_attack(design, method, reps=reps, cap=1000, **kw))
    assert sorted(set(scored.rep)) == list(range(reps)) and len(table) == 2 * 4


def test_sample_mean_of_2000_snps_is_traceable_and_peeling_is_not():
    """The issue's expectation, on genotypes of the real group sizes: at m = 120 pairs the plain mean gives its
    members away; the private sparse mean at ε = 0.5 does not: its AUC stays below the ceiling that (ε, δ)-DP
    allows (0.66 at δ(120) = 0.052) and its ε lower bound below ε."""
    design = _snp_design()
    kw = dict(params={"s": 20}, m_grid=[120], reps=4, seed=SEED, privacy=PRIV, dataset="t", cap=1000)
    private = {"sample_mean": False, "peeling": True}
    plain = run_attack(design, get("sample_mean", "mean"), tuning={}, **kw)
    dp = run_attack(design, get("peeling", "mean"), tuning={"R": 2.0}, **kw)
    out = summarise_attack(pd.concat([plain, dp]), privacy=PRIV, private=private).set_index("method")
    assert list(out.reset_index().columns) == list(SUMMARY_COLUMNS)
    assert out.loc["sample_mean", "n_candidates"] == 60 + 13  # k = min(m, (N − m) // 2) per group: 60 and 13
    assert out.loc["sample_mean", "auc"] > 0.95 and out.loc["sample_mean", "tpr_fpr05"] > 0.6
    assert out.loc["sample_mean", "epsilon_lb"] > 1.0 and np.isnan(out.loc["sample_mean", "epsilon"])
    auc, se, ceiling = out.loc["peeling", ["auc", "auc_se", "auc_ceiling"]]
    assert auc < ceiling and auc < 0.6, (auc, se)
    assert out.loc["peeling", "epsilon_lb"] <= 0.5 and out.loc["peeling", "epsilon"] == 0.5


def test_members_are_traced_by_non_private_ols_in_high_dimension_only():
    """OLS with d = 40 on m = 60 rows is traceable (each member pulls the fit towards itself by x'(X'X)⁻¹x ≈ d/m);
    a member mix-up (members drawn outside the subsample) would leave the AUC at 0.5. The signal-to-noise ratio is
    at most about 0.5 (at m ≈ 2d) and √(d/m) for m ≫ d: regression releases are traced far less than means."""
    rng = np.random.default_rng(3)
    n, d = 400, 40
    X = rng.normal(size=(n, d))
    design = RegressionDesign(X, X @ rng.normal(size=d) / np.sqrt(d) + rng.normal(size=n), np.zeros(d))
    stats = run_attack(design, get("ols", "regression"), tuning={}, params={}, m_grid=[60], reps=5, seed=SEED,
                       privacy=PRIV, dataset="t", cap=1000)  # fmt: skip
    out = summarise_attack(stats, privacy=PRIV, private={"ols": False})
    # signal h_ii e² ≈ d/m against noise sd ≈ √(d/(m − d)): AUC ≈ 0.63, far above 0.5 in s.e. of 5 × 60 pairs
    assert out.loc[0, "auc"] - 0.5 > 4 * out.loc[0, "auc_se"] and out.loc[0, "auc"] > 0.58


def test_sparse_releases_are_scored_on_their_support_only():
    members, nonmembers = np.eye(4), -np.eye(4)
    a, b = attack_statistics(np.array([1.0, 2.0, 0.0, 0.0]), [0, 1], members, nonmembers, np.ones(4))
    np.testing.assert_array_equal(a, [0.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(b, [0.0, -1.0, 0.0, 0.0])
    a, _ = attack_statistics(np.array([1.0, 2.0, 0.0, 0.0]), None, members, nonmembers, np.ones(4))
    np.testing.assert_array_equal(a, [0.0, 1.0, -1.0, -1.0])


def test_the_summary_scores_each_repetition_on_its_own_rows_in_any_row_order():
    """Rows of several repetitions and methods interleaved (as a concatenation or a shuffle leaves them): the
    per-repetition AUC and TPRs are those of that repetition's rows alone, averaged; ε_lb is that of the pooled
    statistics in the table's row order. A summary that mixed up repetitions (or dropped the row order ε_lb's
    shuffle starts from) would differ."""
    rng = np.random.default_rng(11)
    parts = []
    for method, shift in (("a", 0.0), ("b", 1.0)):
        for rep in range(5):
            k = 30 + 7 * rep  # repetitions of different sizes
            parts.append(
                pd.DataFrame(
                    {
                        "method": method,
                        "m": 400,
                        "rep": rep,
                        "member": np.arange(2 * k) < k,
                        "statistic": rng.normal(np.r_[np.full(k, shift + rep / 4), np.zeros(k)]),
                    }
                )
            )
    stats = pd.concat(parts, ignore_index=True).sample(frac=1.0, random_state=3).reset_index(drop=True)
    out = summarise_attack(stats, privacy=PRIV, private={"a": False, "b": True}).set_index("method")
    for method, df in stats.groupby("method"):
        per_rep = [(attack_auc(a, b), tpr_at_fpr(a, b, 0.01), tpr_at_fpr(a, b, 0.05))
                   for a, b in ((r.statistic[r.member].to_numpy(), r.statistic[~r.member].to_numpy())
                                for _, r in df.groupby("rep"))]  # fmt: skip
        auc, t01, t05 = np.mean(per_rep, axis=0)
        assert out.loc[method, ["auc", "tpr_fpr01", "tpr_fpr05"]].tolist() == [auc, t01, t05]
        assert (
            out.loc[method, "n_reps"] == 5 and out.loc[method, "n_candidates"] == sum(30 + 7 * r for r in range(5)) // 5
        )
        eps = attack_epsilon_lower_bound(df.statistic[df.member], df.statistic[~df.member], PRIV.at(400).delta,
                                         seed=400)  # fmt: skip
        assert out.loc[method, "epsilon_lb"] == eps
    assert out.loc["b", "auc"] > out.loc["a", "auc"] + 0.1  # b's members stand out more (AUC 0.84 against 0.66)


def test_summary_refuses_an_empty_or_malformed_table():
    with pytest.raises(DataError):
        summarise_attack(pd.DataFrame(), privacy=PRIV, private={})
    with pytest.raises(DataError, match="statistic"):
        summarise_attack(pd.DataFrame({"method": ["a"], "m": [2], "rep": [0], "member": [True]}), privacy=PRIV,
                         private={"a": False})  # fmt: skip
