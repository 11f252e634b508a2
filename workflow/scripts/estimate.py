"""The jobs of workflow/rules/estimate.smk: dpcost.jobs.estimate (one function per rule)."""

from dpcost.jobs import estimate, main

main(snakemake, estimate)
