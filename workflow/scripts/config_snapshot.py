"""Write the merged, validated configuration of this run next to its results."""

import yaml

from dpcost.scripting import run


def main(config, out):
    with open(out, "w") as fh:
        yaml.safe_dump(config, fh, sort_keys=False, allow_unicode=True)


run(lambda: main(dict(snakemake.params.config), snakemake.output[0]), snakemake.log[0], "config_snapshot")
