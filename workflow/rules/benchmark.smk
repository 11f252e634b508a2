# The real-data benchmark of private regression (not in the default target: `snakemake --cores N benchmark`, with
# config/presets/benchmark.yaml): one job per (data set, method) over the benchmark's epsilons at each data set's
# largest m, then the tables and the figures: the ranked chart and the heat map (dpcost.analysis.benchmark).


rule benchmark_method:
    input:
        unpack(data_inputs),
    output:
        table="results/benchmark/runs/{dataset}/{method}.parquet",
        record="results/benchmark/runs/{dataset}/{method}.json",
    log:
        "logs/benchmark/{dataset}_{method}.log",
    benchmark:
        "results/job_times/benchmark_{dataset}_{method}.tsv"
    wildcard_constraints:
        dataset=one_of(BENCHMARK["datasets"]),
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("benchmark_method"),
    script:
        "../scripts/benchmark.py"


rule benchmark_summary:
    input:
        tables=expand(
            "results/benchmark/runs/{dataset}/{method}.parquet",
            dataset=BENCHMARK["datasets"],
            method=BENCHMARK["methods"],
        ),
        records=expand(
            "results/benchmark/runs/{dataset}/{method}.json",
            dataset=BENCHMARK["datasets"],
            method=BENCHMARK["methods"],
        ),
    output:
        errors="results/benchmark/errors.parquet",
        summary=report(
            "results/benchmark/summary.csv",
            caption="../report/benchmark.rst",
            category="benchmark",
            labels={"output": "summary (CSV)"},
        ),
        wins=report(
            "results/benchmark/wins.csv",
            caption="../report/benchmark.rst",
            category="benchmark",
            labels={"output": "wins (CSV)"},
        ),
        png=report(
            "results/benchmark/benchmark.png",
            caption="../report/benchmark.rst",
            category="benchmark",
            labels={"output": "figure"},
        ),
        pdf="results/benchmark/benchmark.pdf",
        heatmap_png=report(
            "results/benchmark/benchmark_heatmap.png",
            caption="../report/benchmark.rst",
            category="benchmark",
            labels={"output": "heat map"},
        ),
        heatmap_pdf="results/benchmark/benchmark_heatmap.pdf",
    log:
        "logs/benchmark/summary.log",
    benchmark:
        "results/job_times/benchmark_summary.tsv"
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("benchmark_summary"),
    script:
        "../scripts/benchmark.py"


# The benchmark's private confidence intervals (the tables' `inference` blocks; workflow/rules/inference.smk does the
# same for each analysis): one job per (data set, method with a procedure) at every epsilon and m of its cells, then
# coverage and width ratio per table x method x epsilon (results/benchmark/inference.csv).
rule benchmark_inference:
    input:
        unpack(data_inputs),
    output:
        table="results/benchmark/inference/{dataset}/{method}.parquet",
        record="results/benchmark/inference/{dataset}/{method}.json",
    log:
        "logs/benchmark/inference_{dataset}_{method}.log",
    benchmark:
        "results/job_times/benchmark_inference_{dataset}_{method}.tsv"
    wildcard_constraints:
        dataset=one_of(BENCHMARK_INFERENCE),
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("benchmark_inference"),
    script:
        "../scripts/benchmark.py"


rule benchmark_inference_summary:
    input:
        tables=[
            f"results/benchmark/inference/{ds}/{method}.parquet"
            for ds, methods in BENCHMARK_INFERENCE.items()
            for method in methods
        ],
        records=[
            f"results/benchmark/inference/{ds}/{method}.json"
            for ds, methods in BENCHMARK_INFERENCE.items()
            for method in methods
        ],
    output:
        table="results/benchmark/inference.parquet",
        csv=report(
            "results/benchmark/inference.csv",
            caption="../report/benchmark.rst",
            category="benchmark",
            labels={"output": "confidence intervals (CSV)"},
        ),
    log:
        "logs/benchmark/inference_summary.log",
    benchmark:
        "results/job_times/benchmark_inference_summary.tsv"
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("benchmark_inference_summary"),
    script:
        "../scripts/benchmark.py"


# The benchmark's targeted attacks (the tables' `targeted` blocks; workflow/rules/targeted.smk does the same for each
# analysis): one job per (data set, method) at the table's largest benchmark m and every epsilon, then per table x
# method x epsilon the attack on the top-leverage row (results/benchmark/targeted.csv) and its figure.
rule benchmark_targeted_method:
    input:
        unpack(data_inputs),
    output:
        table="results/benchmark/targeted/{dataset}/{method}.parquet",
    log:
        "logs/benchmark/targeted_{dataset}_{method}.log",
    benchmark:
        "results/job_times/benchmark_targeted_{dataset}_{method}.tsv"
    wildcard_constraints:
        dataset=one_of(BENCHMARK_TARGETED),
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("benchmark_targeted_method"),
    script:
        "../scripts/benchmark.py"


rule benchmark_targeted:
    input:
        tables=[
            f"results/benchmark/targeted/{ds}/{method}.parquet"
            for ds, args in BENCHMARK_TARGETED.items()
            for method in args["methods"]
        ],
    output:
        table="results/benchmark/targeted.parquet",
        csv=report(
            "results/benchmark/targeted.csv",
            caption="../report/benchmark.rst",
            category="benchmark",
            labels={"output": "targeted attacks (CSV)"},
        ),
        png=report(
            "results/benchmark/targeted.png",
            caption="../report/benchmark.rst",
            category="benchmark",
            labels={"output": "targeted attacks"},
        ),
        pdf="results/benchmark/targeted.pdf",
    log:
        "logs/benchmark/targeted.log",
    benchmark:
        "results/job_times/benchmark_targeted.tsv"
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("benchmark_targeted"),
    script:
        "../scripts/benchmark.py"
