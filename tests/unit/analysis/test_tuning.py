"""The tuning step: candidate grids checked by the registry, decoys that never read the real response, the per-m
choices the engine runs, and private selection paid inside the same (ε, δ), with fresh noise in every run."""

import functools
from dataclasses import replace

import numpy as np
import pytest

from dpcost.analysis import decoys, tuning
from dpcost.analysis.datasets import ANALYSES
from dpcost.analysis.designs import RegressionDesign
from dpcost.analysis.engine import run_grid
from dpcost.dp.privacy import Privacy
from dpcost.dp.selection import selection_epsilon
from dpcost.errors import ConfigError, PrivacyError
from dpcost.estimators.ols import ols
from dpcost.estimators.registry import get

SA = get("subsample_aggregate")
P = Privacy(0.5, 1e-3, "tight")


def design(seed=0, n=3000, y_seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = X @ np.array([0.5, -0.3, 0.2]) + np.random.default_rng(y_seed).normal(size=n)
    return RegressionDesign(X, y, ols(X, y))


def test_candidates_are_the_grid_over_the_base_in_order():
    cands = tuning.candidates(SA, {"R_b": 1.0, "block_size": 10}, {"R_b": [0.5, 2.0], "block_size": [5, 10, 20]}, "w")
    assert [(c["R_b"], c["block_size"]) for c in cands] == [(r, b) for r in (0.5, 2.0) for b in (5, 10, 20)]
    assert tuning.candidates(SA, {"R_b": 1.0, "block_size": 10}, None, "w") == [{"R_b": 1.0, "block_size": 10}]
    with pytest.raises(ConfigError, match=r"w: search over unknown key 'B_X'"):
        tuning.candidates(SA, {"R_b": 1.0, "block_size": 10}, {"B_X": [1.0]}, "w")
    with pytest.raises(ConfigError, match="non-empty list"):
        tuning.candidates(SA, {"R_b": 1.0, "block_size": 10}, {"R_b": []}, "w")


DECOYS = decoys.Decoys(("linear", "heteroscedastic", "misspecified", "interaction"), (1.0,), (0.5,), 2)


def test_decoys_are_reproducible_and_follow_their_kind():
    X = design().X
    a, b = DECOYS.designs(X, seed=3, dataset="d"), DECOYS.designs(X, seed=3, dataset="d")
    assert len(a) == 4 and all(np.array_equal(p.y, q.y) for p, q in zip(a, b, strict=True))
    assert not np.array_equal(a[0].y, DECOYS.designs(X, seed=4, dataset="d")[0].y)
    for fake in a:
        assert np.array_equal(fake.X, X) and np.allclose(fake.truth, ols(X, fake.y))
    # heteroscedastic: the residual variance grows with the row norm (about ‖x‖²/d times σ²)
    resid = a[1].y - X @ ols(X, a[1].y)
    heavy = np.linalg.norm(X, axis=1) ** 2 / 3 > 2
    assert resid[heavy].var() > 2 * resid[~heavy].var()


def test_decoy_search_never_reads_the_real_response():
    cands = tuning.candidates(SA, {"R_b": 1.0, "block_size": 50}, {"R_b": [0.01, 2.0]}, "w")
    kw = dict(params={}, m_grid=[1000, 3000], seed=1, privacy=Privacy(2.0, 1e-3, "tight"), dataset="d")
    c1, t1 = decoys.decoy_search(design(y_seed=1), SA, cands, DECOYS, **kw)
    c2, t2 = decoys.decoy_search(design(y_seed=99), SA, cands, DECOYS, **kw)  # the same X, another y
    assert c1 == c2 and t1.equals(t2)
    # the clearly better candidate wins (R_b = 0.01 projects every block estimate to almost 0: error ‖β_k‖ = 1)
    assert all(c["R_b"] == 2.0 for c in c1.values())
    assert set(t1.columns) >= {"candidate", "m", "error", "se", "score", "pooled", "R_b"} and len(t1) == 4


def test_decoys_clipped_to_the_public_range_and_checked():
    X = design().X
    clipped = replace(DECOYS, y_range=(-0.5, 0.5)).designs(X, seed=3, dataset="d")
    free = DECOYS.designs(X, seed=3, dataset="d")
    for c, f in zip(clipped, free, strict=True):  # the same draws, then clipped; the truth follows the clipped y
        assert np.array_equal(c.y, np.clip(f.y, -0.5, 0.5)) and np.allclose(c.truth, ols(X, c.y))
        assert (np.abs(f.y) > 0.5).any()
    block = {"kinds": ["linear"], "radius": [1.0], "noise_sd": [1.0], "reps": 1}
    assert decoys.Decoys.from_config({**block, "y_range": [-2, 3], "pool": 1}) == decoys.Decoys(
        ("linear",), (1.0,), (1.0,), 1, (-2.0, 3.0), 1
    )
    with pytest.raises(ConfigError, match="y_range must be"):
        decoys.Decoys.from_config({**block, "y_range": [3, -2]})
    with pytest.raises(ConfigError, match="pool must be"):
        decoys.Decoys.from_config({**block, "pool": -1})


def test_pooling_averages_the_scores_of_neighbouring_m():
    import pandas as pd

    # candidate 0 is best at m = 2 only, by a hair; candidate 1 is clearly best at m = 1 and 3
    table = pd.DataFrame({"candidate": [0, 0, 0, 1, 1, 1], "m": [1, 2, 3] * 2,
                          "score": [1.0, 0.0, 1.0, 0.0, 0.1, 0.0]})  # fmt: skip
    alone, pooled = decoys.pooled(table, 0), decoys.pooled(table, 1)
    assert alone.pooled.tolist() == table.score.tolist()
    assert pooled.pooled.tolist() == pytest.approx([0.5, 2 / 3, 0.5, 0.05, 1 / 30, 0.05])
    best = pooled.loc[pooled.groupby("m").pooled.idxmin()]
    assert best.candidate.tolist() == [1, 1, 1]  # pooled, candidate 1 wins at m = 2 as well


def test_a_spec_reads_its_method_from_the_config_block():
    block = {"tuning_mode": "decoy", "tuning": {"adassp": {"B_X": 1.0}}, "search": {"adassp": {"B_Y": [1.0, 2.0]}},
             "decoys": {"reps": 1}, "private_tuning": {"mean_K": 3}}  # fmt: skip
    assert tuning.TuningSpec.of(block, "adassp") == tuning.TuningSpec(
        "decoy", {"B_X": 1.0}, {"B_Y": [1.0, 2.0]}, {"reps": 1}, {"mean_K": 3}
    )
    assert tuning.TuningSpec.of(block, "ssp", decoys={"reps": 2}) == tuning.TuningSpec(
        "decoy", None, None, {"reps": 2}, {"mean_K": 3}
    )
    assert tuning.TuningSpec.of({}, "ols") == tuning.TuningSpec()


def test_fixed_mode_and_methods_without_a_search_run_the_config_constants():
    h = ANALYSES["housing"]
    kw = dict(params={}, m_grid=[100, 200], seed=1, privacy=P)
    spec = tuning.TuningSpec("fixed", {"R_b": 1.0, "block_size": 5}, {"R_b": [1, 2]})
    rec = tuning.tune(h, SA, {}, spec, **kw)
    assert rec["mode"] == "fixed" and rec["choices"] == {"100": {"R_b": 1.0, "block_size": 5}} | {
        "200": {"R_b": 1.0, "block_size": 5}
    }
    rec = tuning.tune(h, get("ols"), {}, tuning.TuningSpec("decoy"), **kw)
    assert rec["mode"] == "fixed" and rec["requested_mode"] == "decoy" and "no search space" in rec["looked_at"]
    runner, base, by_m = tuning.runner(SA, {"mode": "fixed", "choices": {"100": {"R_b": 1.0, "block_size": 5}}}, [100])
    assert runner is SA and by_m == {100: {"R_b": 1.0, "block_size": 5}}
    with pytest.raises(ConfigError, match=r"no constants for m = \[200\]"):
        tuning.runner(SA, {"mode": "fixed", "choices": {"100": {"R_b": 1.0, "block_size": 5}}}, [100, 200])
    with pytest.raises(ConfigError, match="defined for regression analyses only"):
        tuning.check_setup("mean", "decoy", {"R": [1.0, 2.0]}, "snp.search.peeling")
    with pytest.raises(ConfigError, match="tuning_mode must be one of"):
        tuning.check_mode("oracle")


def test_the_engine_runs_each_m_with_its_own_constants():
    d = design()
    by_m = {
        500: SA.resolve_tuning({"R_b": 0.01, "block_size": 50}),
        2000: SA.resolve_tuning({"R_b": 2.0, "block_size": 50}),
    }
    table, plans = run_grid(d, SA, tuning=by_m[500], tuning_by_m=by_m, params={}, m_grid=[500, 2000], reps=3, seed=1,
                            privacy=P, dataset="d")  # fmt: skip
    assert [p["assumption"].endswith("<= 0.01") for p in plans] == [True, False]
    # R_b = 0.01 shrinks every estimate to norm ≤ 0.01 (noise σ ≈ 0.014 at m = 500): error within 0.05 of ‖β‖ = 0.62;
    # R_b = 2 leaves noise of σ ≈ 0.7 a coordinate at m = 2000: an error that far from ‖β‖ in at least one of 3 reps
    norm = np.linalg.norm(d.truth)
    err = {m: g.error.to_numpy() for m, g in table.groupby("m")}
    assert np.all(np.abs(err[500] - norm) < 0.05) and np.any(np.abs(err[2000] - norm) > 0.1)


SELECTION = tuning.PrivateTuning(mean_K=3, eta=0, validation=0.25, loss_cap=4.0)


def test_private_selection_is_charged_inside_the_budget():
    cands = tuning.candidates(SA, {"R_b": 1.0, "block_size": 20}, {"R_b": [0.5, 2.0]}, "w")
    tuned = tuning.PrivatelyTuned(SA, cands, SELECTION)
    plan = tuned.make_plan(P, 1000, 3, {}, {})
    mu_c = plan.parameters["candidate_mu"]
    assert plan.epsilon == 0.5 and plan.delta == 1e-3 and plan.proven
    # the selection is not composed from a release: its plan says so, and its one release is typed as what it is
    assert not plan.whole_mechanism and "not recorded" in plan.whole_mechanism_why
    assert (plan.releases[0].kind, plan.releases[0].noise) == ("repeat_and_select", "exact")
    assert selection_epsilon(mu_c, 3, 0, 1e-3) <= 0.5 and selection_epsilon(1.02 * mu_c, 3, 0, 1e-3) > 0.5
    # every candidate's own releases spend at most mu_c (read off its plan on the 750 training rows)
    b = tuned.budget(P, 1000, 3, ())
    for cand_plan in b["plans"]:
        r = cand_plan.releases[0]
        assert r.sensitivity / r.noise_scale <= mu_c
    assert b["n_train"] == 750 and b["n_val"] == 250
    assert b["sigma_q"] == pytest.approx(4.0 / 250 / mu_c, rel=1e-4)
    # a posterior sample is not an additive release: no candidate budget can be read off it
    ops = get("ops")
    with pytest.raises(ConfigError, match="whole mechanism: a posterior sample"):  # its plan says so
        tuned = tuning.PrivatelyTuned(ops, [ops.resolve_tuning({"B_X": 1.0, "B_Y": 1.0})], SELECTION)
        tuned.make_plan(P, 1000, 3, {}, {})
    spec = tuning.TuningSpec("private", {"B_X": 1.0, "B_Y": 1.0}, {"B_X": [1.0, 2.0]}, None, SELECTION.to_dict())
    rec = tuning.tune(ANALYSES["housing"], ops, {}, spec, params={}, m_grid=[100], seed=1, privacy=P)
    assert rec["mode"] == "fixed" and rec["requested_mode"] == "private" and "posterior" in rec["looked_at"]
    with pytest.raises(PrivacyError, match="replace-one"):
        tuned.make_plan(Privacy(0.5, 1e-3, "tight", neighbours="add_remove"), 1000, 3, {}, {})


def test_private_selection_finds_the_good_candidate_when_the_budget_allows():
    d = design(n=4000)
    cands = tuning.candidates(SA, {"R_b": 1.0, "block_size": 40}, {"R_b": [0.01, 2.0]}, "w")
    tuned = tuning.PrivatelyTuned(SA, cands, SELECTION)
    errs = {}
    for eps in (0.2, 8.0):
        table, _ = run_grid(d, tuned, tuning=tuned.identity(), params={}, m_grid=[4000], reps=20, seed=2,
                            privacy=Privacy(eps, 1e-3, "tight"), dataset="d")  # fmt: skip
        errs[eps] = table.error.mean()
    # at ε = 8 the noisy scores rank the candidates: the R_b = 2 fit (error ≈ OLS on 3000 rows) nearly always wins
    assert errs[8.0] < 0.15 < errs[0.2]


def test_every_run_of_the_selection_draws_fresh_noise():
    # a run's stream comes from (the repetition's stream, k): two runs of one candidate never share their noise
    seen = []

    @functools.wraps(SA.fn)
    def spy(*data, rng, **kw):
        seen.append(rng.bit_generator.state["state"]["state"])
        return SA.fn(*data, rng=rng, **kw)

    tuned = tuning.PrivatelyTuned(replace(SA, fn=spy), [SA.resolve_tuning({"R_b": 1.0, "block_size": 10})], SELECTION)
    d = design(n=400)
    for s in range(20):
        tuned.estimate(d.X, d.y, privacy=P, rng=np.random.default_rng(s), tuning={}, params={})
    assert len(seen) >= 20 and len(set(seen)) == len(seen)


def test_the_selections_runs_share_one_read_only_copy_of_the_training_rows():
    # gathered once, not per run; read-only, so a run that wrote to its data would fail instead of changing the rows
    # the next run sees (and the clipped-design memo, which trusts read-only arrays, may serve them all)
    seen = []

    @functools.wraps(SA.fn)
    def spy(X, y, *, rng, **kw):
        seen.append((id(X), X.flags.writeable, y.flags.writeable, X.shape[0]))
        with pytest.raises(ValueError, match="read-only"):
            X[0, 0] = 0.0
        return SA.fn(X, y, rng=rng, **kw)

    tuned = tuning.PrivatelyTuned(replace(SA, fn=spy), [SA.resolve_tuning({"R_b": 1.0, "block_size": 10})] * 2,
                                  tuning.PrivateTuning(mean_K=8, eta=0, validation=0.25, loss_cap=4.0))  # fmt: skip
    d = design(n=400)
    tuned.estimate(d.X, d.y, privacy=P, rng=np.random.default_rng(0), tuning={}, params={})
    assert len(seen) >= 2 and set(seen) == {(seen[0][0], False, False, 300)}


def test_tuning_mode_none_runs_only_tuning_free_methods_at_their_code_rules():
    h = ANALYSES["housing"]
    kw = dict(params={}, m_grid=[100, 200], seed=1, privacy=P)
    # a method whose constants someone chose is refused, naming it and the key
    with pytest.raises(ConfigError, match=r"housing.tuning.subsample_aggregate: tuning_mode none runs only the "):
        tuning.tune(h, SA, {}, tuning.TuningSpec("none"), **kw)
    from dpcost.estimators.subsample_aggregate import subsample_aggregate

    def rule(X, y, *, privacy, rng, R_b=1.5, block_size=50):  # a stand-in whose constants are code defaults
        return subsample_aggregate(X, y, privacy=privacy, rng=rng, R_b=R_b, block_size=block_size)

    free = replace(SA, name="sa_free", fn=rule, tuning_free=True)
    rec = tuning.tune(h, free, {}, tuning.TuningSpec("none"), **kw)
    assert rec["mode"] == "none" and rec["looked_at"].startswith("nothing")
    assert rec["choices"] == {"100": free.resolve_tuning(None), "200": free.resolve_tuning(None)}
    # under any mode a tuning-free method without config constants runs its rules, recorded as none
    rec = tuning.tune(h, free, {}, tuning.TuningSpec("decoy", None, {"R_b": [1.0, 2.0]}), **kw)
    assert rec["mode"] == "none" and rec["requested_mode"] == "decoy"
    # ... and with config constants under none it refuses rather than silently ignoring them
    with pytest.raises(ConfigError, match=r"reads no constants from the config; remove \['R_b'\]"):
        tuning.tune(h, free, {}, tuning.TuningSpec("none", {"R_b": 1.0}), **kw)
    # the non-private baseline has no constants: it runs under none
    assert tuning.tune(h, get("ols"), {}, tuning.TuningSpec("none"), **kw)["mode"] == "none"
