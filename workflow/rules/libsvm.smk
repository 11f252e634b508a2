# Private sparse learning on real data (Wang & Gu 2020, Tables 2-3): E2006-tfidf and RCV1 from the LIBSVM data
# sets page, opt-in through `datasets` (large downloads). One fixed split per data set, one job per (data set,
# method), then one job collecting the table, the ledger, the resources and the figure.


rule download_libsvm:
    output:
        manifest="resources/{dataset}/download.json",
    log:
        "logs/download_{dataset}.log",
    benchmark:
        "results/job_times/download_{dataset}.tsv"
    wildcard_constraints:
        dataset=one_of(LIBSVM),
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("download_libsvm"),
    message:
        "Downloading the {wildcards.dataset} train and test files (LIBSVM data sets)"
    script:
        "../scripts/libsvm.py"


rule prepare_libsvm:
    input:
        manifest="resources/{dataset}/download.json",
    output:
        data="resources/{dataset}/prepared.npz",
        meta="results/{dataset}/preparation.json",
    log:
        "logs/prepare_{dataset}.log",
    benchmark:
        "results/job_times/prepare_{dataset}.tsv"
    wildcard_constraints:
        dataset=one_of(LIBSVM),
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("prepare_libsvm"),
    script:
        "../scripts/libsvm.py"


rule estimate_libsvm:
    input:
        data="resources/{dataset}/prepared.npz",
    output:
        table="results/{dataset}/runs/{method}.parquet",
        plans="results/{dataset}/runs/{method}.plans.json",
    log:
        "logs/estimate_{dataset}_{method}.log",
    benchmark:
        "results/job_times/estimate_{dataset}_{method}.tsv"
    wildcard_constraints:
        dataset=one_of(LIBSVM),
        method="[a-z0-9_]+",
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("estimate_libsvm"),
    script:
        "../scripts/libsvm.py"


rule libsvm_table:
    input:
        tables=lambda w: targets.study_runs(RUN, w.dataset, "parquet"),
        plans=lambda w: targets.study_runs(RUN, w.dataset, "plans.json"),
        meta="results/{dataset}/preparation.json",
    output:
        errors="results/{dataset}/errors.parquet",
        table="results/{dataset}/table.csv",
        ledger="results/{dataset}/privacy_ledger.json",
        resources="results/{dataset}/resources.csv",
        png="results/{dataset}/table.png",
        pdf="results/{dataset}/table.pdf",
    log:
        "logs/table_{dataset}.log",
    wildcard_constraints:
        dataset=one_of(LIBSVM),
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("libsvm_table"),
    script:
        "../scripts/libsvm.py"
