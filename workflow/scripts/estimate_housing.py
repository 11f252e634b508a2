"""Run one regression method over the m grid and the repetitions; write its tidy error table."""

import json

import numpy as np
import pandas as pd

from dpcost import housing
from dpcost.experiment import run_regression_grid
from dpcost.scripting import run, run_grid_job


def main():
    data = pd.read_parquet(snakemake.input.table)
    X = data[housing.COVARIATES].to_numpy()
    y = data["y"].to_numpy()
    meta = json.loads(open(snakemake.input.meta).read())
    beta_full = np.array([meta["truth"][c] for c in housing.COVARIATES])
    run_grid_job(
        run_regression_grid,
        (X, y, beta_full),
        snakemake.params,
        snakemake.wildcards.method,
        "housing",
        snakemake.output[0],
    )


run(main, snakemake.log[0], "estimate_housing")
