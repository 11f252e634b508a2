# One job per (dataset, method): the constants the method runs with at every m (tuning_mode fixed, decoy or private;
# dpcost.analysis.tuning). The estimate job reads its record; the ledger says which data the choice looked at.


rule tune:
    input:
        unpack(data_inputs),
    output:
        record="results/{dataset}/tuning/{method}.json",
        table="results/{dataset}/tuning/{method}.csv",
    log:
        "logs/{dataset}/tune_{method}.log",
    benchmark:
        "results/benchmarks/tune_{dataset}_{method}.tsv"
    wildcard_constraints:
        dataset=one_of(DATASETS),
    conda:
        "../envs/dpcost.yaml"
    params:
        tune=lambda wc: tune_params(wc.dataset, wc.method),
    script:
        "../scripts/tune.py"
