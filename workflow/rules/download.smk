rule download_snp:
    output:
        manifest="resources/snp/manifest.json",
    log:
        "logs/download_snp.log",
    benchmark:
        "results/job_times/download_snp.tsv"
    conda:
        "../envs/dpcost.yaml"
    params:
        accession=config["snp"]["accession"],
        matrix_url=config["snp"]["matrix_url"],
        manual_dir="resources/snp/manual",
        options=DOWNLOAD_OPTIONS,
    message:
        "Listing {params.matrix_url} and downloading every series-matrix part"
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
    conda:
        "../envs/dpcost.yaml"
    params:
        sources=lambda wc: config[wc.dataset]["sources"],
        content_sha256=lambda wc: config[wc.dataset].get("content_sha256"),
        reader=lambda wc: config[wc.dataset].get("reader"),
        manual_dir=lambda wc: f"resources/{wc.dataset}/manual",
        options=DOWNLOAD_OPTIONS,
    message:
        "Fetching the table {wildcards.dataset} (first source that verifies)"
    script:
        "../scripts/download.py"
