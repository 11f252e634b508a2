# The real-data benchmark of private regression (not in the default target: `snakemake --cores N benchmark`, with
# config/presets/benchmark.yaml): one job per (data set, method) over the benchmark's epsilons at each data set's
# largest m, then the tables and the figure (dpcost.analysis.benchmark).


rule benchmark_method:
    input:
        unpack(data_inputs),
    output:
        table="results/benchmark/runs/{dataset}/{method}.parquet",
        record="results/benchmark/runs/{dataset}/{method}.json",
    log:
        "logs/benchmark/{dataset}_{method}.log",
    benchmark:
        "results/benchmarks/benchmark_{dataset}_{method}.tsv"
    wildcard_constraints:
        dataset=one_of(BENCHMARK_DATASETS),
    conda:
        "../envs/dpcost.yaml"
    params:
        spec=lambda wc: TuningSpec.of(
            {**config[wc.dataset], "tuning_mode": BENCHMARK["tuning_mode"]}, wc.method
        ).to_dict(),
        block=config.get("benchmark"),
        grid=lambda wc: config[wc.dataset]["m"],
        params=lambda wc: analysis_of(wc.dataset).params_from(config[wc.dataset]),
        seed=config["seed"],
        privacy=lambda wc: privacy(wc.dataset).to_dict(),
    script:
        "../scripts/benchmark_method.py"


rule benchmark_summary:
    input:
        tables=[
            f"results/benchmark/runs/{ds}/{k}.parquet"
            for ds in BENCHMARK_DATASETS
            for k in BENCHMARK_METHODS
        ],
        records=[
            f"results/benchmark/runs/{ds}/{k}.json"
            for ds in BENCHMARK_DATASETS
            for k in BENCHMARK_METHODS
        ],
    output:
        errors="results/benchmark/errors.parquet",
        summary=report(
            "results/benchmark/summary.csv",
            caption="../report/benchmark.rst",
            category="benchmark",
            labels={"output": "summary"},
        ),
        wins=report(
            "results/benchmark/wins.csv",
            caption="../report/benchmark.rst",
            category="benchmark",
            labels={"output": "wins"},
        ),
        png=report(
            "results/benchmark/benchmark.png",
            caption="../report/benchmark.rst",
            category="benchmark",
            labels={"output": "figure"},
        ),
        pdf="results/benchmark/benchmark.pdf",
    log:
        "logs/benchmark/summary.log",
    benchmark:
        "results/benchmarks/benchmark_summary.tsv"
    conda:
        "../envs/dpcost.yaml"
    params:
        delta=lambda wc: per_dataset(lambda ds: config[ds]["privacy"]["delta"]),
        calibration=lambda wc: per_dataset(calibration),
        tuning_mode=BENCHMARK.get("tuning_mode") if BENCHMARK else None,
    script:
        "../scripts/benchmark_summary.py"
