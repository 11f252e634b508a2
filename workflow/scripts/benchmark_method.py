"""One (data set, method) job of the real-data benchmark (dpcost.analysis.benchmark.run_benchmark)."""

from dpcost.analysis import benchmark, datasets
from dpcost.analysis.tuning import TuningSpec
from dpcost.dp.spec import Privacy
from dpcost.estimators.registry import methods_of
from dpcost.scripting import run, write_json_atomic, write_table_atomic


def main(dataset, method, inputs, spec, block, grid, params, seed, privacy, out_table, out_record):
    analysis = datasets.get(dataset)
    table, record = benchmark.run_benchmark(
        analysis, methods_of(analysis.family)[method], inputs, spec, epsilons=block["epsilon"], grid=grid,
        small_m=block.get("small_m"), reps=block["reps"], test_fraction=block["test_fraction"], params=params,
        seed=seed, privacy=privacy,
    )  # fmt: skip
    write_table_atomic(out_table, table)
    write_json_atomic(out_record, record)


p = snakemake.params
run(
    lambda: main(
        snakemake.wildcards.dataset,
        snakemake.wildcards.method,
        dict(snakemake.input.items()),
        TuningSpec(**p.spec),
        dict(p.block),
        list(p.grid),
        dict(p.params),
        p.seed,
        Privacy(**p.privacy),
        snakemake.output.table,
        snakemake.output.record,
    ),  # fmt: skip
    snakemake.log[0],
    "benchmark_method",
)
