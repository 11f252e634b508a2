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
        job=args("simulate"),
    script:
        "../scripts/simulation.py"


rule simulation_aggregate:
    input:
        tables=targets.simulation_runs(RUN, "parquet"),
        plans=targets.simulation_runs(RUN, "plans.json"),
    output:
        errors="results/simulation/errors.parquet",
        summary="results/simulation/summary.csv",
        rates="results/simulation/rates.csv",
        ledger="results/simulation/privacy_ledger.json",
    log:
        "logs/simulation/aggregate.log",
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("simulation_aggregate"),
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
    localrule: True
    conda:
        "../envs/dpcost.yaml"
    params:
        job=args("simulation_plot"),
    script:
        "../scripts/simulation.py"
