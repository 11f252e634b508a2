"""Log-log error curves, one per method with its 5–95 % band."""

import json

import numpy as np
import pandas as pd

from dpcost.plotting import error_curves
from dpcost.scripting import run


def main():
    summary = pd.read_csv(snakemake.input.summary)
    p = snakemake.params
    beta = json.loads(open(snakemake.input.meta).read())["beta_full"]
    trivial = float(np.linalg.norm(list(beta.values())))
    error_curves(
        summary,
        [snakemake.output.png, snakemake.output.pdf],
        title=p.title,
        xlabel=p.xlabel,
        ylabel=p.ylabel,
        epsilon=p.privacy["epsilon"],
        delta=p.privacy["delta"],
        reference=(trivial, r"$\hat\beta = 0$ (error $\|\beta\|_2$)"),
    )


run(main, snakemake.log[0], "plot")
