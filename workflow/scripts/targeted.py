"""The jobs of workflow/rules/targeted.smk: dpcost.jobs.targeted (one function per rule)."""

from dpcost.jobs import main, targeted

main(snakemake, targeted)
