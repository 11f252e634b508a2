"""The jobs of workflow/rules/aggregate.smk: dpcost.jobs.aggregate (one function per rule)."""

from dpcost.jobs import aggregate, main

main(snakemake, aggregate)
