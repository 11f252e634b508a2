"""Log-log error curves, one per method with its 5–95 % band, and the error of the trivial estimate 0."""

import json

import numpy as np
import pandas as pd

from dpcost.plotting import error_curves
from dpcost.scripting import run


def main():
    summary = pd.read_csv(snakemake.input.summary)
    text = snakemake.params.text
    truth = json.loads(open(snakemake.input.meta).read())["truth"]
    trivial = float(np.linalg.norm(list(truth.values())))
    error_curves(
        summary,
        [snakemake.output.png, snakemake.output.pdf],
        title=text["title"],
        xlabel=text["xlabel"],
        ylabel=text["ylabel"],
        epsilon=snakemake.params.privacy["epsilon"],
        delta=snakemake.params.privacy["delta"],
        calibration=snakemake.params.calibration,
        reference=(trivial, text["reference_label"]),
    )


run(main, snakemake.log[0], "plot")
