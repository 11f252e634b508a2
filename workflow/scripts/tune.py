"""Choose the constants of one method of one analysis at every m (fixed, decoy or private tuning)."""

from dpcost.analysis.tuning import TuningSpec
from dpcost.dp.spec import Privacy
from dpcost.scripting import run, tune_job

p = dict(snakemake.params.tune)
run(
    lambda: tune_job(
        dataset=snakemake.wildcards.dataset,
        method=snakemake.wildcards.method,
        inputs={k: v for k, v in snakemake.input.items() if k != "parts"},
        spec=TuningSpec(**p["spec"]),
        params=dict(p["params"]),
        m_grid=list(p["m"]),
        seed=p["seed"],
        privacy=Privacy(**p["privacy"]),
        out_json=snakemake.output.record,
        out_table=snakemake.output.table,
        parts=list(snakemake.input.parts),
    ),
    snakemake.log[0],
    "tune",
)
