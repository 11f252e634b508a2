"""Draw one figure of the simulation study (PNG and PDF)."""

from dpcost.scripting import run
from dpcost.simulation.jobs import plot_job

run(
    lambda: plot_job(
        summary=snakemake.input.summary,
        rates=snakemake.input.rates,
        number=int(snakemake.wildcards.number),
        paths=[snakemake.output.png, snakemake.output.pdf],
        privacy=snakemake.params.privacy,
        calibration=snakemake.params.calibration,
        deltas=dict(snakemake.params.deltas),
    ),
    snakemake.log[0],
    "simulation_plot",
)
