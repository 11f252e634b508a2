rule aggregate:
    input:
        meta="results/{dataset}/preprocessing.json",
        tables=lambda wc: per_method(
            wc.dataset, "results/{dataset}/estimates/{method}.parquet"
        ),
        plans=lambda wc: per_method(
            wc.dataset, "results/{dataset}/estimates/{method}.plans.json"
        ),
    output:
        errors="results/{dataset}/errors.parquet",
        summary=report(
            "results/{dataset}/summary.csv",
            caption="../report/summary.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "summary table (CSV)"},
        ),
    log:
        "logs/{dataset}/aggregate.log",
    benchmark:
        "results/job_times/aggregate_{dataset}.tsv"
    wildcard_constraints:
        dataset=one_of(DATASETS),
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("aggregate"),
    script:
        "../scripts/aggregate.py"


rule plot:
    input:
        summary="results/{dataset}/summary.csv",
        meta="results/{dataset}/preprocessing.json",
    output:
        png=report(
            "results/{dataset}/error_curves.png",
            caption="../report/error_curves.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "error curves"},
        ),
        pdf="results/{dataset}/error_curves.pdf",
        png_all=report(
            "results/{dataset}/error_curves_all.png",
            caption="../report/error_curves_all.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "error curves, every method"},
        ),
        pdf_all="results/{dataset}/error_curves_all.pdf",
    log:
        "logs/{dataset}/plot.log",
    benchmark:
        "results/job_times/plot_{dataset}.tsv"
    wildcard_constraints:
        dataset=one_of(DATASETS),
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("plot"),
    script:
        "../scripts/aggregate.py"


rule ledger:
    input:
        meta="results/{dataset}/preprocessing.json",
        plans=lambda wc: per_method(
            wc.dataset, "results/{dataset}/estimates/{method}.plans.json"
        ),
        # the private intervals' releases (workflow/rules/inference.smk), where the analysis makes them
        intervals=lambda wc: (
            inference_files(wc.dataset, "plans.json")
            if wc.dataset in INFERENCE
            else []
        ),
    output:
        ledger=report(
            "results/{dataset}/privacy_ledger.json",
            caption="../report/ledger.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "privacy ledger (JSON)"},
        ),
    log:
        "logs/{dataset}/ledger.log",
    benchmark:
        "results/job_times/ledger_{dataset}.tsv"
    wildcard_constraints:
        dataset=one_of(DATASETS),
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("ledger"),
    script:
        "../scripts/aggregate.py"


rule config_snapshot:
    output:
        config=report(
            "results/config_used.yaml",
            caption="../report/config.rst",
            category="configuration",
            labels={"output": "configuration"},
        ),
    log:
        "logs/config_snapshot.log",
    benchmark:
        "results/job_times/config_snapshot.tsv"
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("config_snapshot"),
    script:
        "../scripts/aggregate.py"


rule compare:
    input:
        summary="results/{dataset}/summary.csv",
    output:
        table=report(
            "results/{dataset}/comparison.csv",
            caption="../report/comparison.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "comparison with peers (CSV)"},
        ),
    log:
        "logs/{dataset}/compare.log",
    benchmark:
        "results/job_times/compare_{dataset}.tsv"
    wildcard_constraints:
        dataset=one_of(DATASETS),
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("compare"),
    script:
        "../scripts/aggregate.py"
