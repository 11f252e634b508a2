rule preprocess_housing:
    input:
        manifest="resources/housing/download.json",
    output:
        table="results/housing/data.parquet",
        meta="results/housing/preprocessing.json",
    log:
        "logs/preprocess_housing.log",
    conda:
        "../envs/dpcost.yaml"
    params:
        content_sha256=config["housing"]["content_sha256"],
        y_scale=config["housing"].get("y_scale", 100000),
        center_y=config["housing"].get("center_y", True),
    script:
        "../scripts/preprocess_housing.py"
