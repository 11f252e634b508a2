"""The decoy search's loops, turned round (one subsample per decoy, m and repetition, shared by every candidate; one
plan per candidate and m; precond_gd's runs batched), give the table of the per-candidate engine runs bit for bit."""

import logging
import math

import numpy as np
import pandas as pd
import pytest

from dpcost.analysis import decoys, tuning
from dpcost.analysis.designs import RegressionDesign
from dpcost.analysis.engine import run_grid
from dpcost.dp.privacy import Privacy
from dpcost.errors import PrivacyError
from dpcost.estimators import precond_gd as pgd
from dpcost.estimators.base import row_norms
from dpcost.estimators.ols import ols
from dpcost.estimators.registry import get

P = Privacy(0.5, "10/n^1.1", "tight")
DECOYS = decoys.Decoys(("linear", "heteroscedastic", "misspecified", "interaction"), (1.0,), (0.5,), 2, (-2.0, 3.0), 1)
KW = dict(params={}, m_grid=[400, 1200, 2500], seed=7, privacy=P, dataset="d")


def design():
    rng = np.random.default_rng(0)
    X = rng.standard_t(4, size=(3000, 3))  # heavy rows, so that the clipping bounds matter
    y = X @ np.array([0.5, -0.3, 0.2]) + rng.normal(size=3000)
    return RegressionDesign(X, y, ols(X, y))


def per_candidate(method, cands, *, params, m_grid, seed, privacy, dataset):
    """The search as it was: every candidate through run_grid on every decoy, one after the other."""
    rows = []
    for c, t in enumerate(cands):
        try:
            runs = [run_grid(fake, method, tuning=t, params=params, m_grid=m_grid, reps=DECOYS.reps, seed=seed,
                             privacy=privacy, dataset=f"{dataset}:decoy{k}")[0][["m", "error"]]
                    for k, fake in enumerate(DECOYS.designs(design().X, seed=seed, dataset=dataset))]  # fmt: skip
        except PrivacyError:
            continue
        err = pd.concat(runs)
        err["log"] = np.log(err.error)
        err = err.groupby("m").agg(mean=("error", "mean"), sd=("error", "std"), n=("error", "size"),
                                   score=("log", "mean"))  # fmt: skip
        for m, (mean, sd, count, score) in err.iterrows():
            rows.append({"candidate": c, "m": int(m), "error": mean, "se": sd / math.sqrt(count), "score": score, **t})
    return decoys.pooled(pd.DataFrame(rows), DECOYS.pool)


@pytest.mark.parametrize(
    "name, base, search, refused",
    [
        # B0 shared by several runs of a subsample, R None and set, T < average refused by the estimator (so the
        # batch is rerun one by one), f0 = 1.5 refused by the plan
        ("precond_gd", {"B0": 2.0, "C": 2.0, "T": 4},
         {"B0": [1.0, 3.0], "C": [0.5, 4.0], "T": [2, 6], "average": [1, 3], "R": [None, 1.5], "f0": [0.2, 1.5]}, 40),
        ("ssp", {"B_X": 2.0, "B_Y": 2.0}, {"B_X": [0.5, 2.0, 4.0], "B_Y": [1.0, 3.0]}, 0),  # one call each
    ],
)  # fmt: skip
def test_the_batched_search_gives_the_per_candidate_table_bit_for_bit(name, base, search, refused, caplog):
    method = get(name)
    cands = tuning.candidates(method, base, search, "w")
    with caplog.at_level(logging.WARNING, logger="dpcost.analysis.decoys"):
        choices, table = decoys.decoy_search(design(), method, cands, DECOYS, **KW)
    expected = per_candidate(method, cands, **KW)
    pd.testing.assert_frame_equal(table, expected, check_exact=True)
    assert table.candidate.nunique() == len(cands) - refused and len(table) == 3 * (len(cands) - refused)
    assert sum("refused" in r.message for r in caplog.records) == refused  # once per candidate, not per decoy
    best = expected.loc[expected.groupby("m").pooled.idxmin()]
    assert choices == {int(r.m): cands[int(r.candidate)] for r in best.itertuples()}


