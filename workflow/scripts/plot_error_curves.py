"""Log-log error curves, one per method with its 5–95 % band, and the error of the trivial estimate 0: the headline
methods (at most ~7 curves, the title says why these) in one figure, the full field in a second; a curve whose mean
is pulled up by a few repetitions is named in the title."""

import collections
import json

import numpy as np
import pandas as pd

from dpcost.analysis import datasets
from dpcost.analysis.plotting import HEADLINE_NOTE, error_curves, headline, heavy_tails
from dpcost.scripting import run


def main(dataset, summary_csv, meta_file, privacy, calibration, tuning, outputs, outputs_all):
    analysis = datasets.get(dataset)
    truth = json.loads(open(meta_file).read())["truth"]
    summary = pd.read_csv(summary_csv)
    # a method that ran under another mode than the analysis's (a tuning-free one runs as "none") is named
    modes = summary[summary.private].groupby("method").tuning_mode.first() if "tuning_mode" in summary else {}
    counts = collections.Counter(v for v in dict(modes).values() if v != tuning)
    tuning = ", ".join([tuning, *(f"{n} method{'s' * (n > 1)} {mode}" for mode, n in sorted(counts.items()))])
    kw = dict(
        xlabel=analysis.xlabel,
        ylabel=analysis.ylabel,
        epsilon=privacy["epsilon"],
        delta=privacy["delta"],
        calibration=calibration,
        tuning=tuning,
        reference=(float(np.linalg.norm(list(truth.values()))), analysis.reference_label),
    )
    shown = summary[summary.method.isin(headline(summary))]
    notes = [HEADLINE_NOTE, heavy_tails(shown)]
    error_curves(shown, outputs, title=analysis.title, note="; ".join(n for n in notes if n), **kw)
    error_curves(summary, outputs_all, title=analysis.title + " — every method", note=heavy_tails(summary), **kw)


p = snakemake.params
run(
    lambda: main(
        snakemake.wildcards.dataset,
        snakemake.input.summary,
        snakemake.input.meta,
        p.privacy,
        p.calibration,
        p.tuning,
        [snakemake.output.png, snakemake.output.pdf],
        [snakemake.output.png_all, snakemake.output.pdf_all],
    ),
    snakemake.log[0],
    "plot",
)
