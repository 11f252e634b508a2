# One job per (dataset, method): it loops over the m grid and the repetitions, with the constants its tune job chose. Each (m, rep) draws from its own
# stream, so splitting or merging jobs never changes a number. Beside its table each job writes the privacy plans
# it used (one per m); the ledger is built from them. A job that m_parts splits joins the tables of its
# estimate_part jobs, one per part of the m grid.


rule estimate_housing:
    input:
        table="results/housing/data.parquet",
        meta="results/housing/preprocessing.json",
        tuning="results/housing/tuning/{method}.json",
        parts=lambda wc: part_files("housing", "estimate", wc.method, "parquet"),
        part_plans=lambda wc: part_files(
            "housing", "estimate", wc.method, "parquet.plans.json"
        ),
    output:
        table="results/housing/estimates/{method}.parquet",
        plans="results/housing/estimates/{method}.plans.json",
    log:
        "logs/housing/estimate_{method}.log",
    benchmark:
        "results/benchmarks/estimate_housing_{method}.tsv"
    wildcard_constraints:
        method="|".join(config["housing"]["methods"]),
    conda:
        "../envs/dpcost.yaml"
    params:
        **estimate_params("housing"),
        dataset="housing",
    script:
        "../scripts/estimate.py"


rule estimate_snp:
    input:
        genotypes="results/snp/genotypes.parquet",
        meta="results/snp/preprocessing.json",
        tuning="results/snp/tuning/{method}.json",
        parts=lambda wc: part_files("snp", "estimate", wc.method, "parquet"),
        part_plans=lambda wc: part_files(
            "snp", "estimate", wc.method, "parquet.plans.json"
        ),
    output:
        table="results/snp/estimates/{method}.parquet",
        plans="results/snp/estimates/{method}.plans.json",
    log:
        "logs/snp/estimate_{method}.log",
    benchmark:
        "results/benchmarks/estimate_snp_{method}.tsv"
    wildcard_constraints:
        method="|".join(config["snp"]["methods"]),
    conda:
        "../envs/dpcost.yaml"
    params:
        **estimate_params("snp"),
        dataset="snp",
    script:
        "../scripts/estimate.py"


rule estimate_snp_logistic:
    input:
        genotypes="results/snp/genotypes.parquet",
        meta="results/snp_logistic/preprocessing.json",
        tuning="results/snp_logistic/tuning/{method}.json",
        parts=lambda wc: part_files("snp_logistic", "estimate", wc.method, "parquet"),
        part_plans=lambda wc: part_files(
            "snp_logistic", "estimate", wc.method, "parquet.plans.json"
        ),
    output:
        table="results/snp_logistic/estimates/{method}.parquet",
        plans="results/snp_logistic/estimates/{method}.plans.json",
    log:
        "logs/snp_logistic/estimate_{method}.log",
    benchmark:
        "results/benchmarks/estimate_snp_logistic_{method}.tsv"
    wildcard_constraints:
        method="|".join(config["snp_logistic"]["methods"]),
    conda:
        "../envs/dpcost.yaml"
    params:
        **estimate_params("snp_logistic"),
        dataset="snp_logistic",
    script:
        "../scripts/estimate.py"


# Every `kind: table` analysis, with the arguments of its own block.
rule estimate_table:
    input:
        unpack(data_inputs),
        tuning="results/{dataset}/tuning/{method}.json",
        parts=lambda wc: part_files(wc.dataset, "estimate", wc.method, "parquet"),
        part_plans=lambda wc: part_files(
            wc.dataset, "estimate", wc.method, "parquet.plans.json"
        ),
    output:
        table="results/{dataset}/estimates/{method}.parquet",
        plans="results/{dataset}/estimates/{method}.plans.json",
    log:
        "logs/{dataset}/estimate_{method}.log",
    benchmark:
        "results/benchmarks/estimate_{dataset}_{method}.tsv"
    wildcard_constraints:
        dataset=one_of(TABLES),
    conda:
        "../envs/dpcost.yaml"
    params:
        params=lambda wc: estimate_params(wc.dataset)["params"],
        m=lambda wc: config[wc.dataset]["m"],
        reps=config["reps"],
        seed=config["seed"],
        privacy=lambda wc: privacy(wc.dataset).to_dict(),
        dataset=lambda wc: wc.dataset,
    script:
        "../scripts/estimate.py"


rule estimate_part:
    input:
        unpack(data_inputs),
        tuning="results/{dataset}/tuning/{method}.json",
    output:
        table="results/{dataset}/parts/estimate_{method}.{part}.parquet",
        plans="results/{dataset}/parts/estimate_{method}.{part}.parquet.plans.json",
    log:
        "logs/{dataset}/estimate_{method}.{part}.log",
    benchmark:
        "results/benchmarks/estimate_{dataset}_{method}.{part}.tsv"
    wildcard_constraints:
        dataset=one_of(DATASETS),
        part="[0-9]+",
    conda:
        "../envs/dpcost.yaml"
    params:
        params=lambda wc: estimate_params(wc.dataset)["params"],
        m=lambda wc: config[wc.dataset]["m"],
        part=lambda wc: m_parts(wc.dataset, "estimate", wc.method)[int(wc.part)],
        reps=config["reps"],
        seed=config["seed"],
        privacy=lambda wc: privacy(wc.dataset).to_dict(),
    script:
        "../scripts/estimate_part.py"
