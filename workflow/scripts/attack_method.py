"""The score attack on one method's releases of one analysis: every candidate's statistic."""

from dpcost.dp.spec import Privacy
from dpcost.scripting import attack_job, run

job = dict(snakemake.params.job)
run(
    lambda: attack_job(
        dataset=snakemake.wildcards.dataset,
        method=snakemake.wildcards.method,
        inputs={k: v for k, v in snakemake.input.items() if k != "tuning"},
        tuning_file=snakemake.input.tuning,
        params=dict(job["params"]),
        m_grid=list(job["m"]),
        reps=job["reps"],
        cap=job["cap"],
        seed=job["seed"],
        privacy=Privacy(**job["privacy"]),
        out_table=snakemake.output.table,
    ),
    snakemake.log[0],
    "attack_method",
)
