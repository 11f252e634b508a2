"""A tune or estimate job split over parts of its m grid (config m_parts: one job per part, then the job that joins
them) writes the very files of the unsplit job, byte for byte."""

import json

import numpy as np
import pandas as pd
import pytest

from dpcost.analysis.tuning import TuningSpec
from dpcost.data.housing import COVARIATES
from dpcost.dp.spec import Privacy
from dpcost.errors import DPCostError
from dpcost.scripting import estimate_job, estimate_part_job, tune_job, tune_part_job

P = Privacy(0.5, "10/n^1.1", "tight")
M = [300, 600, 900]
DECOYS = {"kinds": ["linear", "misspecified"], "radius": [1.0], "noise_sd": [0.5], "reps": 1, "pool": 1}
SPEC = TuningSpec("decoy", {"B_X": 2.0, "B_Y": 2.0}, {"B_X": [1.0, 3.0], "B_Y": [1.0, 2.0]}, DECOYS)


@pytest.fixture
def inputs(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.standard_t(4, size=(1200, len(COVARIATES)))
    table = pd.DataFrame(X, columns=COVARIATES).assign(
        y=X @ np.linspace(0.5, -0.3, len(COVARIATES)) + rng.normal(size=1200)
    )
    table.to_parquet(tmp_path / "data.parquet")
    (tmp_path / "meta.json").write_text(json.dumps({"truth": dict.fromkeys(COVARIATES, 0.1)}))
    return {"table": str(tmp_path / "data.parquet"), "meta": str(tmp_path / "meta.json")}


def _tune(tmp_path, inputs, name, parts=()):
    kw = dict(dataset="housing", method="ssp", inputs=inputs, spec=SPEC, params={}, m_grid=M, seed=5, privacy=P)
    files = []
    for k, part in enumerate(parts):
        files.append(str(tmp_path / f"{name}.{k}.npz"))
        tune_part_job(**kw, part=part, out=files[-1])
    tune_job(**kw, out_json=str(tmp_path / f"{name}.json"), out_table=str(tmp_path / f"{name}.csv"), parts=files)
    return [(tmp_path / f"{name}.{ext}").read_bytes() for ext in ("json", "csv")]


def test_a_split_tune_job_writes_the_files_of_the_unsplit_one(tmp_path, inputs):
    whole = _tune(tmp_path, inputs, "whole")
    assert _tune(tmp_path, inputs, "split", parts=[[300], [600, 900]]) == whole
    assert b'"mode": "decoy"' in whole[0]  # the search ran (a fixed record would match trivially)
    with pytest.raises(DPCostError, match="not the m grid"):  # parts out of order are refused, not mis-joined
        _tune(tmp_path, inputs, "swapped", parts=[[600, 900], [300]])


def test_a_split_estimate_job_writes_the_files_of_the_unsplit_one(tmp_path, inputs):
    _tune(tmp_path, inputs, "tuning")
    kw = dict(dataset="housing", method="ssp", inputs=inputs, tuning_file=str(tmp_path / "tuning.json"), params={},
              m_grid=M, reps=3, seed=5, privacy=P)  # fmt: skip
    out = {name: (str(tmp_path / f"{name}.parquet"), str(tmp_path / f"{name}.plans.json")) for name in ("a", "b")}
    estimate_job(**kw, out_table=out["a"][0], out_plans=out["a"][1])
    parts = [str(tmp_path / f"part{k}.parquet") for k in range(2)]
    for path, part in zip(parts, [[300, 600], [900]], strict=True):
        estimate_part_job(**kw, part=part, out=path)
    estimate_job(**kw, out_table=out["b"][0], out_plans=out["b"][1], parts=parts)
    for a, b in zip(out["a"], out["b"], strict=True):
        assert open(a, "rb").read() == open(b, "rb").read()
    assert len(pd.read_parquet(out["a"][0])) == 9 and len(json.load(open(out["a"][1]))["plans"]) == 3
