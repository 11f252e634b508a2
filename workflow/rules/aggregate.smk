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
        calibration=lambda wc: calibration(wc.dataset),
        text=lambda wc: PLOT_TEXT[wc.dataset],
    script:
        "../scripts/plot_error_curves.py"


rule ledger:
    input:
        meta="results/{dataset}/preprocessing.json",
    output:
        "results/{dataset}/privacy_ledger.json",
    log:
        "logs/{dataset}/ledger.log",
    wildcard_constraints:
        dataset="housing|snp",
    conda:
        "../envs/dpcost.yaml"
    params:
        methods=lambda wc: METHODS[wc.dataset],
        tuning=lambda wc: config[wc.dataset].get("tuning", {}),
        m=lambda wc: config[wc.dataset]["m"],
        privacy=lambda wc: config[wc.dataset]["privacy"],
        calibration=lambda wc: calibration(wc.dataset),
        on_invalid=config["on_invalid"],
        extra=lambda wc: {"s": config["snp"]["s"]} if wc.dataset == "snp" else {},
        data_derived=lambda wc: (
            [
                "tuning constants (R, T, C, c_x, eta0, kappa) were chosen once by the maintainers on the full "
                "real data (README, 'Tuning choices')"
            ]
            if wc.dataset == "housing"
            else []
        ),
    script:
        "../scripts/ledger.py"
