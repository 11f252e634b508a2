"""A tune or estimate job split over parts of its m grid (config m_parts: one job per part, then the job that joins
them) writes the very files of the unsplit job, byte for byte."""

import json
import os

import numpy as np
import pandas as pd
import pytest

from dpcost.analysis.tuning import TuningSpec
from dpcost.dp.privacy import Privacy
from dpcost.errors import DPCostError
from dpcost.jobs import Job
from dpcost.jobs.estimate import estimate, estimate_part
from dpcost.jobs.tune import tune, tune_part

COVARIATES = ["income", "age", "population", "households", "total_rooms"]
P = Privacy(0.5, "10/n^1.1", "tight")
M = [300, 600, 900]
DECOYS = {"kinds": ["linear", "misspecified"], "radius": [1.0], "noise_sd": [0.5], "reps": 1, "pool": 1}
SPEC = TuningSpec("decoy", {"B_X": 2.0, "B_Y": 2.0}, {"B_X": [1.0, 3.0], "B_Y": [1.0, 2.0]}, DECOYS)


@pytest.fixture
def inputs(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.standard_t(4, size=(1200, len(COVARIATES)))
    table = pd.DataFrame(X, columns=COVARIATES).assign(
        y=X @ np.linspace(0.5, -0.3, len(COVARIATES)) + rng.normal(size=1200), split="train"
    )
    table.to_parquet(tmp_path / "data.parquet")
    (tmp_path / "meta.json").write_text(json.dumps({"truth": dict.fromkeys(COVARIATES, 0.1), "covariates": COVARIATES}))
    return {"table": str(tmp_path / "data.parquet"), "meta": str(tmp_path / "meta.json")}


WILD = {"dataset": "housing", "method": "ssp"}


def _tune(tmp_path, inputs, name, parts=()):
    args = dict(spec=SPEC.to_dict(), params={}, m=M, seed=5, privacy=P.to_dict())
    files = []
    for k, part in enumerate(parts):
        files.append(str(tmp_path / f"{name}.{k}.npz"))
        tune_part(Job("tune_part", inputs, {"errors": files[-1]}, {**args, "part": part}, WILD))
    out = {"record": str(tmp_path / f"{name}.json"), "table": str(tmp_path / f"{name}.csv")}
    tune(Job("tune", {**inputs, "parts": files}, out, args, WILD))
    return [(tmp_path / f"{name}.{ext}").read_bytes() for ext in ("json", "csv")]


def test_a_split_tune_job_writes_the_files_of_the_unsplit_one(tmp_path, inputs):
    whole = _tune(tmp_path, inputs, "whole")
    assert _tune(tmp_path, inputs, "split", parts=[[300], [600, 900]]) == whole
    assert b'"mode": "decoy"' in whole[0]  # the search ran (a fixed record would match trivially)
    with pytest.raises(DPCostError, match="not the m grid"):  # parts out of order are refused, not mis-joined
        _tune(tmp_path, inputs, "swapped", parts=[[600, 900], [300]])


def test_a_split_estimate_job_writes_the_files_of_the_unsplit_one(tmp_path, inputs):
    _tune(tmp_path, inputs, "tuning")
    data = {**inputs, "tuning": str(tmp_path / "tuning.json")}
    args = dict(params={}, m=M, reps=3, seed=5, privacy=P.to_dict(), attack={"reps": 2, "cap": 50})
    out = {name: {"table": str(tmp_path / f"{name}.parquet"), "plans": str(tmp_path / f"{name}.plans.json"),
                  "attack": str(tmp_path / f"{name}.attack.parquet")} for name in ("a", "b")}  # fmt: skip
    estimate(Job("estimate", data, out["a"], args, WILD))
    parts = [{"table": str(tmp_path / f"part{k}.parquet"), "plans": str(tmp_path / f"part{k}.plans.json"),
              "attack": str(tmp_path / f"part{k}.attack.parquet")} for k in range(2)]  # fmt: skip
    for files, part in zip(parts, [[300, 600], [900]], strict=True):
        estimate_part(Job("estimate_part", data, files, {**args, "part": part}, WILD))
    joined = {name: [f[k] for f in parts] for name, k in (("parts", "table"), ("part_plans", "plans"),
                                                          ("part_attacks", "attack"))}  # fmt: skip
    estimate(Job("estimate", {**data, **joined}, out["b"], args, WILD))
    for a, b in zip(out["a"].values(), out["b"].values(), strict=True):
        assert open(a, "rb").read() == open(b, "rb").read()
    assert len(pd.read_parquet(out["a"]["table"])) == 9 and len(json.load(open(out["a"]["plans"]))["plans"]) == 3
    # the attack: scored in the one pass (a) and in each part, joined (b): the same bytes; its first 2 reps at every m
    attacked = pd.read_parquet(out["a"]["attack"])
    assert set(attacked.rep) == {0, 1} and set(attacked.m) == set(M)
    assert all(os.path.exists(f["attack"]) for f in parts)


@pytest.mark.parametrize(
    "spec, method",
    [(TuningSpec("fixed", {"B_X": 2.0, "B_Y": 2.0}), "ssp"), (TuningSpec("decoy", {}), "boosted_adassp"),
     (TuningSpec("decoy", {}, {}, DECOYS), "ols")],
    ids=["fixed", "tuning-free", "not private"],
)  # fmt: skip
def test_without_a_tune_job_the_estimate_job_makes_the_record_that_job_would_have(tmp_path, inputs, spec, method):
    """A method whose tuning does not look at data has no tune job (RunConfig.tunes); its estimate job makes the
    record from the config's spec — the tune job's record, as that file reads back — and runs the same."""
    from dpcost.analysis.tuning import looks_at_data
    from dpcost.estimators.registry import methods_of
    from dpcost.jobs.estimate import tuned

    wild = {"dataset": "housing", "method": method}
    assert not looks_at_data(methods_of("regression")[method], spec)
    args = dict(spec=spec.to_dict(), params={}, m=M, seed=5, privacy=P.to_dict())
    out = {"record": str(tmp_path / "t.json"), "table": str(tmp_path / "t.csv")}
    tune(Job("tune", inputs, out, args, wild))
    from_file = tuned(Job("estimate", {**inputs, "tuning": out["record"]}, {}, args, wild), M)
    made = tuned(Job("estimate", inputs, {}, {**args, "tuning_spec": spec.to_dict()}, wild), M)
    assert made[2] == from_file[2] == json.loads(open(out["record"]).read())
    assert made[4:] == from_file[4:]  # the base tuning and the tuning by m it runs with
    # a method that searches is the tune job's (a decoy search on data): it is not made in the job
    assert looks_at_data(methods_of("regression")["ssp"], SPEC)
