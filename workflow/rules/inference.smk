# Private confidence intervals (issue 38; docs/methods.md, "Private confidence intervals"), in every regression
# analysis whose `inference` block is enabled: one job per (analysis, method) releases the method's interval at every
# m and repetition of its error curve (the same subsamples, a noise stream of its own), one job the non-private OLS
# reference on the same subsamples, then the analysis's inference.csv, inference.parquet and figure
# (dpcost.jobs.inference).


rule inference_method:
    input:
        unpack(data_inputs),
        unpack(tuning_record),
    output:
        table="results/{dataset}/inference/{method}.parquet",
        plans="results/{dataset}/inference/{method}.plans.json",
    log:
        "logs/{dataset}/inference_{method}.log",
    benchmark:
        "results/job_times/inference_{dataset}_{method}.tsv"
    wildcard_constraints:
        dataset=one_of(INFERENCE),
        method=one_of(sorted({k for ms in INFERENCE.values() for k in ms})),
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("inference_method"),
    script:
        "../scripts/inference.py"


rule inference_reference:
    input:
        unpack(data_inputs),
    output:
        table="results/{dataset}/inference/reference.parquet",
    log:
        "logs/{dataset}/inference_reference.log",
    benchmark:
        "results/job_times/inference_reference_{dataset}.tsv"
    wildcard_constraints:
        dataset=one_of(INFERENCE),
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("inference_reference"),
    script:
        "../scripts/inference.py"


rule inference:
    input:
        reference="results/{dataset}/inference/reference.parquet",
        tables=lambda wc: inference_files(wc.dataset, "parquet"),
        plans=lambda wc: inference_files(wc.dataset, "plans.json"),
    output:
        table="results/{dataset}/inference.parquet",
        csv=report(
            "results/{dataset}/inference.csv",
            caption="../report/inference.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "confidence intervals (CSV)"},
        ),
        png=report(
            "results/{dataset}/inference.png",
            caption="../report/inference.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "confidence intervals"},
        ),
        pdf="results/{dataset}/inference.pdf",
    log:
        "logs/{dataset}/inference.log",
    benchmark:
        "results/job_times/inference_{dataset}.tsv"
    wildcard_constraints:
        dataset=one_of(INFERENCE),
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("inference"),
    script:
        "../scripts/inference.py"
