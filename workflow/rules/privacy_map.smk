# The privacy-utility map: every map method over a grid of (m, epsilon), one job per (dataset, method), each epsilon
# with its own tuning (the analysis's tuning mode); then the summaries, the table of the epsilon needed and the figure.


rule map_method:
    input:
        unpack(data_inputs),
    output:
        table="results/{dataset}/map/{method}.parquet",
        record="results/{dataset}/map/{method}.json",
    log:
        "logs/{dataset}/map_{method}.log",
    benchmark:
        "results/job_times/map_{dataset}_{method}.tsv"
    wildcard_constraints:
        dataset=one_of(DATASETS),
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("map_method"),
    script:
        "../scripts/privacy_map.py"


rule privacy_map:
    input:
        tables=lambda wc: targets.map_tables(RUN, wc.dataset),
        meta="results/{dataset}/preprocessing.json",
    output:
        summary="results/{dataset}/privacy_map.csv",
        ratios=report(
            "results/{dataset}/privacy_map_ratios.csv",
            caption="../report/privacy_map.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "privacy-utility map (CSV)"},
        ),
        needed=report(
            "results/{dataset}/epsilon_needed.csv",
            caption="../report/epsilon_needed.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "epsilon needed (CSV)"},
        ),
        png=report(
            "results/{dataset}/privacy_map.png",
            caption="../report/privacy_map.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "privacy-utility map figure"},
        ),
        pdf="results/{dataset}/privacy_map.pdf",
    log:
        "logs/{dataset}/privacy_map.log",
    benchmark:
        "results/job_times/privacy_map_{dataset}.tsv"
    wildcard_constraints:
        dataset=one_of(DATASETS),
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("privacy_map"),
    script:
        "../scripts/privacy_map.py"
