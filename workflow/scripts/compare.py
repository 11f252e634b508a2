"""Housing: every method's mean error relative to the best DP method of ours and to diffprivlib, per m."""

import pandas as pd

from dpcost.experiment import REGRESSION_METHODS, compare
from dpcost.scripting import run


def main():
    summary = pd.read_csv(snakemake.input.summary)
    private = [name for name, spec in REGRESSION_METHODS.items() if spec.private]
    compare(summary, private).to_csv(snakemake.output[0], index=False, float_format="%.6g")


run(main, snakemake.log[0], "compare")
