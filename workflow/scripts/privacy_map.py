"""The jobs of workflow/rules/privacy_map.smk: dpcost.jobs.privacy_map (one function per rule)."""

from dpcost.jobs import main, privacy_map

main(snakemake, privacy_map)
