"""Download the train and test files of one LIBSVM data set; write the record of what was received."""

from dpcost.scripting import libsvm_download_job, run

p = snakemake.params
run(
    lambda: libsvm_download_job(
        dataset=snakemake.wildcards.dataset,
        sources=dict(p.sources),
        manual_dir=p.manual_dir,
        options=dict(p.options),
        out=snakemake.output.manifest,
    ),
    snakemake.log[0],
    "download_libsvm",
)
