"""Choose the constants of one method of one analysis at every m (fixed, decoy or private tuning)."""

from dpcost.dp.spec import Privacy
from dpcost.scripting import run, tune_job

p = dict(snakemake.params.tune)
run(
    lambda: tune_job(
        dataset=snakemake.wildcards.dataset,
        method=snakemake.wildcards.method,
        inputs={k: v for k, v in snakemake.input.items()},
        mode=p["mode"],
        tuning=p["tuning"],
        search=p["search"],
        decoys=p["decoys"],
        private_tuning=p["private_tuning"],
        params=dict(p["params"]),
        m_grid=list(p["m"]),
        seed=p["seed"],
        privacy=Privacy(**p["privacy"]),
        out_json=snakemake.output.record,
        out_table=snakemake.output.table,
    ),
    snakemake.log[0],
    "tune",
)
