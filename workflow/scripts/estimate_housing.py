"""Run one regression method over the m grid and the repetitions; write its tidy error table."""

import json
import logging
import time

import numpy as np
import pandas as pd

from dpcost import housing
from dpcost.experiment import run_regression_grid
from dpcost.scripting import run


def main():
    data = pd.read_parquet(snakemake.input.table)
    X = data[housing.COVARIATES].to_numpy()
    y = data["y"].to_numpy()
    meta = json.loads(open(snakemake.input.meta).read())
    beta_full = np.array([meta["truth"][c] for c in housing.COVARIATES])
    method = snakemake.wildcards.method
    t0 = time.perf_counter()
    errors = run_regression_grid(
        X,
        y,
        beta_full,
        method=method,
        params=dict(snakemake.params.tuning),
        m_grid=snakemake.params.m,
        reps=snakemake.params.reps,
        seed=snakemake.params.seed,
        epsilon=snakemake.params.privacy["epsilon"],
        delta=snakemake.params.privacy["delta"],
        calibration=snakemake.params.calibration,
        on_invalid=snakemake.params.on_invalid,
        dataset="housing",
    )
    logging.getLogger("estimate").info("%s: %d rows in %.2f s", method, len(errors), time.perf_counter() - t0)
    errors.to_parquet(snakemake.output[0], index=False)


run(main, snakemake.log[0], "estimate_housing")
