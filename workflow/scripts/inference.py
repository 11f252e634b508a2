"""The jobs of workflow/rules/inference.smk: dpcost.jobs.inference (one function per rule)."""

from dpcost.jobs import inference, main

main(snakemake, inference)
