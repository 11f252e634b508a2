rule preprocess_snp:
    input:
        manifest="resources/snp/manifest.json",
    output:
        genotypes="results/snp/genotypes.parquet",
        snps="results/snp/snps.csv",
        meta=report(
            "results/snp/preprocessing.json",
            caption="../report/provenance.rst",
            category="snp",
            labels={"dataset": "snp", "output": "provenance (JSON)"},
        ),
    log:
        "logs/preprocess_snp.log",
    benchmark:
        "results/job_times/preprocess_snp.tsv"
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("preprocess_snp"),
    script:
        "../scripts/preprocess.py"


# The logistic analysis reuses the SNP table: its record holds the centring and the truth (the non-private
# full-sample sparse logistic fit).
rule preprocess_snp_logistic:
    input:
        genotypes="results/snp/genotypes.parquet",
        meta="results/snp/preprocessing.json",
    output:
        meta=report(
            "results/snp_logistic/preprocessing.json",
            caption="../report/provenance.rst",
            category="snp_logistic",
            labels={"dataset": "snp_logistic", "output": "provenance (JSON)"},
        ),
    log:
        "logs/preprocess_snp_logistic.log",
    benchmark:
        "results/job_times/preprocess_snp_logistic.tsv"
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("preprocess_snp_logistic"),
    script:
        "../scripts/preprocess.py"


# Any `kind: table` analysis (housing included): columns chosen, categorical columns one-hot encoded, transforms, standardization, the
# held-out split and the truth (dpcost.data.prepare.prepare; none of it private, all recorded).
rule preprocess_table:
    input:
        table="resources/{dataset}/raw.parquet",
        manifest="resources/{dataset}/download.json",
    output:
        table="results/{dataset}/data.parquet",
        meta=report(
            "results/{dataset}/preprocessing.json",
            caption="../report/provenance.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "provenance (JSON)"},
        ),
    log:
        "logs/{dataset}/preprocess.log",
    benchmark:
        "results/job_times/preprocess_{dataset}.tsv"
    wildcard_constraints:
        dataset=one_of(TABLES),
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("preprocess_table"),
    script:
        "../scripts/preprocess.py"
