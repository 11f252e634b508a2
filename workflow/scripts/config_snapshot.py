"""Write the merged, validated configuration of this run next to its results."""

import yaml

from dpcost.scripting import run


def main():
    with open(snakemake.output[0], "w") as fh:
        yaml.safe_dump(dict(snakemake.params.config), fh, sort_keys=False, allow_unicode=True)


run(main, snakemake.log[0], "config_snapshot")
