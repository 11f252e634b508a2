rule download_snp:
    output:
        manifest="resources/snp/manifest.json",
    log:
        "logs/download_snp.log",
    benchmark:
        "results/job_times/download_snp.tsv"
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("download_snp"),
    message:
        "Listing {params.job[matrix_url]} and downloading every series-matrix part"
    script:
        "../scripts/download.py"


# Any `kind: table` analysis (housing included): its raw table, from the first source whose content verifies.
rule download_table:
    output:
        table="resources/{dataset}/raw.parquet",
        manifest="resources/{dataset}/download.json",
    log:
        "logs/{dataset}/download.log",
    benchmark:
        "results/job_times/download_{dataset}.tsv"
    wildcard_constraints:
        dataset=one_of(TABLES),
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("download_table"),
    message:
        "Fetching the table {wildcards.dataset} (first source that verifies)"
    script:
        "../scripts/download.py"
