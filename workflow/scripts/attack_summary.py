"""The score attack's table (per method and m) and figure of one analysis."""

from dpcost.dp.spec import Privacy
from dpcost.scripting import attack_summary_job, run

p = snakemake.params
run(
    lambda: attack_summary_job(
        dataset=snakemake.wildcards.dataset,
        tables=list(snakemake.input.tables),
        errors_summary=snakemake.input.summary,
        privacy=Privacy(**p.privacy),
        alpha=p.alpha,
        tuning_mode=p.tuning_mode,
        outputs={"csv": snakemake.output.csv, "figure": [snakemake.output.png, snakemake.output.pdf]},
    ),
    snakemake.log[0],
    "attack",
)
