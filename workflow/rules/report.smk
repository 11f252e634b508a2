# The pages of `snakemake --report` (docs/usage.md, "The report"; dpcost.jobs.report): per analysis its headline —
# the error-curve figure and the table of its largest m, in the report's first category and on its first page
# (report/workflow.rst includes every headline.html) — and every table and record as HTML, beside the raw files
# their own rules register. The benchmark's likewise, when it runs. Which pages a run makes: dpcost.run.targets.

# the first category of the report's menu (categories are listed in alphabetical order)
ANSWER = "1. The answer"


rule report_analysis:
    input:
        summary="results/{dataset}/summary.csv",
        figure="results/{dataset}/error_curves.png",
        attack="results/{dataset}/attack.csv",
        ledger="results/{dataset}/privacy_ledger.json",
        meta="results/{dataset}/preprocessing.json",
    output:
        headline=report(
            "results/{dataset}/report/headline.html",
            caption="../report/headline.rst",
            category=ANSWER,
            labels={
                "analysis": "{dataset}",
                "output": "error curves and the largest m",
            },
        ),
        summary=report(
            "results/{dataset}/report/summary.html",
            caption="../report/summary.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "summary table"},
        ),
        attack=report(
            "results/{dataset}/report/attack.html",
            caption="../report/attack.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "score attack table"},
        ),
        ledger=report(
            "results/{dataset}/report/ledger.html",
            caption="../report/ledger.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "privacy ledger"},
        ),
        provenance=report(
            "results/{dataset}/report/provenance.html",
            caption="../report/provenance.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "provenance"},
        ),
    log:
        "logs/{dataset}/report_analysis.log",
    benchmark:
        "results/job_times/report_analysis_{dataset}.tsv"
    wildcard_constraints:
        dataset=one_of(DATASETS),
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    script:
        "../scripts/report.py"


rule report_comparison:
    input:
        table="results/{dataset}/comparison.csv",
    output:
        table=report(
            "results/{dataset}/report/comparison.html",
            caption="../report/comparison.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "comparison with peers"},
        ),
    log:
        "logs/{dataset}/report_comparison.log",
    benchmark:
        "results/job_times/report_comparison_{dataset}.tsv"
    wildcard_constraints:
        dataset=one_of(targets.making(RUN, "comparison")),
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    script:
        "../scripts/report.py"


rule report_map:
    input:
        needed="results/{dataset}/epsilon_needed.csv",
        ratios="results/{dataset}/privacy_map_ratios.csv",
    output:
        map=report(
            "results/{dataset}/report/privacy_map.html",
            caption="../report/epsilon_needed.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "epsilon needed and map"},
        ),
    log:
        "logs/{dataset}/report_map.log",
    benchmark:
        "results/job_times/report_map_{dataset}.tsv"
    wildcard_constraints:
        dataset=one_of(targets.making(RUN, "privacy_map")),
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    script:
        "../scripts/report.py"


rule report_inference:
    input:
        csv="results/{dataset}/inference.csv",
        figure="results/{dataset}/inference.png",
    output:
        page=report(
            "results/{dataset}/report/inference.html",
            caption="../report/inference.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "confidence intervals"},
        ),
    log:
        "logs/{dataset}/report_inference.log",
    benchmark:
        "results/job_times/report_inference_{dataset}.tsv"
    wildcard_constraints:
        dataset=one_of(INFERENCE),
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    script:
        "../scripts/report.py"


rule report_targeted:
    input:
        csv="results/{dataset}/targeted.csv",
        figure="results/{dataset}/targeted.png",
    output:
        page=report(
            "results/{dataset}/report/targeted.html",
            caption="../report/targeted.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "targeted attacks"},
        ),
    log:
        "logs/{dataset}/report_targeted.log",
    benchmark:
        "results/job_times/report_targeted_{dataset}.tsv"
    wildcard_constraints:
        dataset=one_of(TARGETED),
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    script:
        "../scripts/report.py"


rule report_benchmark_inference:
    input:
        csv="results/benchmark/inference.csv",
    output:
        page=report(
            "results/benchmark/report/inference.html",
            caption="../report/benchmark.rst",
            category="benchmark",
            labels={"output": "confidence intervals"},
        ),
    log:
        "logs/benchmark/report_inference.log",
    benchmark:
        "results/job_times/report_benchmark_inference.tsv"
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    script:
        "../scripts/report.py"


rule report_benchmark:
    input:
        summary="results/benchmark/summary.csv",
        wins="results/benchmark/wins.csv",
        figure="results/benchmark/benchmark.png",
    output:
        headline=report(
            "results/benchmark/report/headline.html",
            caption="../report/benchmark.rst",
            category=ANSWER,
            labels={"analysis": "benchmark", "output": "figure and wins"},
        ),
        summary=report(
            "results/benchmark/report/summary.html",
            caption="../report/benchmark.rst",
            category="benchmark",
            labels={"output": "summary"},
        ),
        wins=report(
            "results/benchmark/report/wins.html",
            caption="../report/benchmark.rst",
            category="benchmark",
            labels={"output": "wins"},
        ),
    log:
        "logs/benchmark/report.log",
    benchmark:
        "results/job_times/report_benchmark.tsv"
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    script:
        "../scripts/report.py"