def test_precond_gd_batch_is_the_separate_calls_and_refuses_alike():
    d = design()
    X, y = d.X[:1500], d.y[:1500]
    method = get("precond_gd")
    cands = tuning.candidates(method, {"B0": 2.0, "C": 2.0, "T": 5},
                              {"B0": [1.0, 3.0], "R": [None, 1.0], "average": [1, 2]}, "w")  # fmt: skip
    p = P.at(1500)
    rngs = lambda: [np.random.default_rng([3, c]) for c in range(len(cands))]  # noqa: E731
    plans = {}
    batch = pgd.precond_gd_batch(X, y, privacy=p, rngs=rngs(), tunings=cands, plans=plans)
    alone = [pgd.precond_gd(X, y, privacy=p, rng=r, **t) for r, t in zip(rngs(), cands, strict=True)]
    assert all(np.array_equal(a, b) for a, b in zip(batch, alone, strict=True))
    assert len(plans) == 4  # one per (B0, R), for the 8 runs: average is not a plan constant
    again = pgd.precond_gd_batch(X, y, privacy=p, rngs=rngs(), tunings=cands, plans=plans)  # from the memo
    assert all(np.array_equal(a, b) for a, b in zip(batch, again, strict=True))
    with pytest.raises(PrivacyError, match="f0"):  # a refusal is never memoised
        pgd.precond_gd_batch(X, y, privacy=p, rngs=rngs()[:1], tunings=[{**cands[0], "f0": 1.5}], plans=plans)
    assert len(plans) == 4


@pytest.mark.parametrize("d", [*range(1, 18), 127, 128, 129])
def test_row_norms_are_numpys_bit_for_bit(d):
    """Every column count up to 17 and past numpy's pairwise block of 128, C and Fortran order, in several blocks."""
    rng = np.random.default_rng(d)
    for m in (1, 2, 7, 8, 9, 1000, 20001):
        U = rng.normal(size=(m, d)) * rng.lognormal(0, 3, size=(m, 1))
        for V in (U, np.asfortranarray(U)):
            assert row_norms(V).tobytes() == np.linalg.norm(V, axis=1).tobytes()


def test_a_search_split_over_parts_of_the_m_grid_gives_the_same_choices_and_table():
    """The tune job split over parts of its m grid (one job per part, then a merge): each part plans the whole grid
    and runs its own m; a candidate a run refuses in one part (T < average) is dropped from the merge."""
    method = get("precond_gd")
    cands = tuning.candidates(method, {"B0": 2.0, "C": 2.0, "T": 4}, {"T": [2, 6], "average": [1, 3], "f0": [0.2, 1.5]},
                              "w")  # fmt: skip
    whole = decoys.decoy_search(design(), method, cands, DECOYS, **KW)
    parts = [decoys.decoy_errors(design(), method, cands, DECOYS, **KW, part=p) for p in ([400], [1200, 2500])]
    split = decoys.decoy_choice(decoys.merge_errors(parts), method, cands, DECOYS, m_grid=KW["m_grid"], dataset="d")
    pd.testing.assert_frame_equal(split[1], whole[1], check_exact=True)
    assert split[0] == whole[0]
    assert set(parts[0]) == set(parts[1]) and 0 < whole[1].candidate.nunique() < len(cands)  # some were refused


def test_a_plan_refused_at_one_m_drops_the_candidate_from_the_split_search_too(monkeypatch):
    """Each part plans only its own m; a candidate whose plan is refused at an m of another part is still dropped,
    by the merge, exactly as the unsplit search drops it."""
    method = get("ssp")
    cands = tuning.candidates(method, {"B_X": 2.0, "B_Y": 2.0}, {"B_X": [1.0, 3.0]}, "w")
    real = decoys.plan_record

    def refuse_b3_at_1200(method, privacy, m, d, tuning, params):  # planted: an m-dependent refusal
        if m == 1200 and tuning["B_X"] == 3.0:
            raise PrivacyError("planted refusal")
        return real(method, privacy, m, d, tuning, params)

    monkeypatch.setattr(decoys, "plan_record", refuse_b3_at_1200)
    whole = decoys.decoy_search(design(), method, cands, DECOYS, **KW)
    parts = [decoys.decoy_errors(design(), method, cands, DECOYS, **KW, part=p) for p in ([400], [1200, 2500])]
    assert set(parts[0]) == {0, 1} and set(parts[1]) == {0}  # the first part did not see the refusal
    split = decoys.decoy_choice(decoys.merge_errors(parts), method, cands, DECOYS, m_grid=KW["m_grid"], dataset="d")
    pd.testing.assert_frame_equal(split[1], whole[1], check_exact=True)
    assert split[0] == whole[0] and set(whole[1].candidate) == {0}
