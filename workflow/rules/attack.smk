# The score attack on the released estimates (docs/methods.md, "Score attacks"): one job per (dataset, method)
# re-creates repetitions 0 … attack.reps − 1 of its error curve (the same subsamples, constants and noise) and scores
# members of each subsample against records outside it; then the table and the figure per dataset.


rule attack_method:
    input:
        unpack(data_inputs),
        tuning="results/{dataset}/tuning/{method}.json",
    output:
        table="results/{dataset}/attack/{method}.parquet",
    log:
        "logs/{dataset}/attack_{method}.log",
    benchmark:
        "results/benchmarks/attack_{dataset}_{method}.tsv"
    wildcard_constraints:
        dataset=one_of(DATASETS),
    conda:
        "../envs/dpcost.yaml"
    params:
        job=lambda wc: attack_params(wc.dataset),
    script:
        "../scripts/attack_method.py"


rule attack:
    input:
        tables=lambda wc: expand(
            "results/{dataset}/attack/{method}.parquet",
            dataset=wc.dataset,
            method=METHODS[wc.dataset],
        ),
        summary="results/{dataset}/summary.csv",
    output:
        csv=report(
            "results/{dataset}/attack.csv",
            caption="../report/attack.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "score attack table"},
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
        "results/benchmarks/attack_{dataset}.tsv"
    wildcard_constraints:
        dataset=one_of(DATASETS),
    conda:
        "../envs/dpcost.yaml"
    params:
        privacy=lambda wc: privacy(wc.dataset).to_dict(),
        alpha=lambda wc: config[wc.dataset]["attack"]["alpha"],
        tuning_mode=lambda wc: config[wc.dataset].get("tuning_mode", "fixed"),
    script:
        "../scripts/attack_summary.py"
