"""The jobs of workflow/rules/attack.smk: dpcost.jobs.attack (one function per rule)."""

from dpcost.jobs import attack, main

main(snakemake, attack)
