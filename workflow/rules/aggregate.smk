PLOT_TEXT = {
    "housing": {
        "title": "California housing: DP OLS error vs sample size",
        "xlabel": "subsample size m",
        "ylabel": r"mean $\|\hat\beta - \beta\|_2$ over repetitions",
        "reference_label": r"$\hat\beta = 0$ (error $\|\beta\|_2$)",
    },
    "snp": {
        "title": "GSE106818: DP sparse mean of minor-allele count differences",
        "xlabel": "pairs per group m",
        "ylabel": r"mean $\|\hat\mu - \mu\|_2$ over repetitions",
        "reference_label": r"$\hat\mu = 0$ (error $\|\mu\|_2$)",
    },
}


rule aggregate:
    input:
        lambda wc: expand(
            "results/{dataset}/estimates/{method}.parquet",
            dataset=wc.dataset,
            method=METHODS[wc.dataset],
        ),
    output:
        errors="results/{dataset}/errors.parquet",
        summary="results/{dataset}/summary.csv",
    log:
        "logs/{dataset}/aggregate.log",
    wildcard_constraints:
        dataset="housing|snp",
    conda:
        "../envs/dpcost.yaml"
    script:
        "../scripts/aggregate.py"


rule plot:
    input:
        summary="results/{dataset}/summary.csv",
        meta="results/{dataset}/preprocessing.json",
    output:
        png="results/{dataset}/error_curves.png",
        pdf="results/{dataset}/error_curves.pdf",
    log:
        "logs/{dataset}/plot.log",
    wildcard_constraints:
        dataset="housing|snp",
    conda:
        "../envs/dpcost.yaml"
    params:
        privacy=lambda wc: config[wc.dataset]["privacy"],
        text=lambda wc: PLOT_TEXT[wc.dataset],
    script:
        "../scripts/plot_error_curves.py"
