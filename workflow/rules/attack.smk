# The score attack on the released estimates (docs/methods.md, "Score attacks"): each estimate job scores members of
# the subsamples of its repetitions 0 … attack.reps − 1 against records outside them, as it releases them
# (estimate.smk); here the table and the figure per analysis (dpcost.jobs.attack).


rule attack:
    input:
        tables=lambda wc: per_method(
            wc.dataset, "results/{dataset}/attack/{method}.parquet"
        ),
        summary="results/{dataset}/summary.csv",
        # the caption says what the targeted attack sees, when it runs
        targeted=lambda wc: (
            f"results/{wc.dataset}/targeted.csv" if wc.dataset in TARGETED else []
        ),
    output:
        csv=report(
            "results/{dataset}/attack.csv",
            caption="../report/attack.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "score attack table (CSV)"},
        ),
        png=report(
            "results/{dataset}/attack.png",
            caption="../report/attack.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "score attack"},
        ),
        pdf="results/{dataset}/attack.pdf",
    log:
        "logs/{dataset}/attack.log",
    benchmark:
        "results/job_times/attack_{dataset}.tsv"
    wildcard_constraints:
        dataset=one_of(DATASETS),
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("attack"),
    script:
        "../scripts/attack.py"
