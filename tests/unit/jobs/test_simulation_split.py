"""Splitting an experiment's repetitions over several jobs (``simulation.reps_per_job``) changes no number: every
repetition draws from its own streams, and only the job holding repetition 0 writes plans, so the collected
errors, summary, rates and ledger of a split run are those of the unsplit run, byte for byte."""

import json

import pytest
import yaml

from dpcost.errors import ConfigError
from dpcost.jobs import Job
from dpcost.jobs.simulation import simulate, simulation_aggregate
from dpcost.simulation.experiments import SimulationStudy

from support import REPO

CONFIG = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
ARGS = {"calibration": CONFIG["calibration"], "on_invalid": CONFIG["on_invalid"], "sampler": CONFIG["sampler"],
        "seed": CONFIG["seed"]}  # fmt: skip
# small: a data-driven R (R=dp_quantile: each repetition's R is private and its own) and the sparsity variants (a
# selection budget computed once per job, plans from a selection's streams), two sizes each
SMALL = {
    "trunc": {"figure": 1, "panel": "a", "problem": "sparse_mean", "d": "n", "s": 5, "n": [100, 200],
              "methods": ["top_s_mean", "peeling"], "variants": ["R=none", "R=dp_quantile"]},
    "select": {"figure": 2, "panel": "a", "problem": "sparse_ols", "d": "n", "s": 5, "n": [100, 200], "reps": 3,
               "methods": ["iht", "dp_iht"], "variants": ["s=true", "s=private_selection", "s=cv_expmech"]},
}  # fmt: skip


def _block(**over) -> dict:
    return {**CONFIG["simulation"], "reps": 5, "experiments": SMALL, **over}


def _run(block: dict, out) -> tuple[list[tuple], dict]:
    """Every job of the block, then the collecting job, as the workflow runs them; the plans files, and the outputs."""
    out.mkdir()
    tables, plans = [], []
    jobs = SimulationStudy.from_config(block).jobs()
    for e, n, a, b in jobs:
        tables.append(str(out / f"{e}_n{n}_reps{a}-{b}.parquet"))
        plans.append(str(out / f"{e}_n{n}_reps{a}-{b}.plans.json"))
        simulate(Job("simulate", output={"table": tables[-1], "plans": plans[-1]}, args={**ARGS, "block": block},
                     wildcards={"experiment": e, "n": str(n), "first": str(a), "last": str(b)}))  # fmt: skip
    outputs = {"errors": "errors.parquet", "summary": "summary.csv", "rates": "rates.csv",
               "ledger": "privacy_ledger.json"}  # fmt: skip
    simulation_aggregate(Job("simulation_aggregate", {"tables": tables, "plans": plans},
                             {k: str(out / v) for k, v in outputs.items()}, {"block": block}))  # fmt: skip
    return jobs, {v: (out / v).read_bytes() for v in outputs.values()} | {
        "plans": [json.loads(open(p).read()) for p in plans]
    }


def test_a_split_run_collects_the_same_bytes_as_the_unsplit_run(tmp_path):
    whole_jobs, whole = _run(_block(), tmp_path / "whole")
    split_jobs, split = _run(_block(reps_per_job=2, experiments={**SMALL, "select": {**SMALL["select"],
                                                                                      "reps_per_job": 1}}),
                             tmp_path / "split")  # fmt: skip
    assert whole_jobs == [("trunc", 100, 0, 4), ("trunc", 200, 0, 4), ("select", 100, 0, 2), ("select", 200, 0, 2)]
    assert split_jobs == [("trunc", 100, 0, 1), ("trunc", 100, 2, 3), ("trunc", 100, 4, 4), ("trunc", 200, 0, 1),
                          ("trunc", 200, 2, 3), ("trunc", 200, 4, 4), ("select", 100, 0, 0), ("select", 100, 1, 1),
                          ("select", 100, 2, 2), ("select", 200, 0, 0), ("select", 200, 1, 1),
                          ("select", 200, 2, 2)]  # fmt: skip
    # only the first job of each (experiment, n) lists plans, as many as the unsplit job's
    assert [len(p["plans"]) > 0 for p in split["plans"]] == [a == 0 for _, _, a, _ in split_jobs]
    assert [len(p["plans"]) for p in split["plans"] if p["reps"][0] == 0] == [len(p["plans"]) for p in whole["plans"]]
    for name in ("errors.parquet", "summary.csv", "rates.csv", "privacy_ledger.json"):
        assert split[name] == whole[name], name
    ledger = json.loads(whole["privacy_ledger.json"])
    assert len(ledger["plans"]) == 2 * (2 + 3)  # per n: peeling's two variants, dp_iht's three: each once


def test_the_split_is_checked():
    with pytest.raises(ConfigError, match=r"simulation.reps_per_job must be an integer >= 1, got 0"):
        SimulationStudy.from_config(_block(reps_per_job=0))
    with pytest.raises(ConfigError, match=r"experiments.trunc.reps_per_job must be an integer >= 1, got 2.5"):
        SimulationStudy.from_config(_block(experiments={"trunc": {**SMALL["trunc"], "reps_per_job": 2.5}}))
    jobs = SimulationStudy.from_config(_block(reps_per_job=7)).jobs()  # larger than reps: one job per n
    assert jobs[:2] == [("trunc", 100, 0, 4), ("trunc", 200, 0, 4)]
    with pytest.raises(ConfigError, match="repetitions 3-5 are not among its 0-4"):
        simulate(Job("simulate", output={"table": "unused.parquet", "plans": "unused.json"},
                     args={**ARGS, "block": _block(), "calibration": "tight", "on_invalid": "refuse"},
                     wildcards={"experiment": "trunc", "n": "100", "first": "3", "last": "5"}))  # fmt: skip
