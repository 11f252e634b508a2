rule preprocess_housing:
    input:
        manifest="resources/housing/download.json",
    output:
        table="results/housing/data.parquet",
        meta="results/housing/preprocessing.json",
    params:
        content_sha256=config["housing"]["content_sha256"],
        y_scale=config["housing"].get("y_scale", 100000),
        center_y=config["housing"].get("center_y", True),
    log:
        "logs/preprocess_housing.log",
    script:
        "../scripts/preprocess_housing.py"
