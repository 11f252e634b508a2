rule download_housing:
    output:
        manifest="resources/housing/download.json",
    log:
        "logs/download_housing.log",
    conda:
        "../envs/dpcost.yaml"
    params:
        sources=config["housing"]["sources"],
        content_sha256=config["housing"]["content_sha256"],
        manual_dir="resources/housing/manual",
        options=config.get("download", {}),
    message:
        "Downloading the California housing data (first source that verifies)"
    script:
        "../scripts/download_housing.py"
