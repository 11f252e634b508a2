"""The privacy-utility map of one analysis: summaries, the epsilon needed per m, and the heat map."""

from dpcost.scripting import map_summary_job, run

p = snakemake.params
out = snakemake.output
run(
    lambda: map_summary_job(
        dataset=snakemake.wildcards.dataset,
        tables=list(snakemake.input),
        privacy=dict(p.privacy),
        calibration=p.calibration,
        tuning_mode=p.tuning_mode,
        outputs={"summary": out.summary, "ratios": out.ratios, "needed": out.needed, "figure": [out.png, out.pdf]},
    ),
    snakemake.log[0],
    "privacy_map",
)
