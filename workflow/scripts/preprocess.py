"""The jobs of workflow/rules/preprocess.smk: dpcost.jobs.preprocess (one function per rule)."""

from dpcost.jobs import main, preprocess

main(snakemake, preprocess)
