"""The jobs of workflow/rules/simulation.smk: dpcost.jobs.simulation (one function per rule)."""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one job per core: threaded BLAS only fights the other jobs

from dpcost.jobs import main, simulation  # noqa: E402

main(snakemake, simulation)
