"""The jobs of workflow/rules/tune.smk: dpcost.jobs.tune (one function per rule)."""

from dpcost.jobs import main, tune

main(snakemake, tune)
