"""The jobs of workflow/rules/libsvm.smk: dpcost.jobs.libsvm (one function per rule)."""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one job per core: threaded BLAS only fights the other jobs

from dpcost.jobs import libsvm, main  # noqa: E402

main(snakemake, libsvm)
