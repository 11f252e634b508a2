# One job per (dataset, method): it loops over the m grid and the repetitions. Each (m, rep) draws from its own
# stream, so splitting or merging jobs never changes a number.


rule estimate_housing:
    input:
        table="results/housing/data.parquet",
        meta="results/housing/preprocessing.json",
    output:
        "results/housing/estimates/{method}.parquet",
    log:
        "logs/housing/estimate_{method}.log",
    benchmark:
        "results/benchmarks/estimate_housing_{method}.tsv"
    wildcard_constraints:
        method="|".join(config["housing"]["methods"]),
    conda:
        "../envs/dpcost.yaml"
    params:
        m=config["housing"]["m"],
        reps=config["reps"],
        seed=config["seed"],
        privacy=config["housing"]["privacy"],
        calibration=calibration("housing"),
        on_invalid=config["on_invalid"],
        tuning=lambda wc: config["housing"].get("tuning", {}).get(wc.method, {}),
    script:
        "../scripts/estimate_housing.py"


rule estimate_snp:
    input:
        genotypes="results/snp/genotypes.parquet",
        meta="results/snp/preprocessing.json",
    output:
        "results/snp/estimates/{method}.parquet",
    log:
        "logs/snp/estimate_{method}.log",
    benchmark:
        "results/benchmarks/estimate_snp_{method}.tsv"
    wildcard_constraints:
        method="|".join(config["snp"]["methods"]),
    conda:
        "../envs/dpcost.yaml"
    params:
        m=config["snp"]["m"],
        s=config["snp"]["s"],
        reps=config["reps"],
        seed=config["seed"],
        privacy=config["snp"]["privacy"],
        calibration=calibration("snp"),
        on_invalid=config["on_invalid"],
        tuning=lambda wc: config["snp"].get("tuning", {}).get(wc.method, {}),
    script:
        "../scripts/estimate_snp.py"
