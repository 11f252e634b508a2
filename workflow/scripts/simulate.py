"""Run repetitions first-last of one (experiment, n) of the simulation study; write its tidy table and plans."""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one job per core: threaded BLAS only fights the other jobs

from dpcost.scripting import run  # noqa: E402
from dpcost.simulation.jobs import simulate_job  # noqa: E402

p = snakemake.params
run(
    lambda: simulate_job(
        p.block,
        experiment=snakemake.wildcards.experiment,
        n=int(snakemake.wildcards.n),
        first=int(snakemake.wildcards.first),
        last=int(snakemake.wildcards.last),
        calibration=p.calibration,
        on_invalid=p.on_invalid,
        sampler=p.sampler,
        seed=p.seed,
        out_table=snakemake.output.table,
        out_plans=snakemake.output.plans,
    ),
    snakemake.log[0],
    "simulate",
)
