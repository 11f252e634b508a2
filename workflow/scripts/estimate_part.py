"""One part of a split estimate job: the rows and plans of the m of its part of the m grid."""

from dpcost.dp.spec import Privacy
from dpcost.scripting import estimate_part_job, run

p = snakemake.params
run(
    lambda: estimate_part_job(
        dataset=snakemake.wildcards.dataset,
        method=snakemake.wildcards.method,
        inputs={k: v for k, v in snakemake.input.items() if k != "tuning"},
        tuning_file=snakemake.input.tuning,
        params=dict(p.params),
        m_grid=list(p.m),
        part=list(p.part),
        reps=p.reps,
        seed=p.seed,
        privacy=Privacy(**p.privacy),
        out=snakemake.output.table,
    ),
    snakemake.log[0],
    "estimate",
)
