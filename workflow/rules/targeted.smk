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
        tuning_spec=lambda wc: RUN.tuning_spec(wc.dataset, wc.method),
        job=lambda wc: {
            **RUN.estimate_args(wc.dataset),
            **{k: v for k, v in TARGETED[wc.dataset].items() if k != "methods"},
        },
    script:
        "../scripts/targeted.py"


rule targeted:
    input:
        tables=lambda wc: targeted_files(wc.dataset),
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
    conda:
        "../envs/dpcost.yaml"
    params:
        privacy=lambda wc: RUN.privacy(wc.dataset).to_dict(),
    script:
        "../scripts/targeted.py"
