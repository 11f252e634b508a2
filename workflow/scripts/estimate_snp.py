"""Run one sparse mean method over the m grid and the repetitions; write its tidy error table."""

import json
import logging
import time

import numpy as np
import pandas as pd

from dpcost.experiment import run_mean_grid
from dpcost.scripting import run


def main():
    table = pd.read_parquet(snakemake.input.genotypes)
    meta = json.loads(open(snakemake.input.meta).read())
    snps = list(meta["truth"])
    groups = sorted(meta["groups"])
    A = table.loc[table.group == groups[0], snps].to_numpy(np.int8)
    B = table.loc[table.group == groups[1], snps].to_numpy(np.int8)
    mu = np.array([meta["truth"][k] for k in snps])
    method = snakemake.wildcards.method
    t0 = time.perf_counter()
    errors = run_mean_grid(
        A,
        B,
        mu,
        method=method,
        s=snakemake.params.s,
        params=dict(snakemake.params.tuning),
        m_grid=snakemake.params.m,
        reps=snakemake.params.reps,
        seed=snakemake.params.seed,
        epsilon=snakemake.params.privacy["epsilon"],
        delta=snakemake.params.privacy["delta"],
        calibration=snakemake.params.calibration,
        on_invalid=snakemake.params.on_invalid,
        dataset="snp",
    )
    logging.getLogger("estimate").info("%s: %d rows in %.2f s", method, len(errors), time.perf_counter() - t0)
    errors.to_parquet(snakemake.output[0], index=False)


run(main, snakemake.log[0], "estimate_snp")
