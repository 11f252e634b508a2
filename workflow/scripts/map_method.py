"""One method of one analysis over the privacy-utility map's (epsilon, m) grid."""

from dpcost.analysis.tuning import TuningSpec
from dpcost.dp.spec import Privacy
from dpcost.scripting import map_job, run

p = snakemake.params
run(
    lambda: map_job(
        dataset=snakemake.wildcards.dataset,
        method=snakemake.wildcards.method,
        inputs={k: v for k, v in snakemake.input.items()},
        spec=TuningSpec(**p.spec),
        grid=dict(p.grid),
        params=dict(p.params),
        seed=p.seed,
        privacy=Privacy(**p.privacy),
        out_table=snakemake.output.table,
        out_record=snakemake.output.record,
    ),
    snakemake.log[0],
    "map_method",
)
