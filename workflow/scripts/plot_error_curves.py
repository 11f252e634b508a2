"""Log-log error curves, one per method with its 5–95 % band, and the error of the trivial estimate 0."""

import json

import numpy as np
import pandas as pd

from dpcost.analysis.datasets import ANALYSES
from dpcost.analysis.plotting import error_curves
from dpcost.scripting import run


def main(dataset, summary_csv, meta_file, privacy, calibration, outputs):
    analysis = ANALYSES[dataset]
    truth = json.loads(open(meta_file).read())["truth"]
    error_curves(
        pd.read_csv(summary_csv),
        outputs,
        title=analysis.title,
        xlabel=analysis.xlabel,
        ylabel=analysis.ylabel,
        epsilon=privacy["epsilon"],
        delta=privacy["delta"],
        calibration=calibration,
        reference=(float(np.linalg.norm(list(truth.values()))), analysis.reference_label),
    )


p = snakemake.params
run(
    lambda: main(
        snakemake.wildcards.dataset,
        snakemake.input.summary,
        snakemake.input.meta,
        p.privacy,
        p.calibration,
        [snakemake.output.png, snakemake.output.pdf],
    ),
    snakemake.log[0],
    "plot",
)
