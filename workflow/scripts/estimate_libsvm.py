"""Run one method at every epsilon and trial on one LIBSVM data set's fixed split; write its rows and plans."""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one job per core: threaded BLAS only fights the other jobs

from dpcost.scripting import libsvm_estimate_job, run  # noqa: E402

p = snakemake.params
run(
    lambda: libsvm_estimate_job(
        dataset=snakemake.wildcards.dataset,
        block=dict(p.block),
        method=snakemake.wildcards.method,
        data=snakemake.input.data,
        seed=p.seed,
        calibration=p.calibration,
        on_invalid=p.on_invalid,
        sampler=p.sampler,
        out_table=snakemake.output.table,
        out_plans=snakemake.output.plans,
    ),
    snakemake.log[0],
    "estimate_libsvm",
)
