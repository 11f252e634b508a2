"""Collect the simulation jobs: errors.parquet, summary.csv, rates.csv and the privacy ledger."""

from dpcost.scripting import run
from dpcost.simulation.jobs import aggregate_job

run(
    lambda: aggregate_job(
        snakemake.params.block,
        tables=list(snakemake.input.tables),
        plans=list(snakemake.input.plans),
        out_errors=snakemake.output.errors,
        out_summary=snakemake.output.summary,
        out_rates=snakemake.output.rates,
        out_ledger=snakemake.output.ledger,
    ),
    snakemake.log[0],
    "simulation_aggregate",
)
