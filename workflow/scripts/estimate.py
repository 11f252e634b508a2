"""Run one method of one analysis over the m grid and the repetitions; write its tidy table and the plans it used."""

from dpcost.dp.spec import Privacy
from dpcost.scripting import estimate_job, run

p = snakemake.params
run(
    lambda: estimate_job(
        dataset=p.dataset,
        method=snakemake.wildcards.method,
        inputs={k: v for k, v in snakemake.input.items() if k not in ("parts", "part_plans")},
        tuning_file=snakemake.input.tuning,
        params=dict(p.params),
        m_grid=list(p.m),
        reps=p.reps,
        seed=p.seed,
        privacy=Privacy(**p.privacy),
        out_table=snakemake.output.table,
        out_plans=snakemake.output.plans,
        parts=list(snakemake.input.parts),
    ),
    snakemake.log[0],
    "estimate",
)
