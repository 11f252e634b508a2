rule aggregate_housing:
    input:
        expand(
            "results/housing/estimates/{method}.parquet",
            method=config["housing"]["methods"],
        ),
    output:
        errors="results/housing/errors.parquet",
        summary="results/housing/summary.csv",
    log:
        "logs/housing/aggregate.log",
    conda:
        "../envs/dpcost.yaml"
    script:
        "../scripts/aggregate.py"


rule plot_housing:
    input:
        summary="results/housing/summary.csv",
        meta="results/housing/preprocessing.json",
    output:
        png="results/housing/error_curves.png",
        pdf="results/housing/error_curves.pdf",
    log:
        "logs/housing/plot.log",
    conda:
        "../envs/dpcost.yaml"
    params:
        privacy=config["housing"]["privacy"],
        title="California housing: DP OLS error vs sample size",
        xlabel="subsample size m",
        ylabel=r"mean $\|\hat\beta - \beta\|_2$ over repetitions",
    script:
        "../scripts/plot_error_curves.py"
