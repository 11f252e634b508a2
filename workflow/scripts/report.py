"""The jobs of workflow/rules/report.smk: dpcost.jobs.report (one function per rule)."""

from dpcost.jobs import main, report

main(snakemake, report)
