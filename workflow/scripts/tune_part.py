"""One part of a split tune job: every candidate's decoy errors at the m of its part of the m grid."""

from dpcost.analysis.tuning import TuningSpec
from dpcost.dp.spec import Privacy
from dpcost.scripting import run, tune_part_job

p = dict(snakemake.params.tune)
run(
    lambda: tune_part_job(
        dataset=snakemake.wildcards.dataset,
        method=snakemake.wildcards.method,
        inputs={k: v for k, v in snakemake.input.items()},
        spec=TuningSpec(**p["spec"]),
        params=dict(p["params"]),
        m_grid=list(p["m"]),
        part=list(snakemake.params.part),
        seed=p["seed"],
        privacy=Privacy(**p["privacy"]),
        out=snakemake.output[0],
    ),
    snakemake.log[0],
    "tune",
)
