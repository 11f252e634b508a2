"""Every method's mean error relative to the best DP method of ours (peers excluded) and to diffprivlib, per m."""

import pandas as pd

from dpcost.analysis.datasets import ANALYSES
from dpcost.analysis.summaries import compare
from dpcost.estimators.registry import methods_of
from dpcost.scripting import run


def main(dataset, summary_csv, out):
    ours = [k for k, m in methods_of(ANALYSES[dataset].family).items() if m.private and not m.peer]
    compare(pd.read_csv(summary_csv), ours).to_csv(out, index=False, float_format="%.6g")


run(
    lambda: main(snakemake.wildcards.dataset, snakemake.input.summary, snakemake.output[0]), snakemake.log[0], "compare"
)
