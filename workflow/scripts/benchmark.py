"""The jobs of workflow/rules/benchmark.smk: dpcost.jobs.benchmark (one function per rule)."""

from dpcost.jobs import benchmark, main

main(snakemake, benchmark)
