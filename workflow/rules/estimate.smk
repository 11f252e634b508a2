# One job per (analysis, method): it loops over the m grid and the repetitions, with the constants its tune job
# chose. Each (m, rep) draws from its own stream, so splitting or merging jobs never changes a number. Beside its
# table each job writes the privacy plans it used (one per m), from which the ledger is built, and the score
# attack's statistics on its first attack.reps repetitions, scored as they are released (attack.smk). A job that
# m_parts splits joins the tables, plans and attack statistics of its estimate_part jobs, one per part of the m grid
# (dpcost.jobs.estimate).


rule estimate:
    input:
        unpack(data_inputs),
        unpack(tuning_record),
        parts=lambda wc: part_files(wc.dataset, "estimate", wc.method, "parquet"),
        part_plans=lambda wc: part_files(
            wc.dataset, "estimate", wc.method, "parquet.plans.json"
        ),
        part_attacks=lambda wc: part_files(
            wc.dataset, "estimate", wc.method, "attack.parquet"
        ),
    output:
        table="results/{dataset}/estimates/{method}.parquet",
        plans="results/{dataset}/estimates/{method}.plans.json",
        attack="results/{dataset}/attack/{method}.parquet",
    log:
        "logs/{dataset}/estimate_{method}.log",
    benchmark:
        "results/job_times/estimate_{dataset}_{method}.tsv"
    wildcard_constraints:
        dataset=one_of(DATASETS),
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("estimate"),
    script:
        "../scripts/estimate.py"


rule estimate_part:
    input:
        unpack(data_inputs),
        unpack(tuning_record),
    output:
        table="results/{dataset}/parts/estimate_{method}.{part}.parquet",
        plans="results/{dataset}/parts/estimate_{method}.{part}.parquet.plans.json",
        attack="results/{dataset}/parts/estimate_{method}.{part}.attack.parquet",
    log:
        "logs/{dataset}/estimate_{method}.{part}.log",
    benchmark:
        "results/job_times/estimate_{dataset}_{method}.{part}.tsv"
    wildcard_constraints:
        dataset=one_of(DATASETS),
        part="[0-9]+",
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("estimate_part"),
    script:
        "../scripts/estimate.py"
