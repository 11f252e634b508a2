"""Collect one LIBSVM data set's jobs: errors, the table beside Wang & Gu (2020), the ledger, resources, figure."""

from dpcost.scripting import libsvm_table_job, run

p = snakemake.params
o = snakemake.output
run(
    lambda: libsvm_table_job(
        dataset=snakemake.wildcards.dataset,
        block=dict(p.block),
        tables=list(snakemake.input.tables),
        plans=list(snakemake.input.plans),
        meta=snakemake.input.meta,
        calibration=p.calibration,
        sampler=p.sampler,
        out_errors=o.errors,
        out_table=o.table,
        out_ledger=o.ledger,
        out_resources=o.resources,
        figures=[o.png, o.pdf],
    ),
    snakemake.log[0],
    "libsvm_table",
)
