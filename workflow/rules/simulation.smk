# The simulation study (Cai, Wang & Zhang 2021, §5): one job per (experiment, n, run of repetitions first-last:
# simulation.reps_per_job), then one collecting job and one job per figure. Not part of the default target:
# `snakemake --cores N simulation`.


rule simulate:
    output:
        table="results/simulation/runs/{experiment}/n{n}_reps{first}-{last}.parquet",
        plans="results/simulation/runs/{experiment}/n{n}_reps{first}-{last}.plans.json",
    log:
        "logs/simulation/{experiment}_n{n}_reps{first}-{last}.log",
    benchmark:
        "results/job_times/simulate_{experiment}_n{n}_reps{first}-{last}.tsv"
    wildcard_constraints:
        experiment="[A-Za-z0-9_]+",
        n="[0-9]+",
        first="[0-9]+",
        last="[0-9]+",
    conda:
        "../envs/dpcost.yaml"
    params:
        block=config.get("simulation"),
        calibration=config.get("simulation", {}).get(
            "calibration", config["calibration"]
        ),
        on_invalid=config["on_invalid"],
        sampler=config.get("sampler", "exact"),
        seed=config["seed"],
    script:
        "../scripts/simulation.py"


rule simulation_aggregate:
    input:
        tables=[
            f"results/simulation/runs/{e}/n{n}_reps{a}-{b}.parquet"
            for e, n, a, b in SIM_JOBS
        ],
        plans=[
            f"results/simulation/runs/{e}/n{n}_reps{a}-{b}.plans.json"
            for e, n, a, b in SIM_JOBS
        ],
    output:
        errors="results/simulation/errors.parquet",
        summary="results/simulation/summary.csv",
        rates="results/simulation/rates.csv",
        ledger="results/simulation/privacy_ledger.json",
    log:
        "logs/simulation/aggregate.log",
    conda:
        "../envs/dpcost.yaml"
    params:
        block=config.get("simulation"),
    script:
        "../scripts/simulation.py"


rule simulation_plot:
    input:
        summary="results/simulation/summary.csv",
        rates="results/simulation/rates.csv",
    output:
        png="results/simulation/fig{number}.png",
        pdf="results/simulation/fig{number}.pdf",
    log:
        "logs/simulation/fig{number}.log",
    wildcard_constraints:
        number="[0-9]+",
    conda:
        "../envs/dpcost.yaml"
    params:
        privacy=config.get("simulation", {}).get("privacy"),
        calibration=config.get("simulation", {}).get(
            "calibration", config["calibration"]
        ),
        deltas={
            name: e["delta"]
            for name, e in config.get("simulation", {}).get("experiments", {}).items()
            if e.get("delta") is not None
        },
    script:
        "../scripts/simulation.py"
