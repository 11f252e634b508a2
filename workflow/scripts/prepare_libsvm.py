"""Draw the fixed split of one LIBSVM data set from the public seed; write its arrays and what was drawn."""

from dpcost.scripting import libsvm_prepare_job, run

p = snakemake.params
run(
    lambda: libsvm_prepare_job(
        dataset=snakemake.wildcards.dataset,
        block=dict(p.block),
        manifest=snakemake.input.manifest,
        seed=p.seed,
        out_data=snakemake.output.data,
        out_meta=snakemake.output.meta,
    ),
    snakemake.log[0],
    "prepare_libsvm",
)
