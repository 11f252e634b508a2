"""The jobs of workflow/rules/download.smk: dpcost.jobs.download (one function per rule)."""

from dpcost.jobs import download, main

main(snakemake, download)
