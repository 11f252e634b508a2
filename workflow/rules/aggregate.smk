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
        summary=report(
            "results/{dataset}/summary.csv",
            caption="../report/summary.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "summary table"},
        ),
    log:
        "logs/{dataset}/aggregate.log",
    benchmark:
        "results/benchmarks/aggregate_{dataset}.tsv"
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
        png=report(
            "results/{dataset}/error_curves.png",
            caption="../report/error_curves.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "error curves"},
        ),
        pdf="results/{dataset}/error_curves.pdf",
    log:
        "logs/{dataset}/plot.log",
    benchmark:
        "results/benchmarks/plot_{dataset}.tsv"
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
        report(
            "results/{dataset}/privacy_ledger.json",
            caption="../report/ledger.rst",
            category="{dataset}",
            labels={"dataset": "{dataset}", "output": "privacy ledger"},
        ),
    log:
        "logs/{dataset}/ledger.log",
    benchmark:
        "results/benchmarks/ledger_{dataset}.tsv"
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
                "tuning constants (R, T, C, c_x, eta0, kappa, the JL rows r, the SGD batch and passes) were chosen "
                "once by the maintainers on the full "
                "real data (README, 'Tuning choices')"
            ]
            if wc.dataset == "housing"
            else []
        ),
    script:
        "../scripts/ledger.py"


rule config_snapshot:
    output:
        report(
            "results/config_used.yaml",
            caption="../report/config.rst",
            category="configuration",
            labels={"output": "configuration"},
        ),
    log:
        "logs/config_snapshot.log",
    benchmark:
        "results/benchmarks/config_snapshot.tsv"
    conda:
        "../envs/dpcost.yaml"
    params:
        config=config,
    script:
        "../scripts/config_snapshot.py"


rule compare_housing:
    input:
        summary="results/housing/summary.csv",
    output:
        report(
            "results/housing/comparison.csv",
            caption="../report/comparison.rst",
            category="housing",
            labels={"dataset": "housing", "output": "comparison with peers"},
        ),
    log:
        "logs/housing/compare.log",
    benchmark:
        "results/benchmarks/compare_housing.tsv"
    conda:
        "../envs/dpcost.yaml"
    script:
        "../scripts/compare.py"
