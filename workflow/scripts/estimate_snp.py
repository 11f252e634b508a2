"""Run one sparse mean method over the m grid and the repetitions; write its tidy error table."""

import json

import numpy as np
import pandas as pd

from dpcost.experiment import run_mean_grid
from dpcost.scripting import run, run_grid_job


def main():
    table = pd.read_parquet(snakemake.input.genotypes)
    meta = json.loads(open(snakemake.input.meta).read())
    snps = list(meta["truth"])
    groups = sorted(meta["groups"])
    A = table.loc[table.group == groups[0], snps].to_numpy(np.int8)
    B = table.loc[table.group == groups[1], snps].to_numpy(np.int8)
    mu = np.array([meta["truth"][k] for k in snps])
    run_grid_job(
        run_mean_grid,
        (A, B, mu),
        snakemake.params,
        snakemake.wildcards.method,
        "snp",
        snakemake.output[0],
        s=snakemake.params.s,
    )


run(main, snakemake.log[0], "estimate_snp")
