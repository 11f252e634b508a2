# One job per (analysis, method) whose tuning looks at data (a decoy search or a private selection;
# dpcost.analysis.tuning): the constants the method runs with at every m. The estimate job reads its record (and
# makes it itself for the config's constants: common.smk's tuning_record); the ledger says which data the choice
# looked at. A job that m_parts splits runs its decoy search as tune_part jobs, one per part of the m grid, and chooses from
# theirs (dpcost.jobs.tune).


rule tune:
    input:
        unpack(data_inputs),
        parts=lambda wc: part_files(wc.dataset, "tune", wc.method, "npz"),
    output:
        record="results/{dataset}/tuning/{method}.json",
        table="results/{dataset}/tuning/{method}.csv",
    log:
        "logs/{dataset}/tune_{method}.log",
    benchmark:
        "results/job_times/tune_{dataset}_{method}.tsv"
    wildcard_constraints:
        dataset=one_of(DATASETS),
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("tune"),
    script:
        "../scripts/tune.py"


rule tune_part:
    input:
        unpack(data_inputs),
    output:
        errors="results/{dataset}/parts/tune_{method}.{part}.npz",
    log:
        "logs/{dataset}/tune_{method}.{part}.log",
    benchmark:
        "results/job_times/tune_{dataset}_{method}.{part}.tsv"
    wildcard_constraints:
        dataset=one_of(DATASETS),
        part="[0-9]+",
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("tune_part"),
    script:
        "../scripts/tune.py"
