# Targeted attacks (issue 39; docs/methods.md, "Targeted attacks"), in every regression analysis whose `targeted`
# block is enabled: one job per (analysis, method) attacks the rows of highest leverage and a few random rows at the
# smallest and largest m — the informed adversary's reconstruction and the LiRA-style membership test, every method
# fitted with an intercept column — then the analysis's targeted.csv and figure (dpcost.jobs.targeted).


rule targeted_method:
    input:
        unpack(data_inputs),
        unpack(tuning_record),
    output:
        table="results/{dataset}/targeted/{method}.parquet",
    log:
        "logs/{dataset}/targeted_{method}.log",
    benchmark:
        "results/job_times/targeted_{dataset}_{method}.tsv"
    wildcard_constraints:
        dataset=one_of(TARGETED),
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("targeted_method"),
    script:
        "../scripts/targeted.py"


rule targeted:
    input:
        tables=lambda wc: per_method(
            wc.dataset,
            "results/{dataset}/targeted/{method}.parquet",
            TARGETED[wc.dataset]["methods"],
        ),
    output:
        csv=report(
            "results/{dataset}/targeted.csv",
            caption="../report/targeted.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "targeted attacks (CSV)"},
        ),
        png=report(
            "results/{dataset}/targeted.png",
            caption="../report/targeted.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "targeted attacks"},
        ),
        pdf="results/{dataset}/targeted.pdf",
    log:
        "logs/{dataset}/targeted.log",
    benchmark:
        "results/job_times/targeted_{dataset}.tsv"
    wildcard_constraints:
        dataset=one_of(TARGETED),
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("targeted"),
    script:
        "../scripts/targeted.py"
