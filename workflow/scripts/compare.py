"""Every method's mean error relative to the best DP method of ours (peers excluded) and to diffprivlib, per m."""

import logging

import pandas as pd

from dpcost.analysis import datasets
from dpcost.analysis.summaries import compare
from dpcost.estimators.peers import available
from dpcost.estimators.registry import methods_of
from dpcost.scripting import run


def main(dataset, summary_csv, peers, out):
    registry = methods_of(datasets.get(dataset).family)
    ours = [k for k, m in registry.items() if m.private and not m.peer]
    usable = available()
    # why a peer's column can be empty: said in the table's note column and in this job's log, never silently
    missing = {k: "not installed: pip install -e '.[peers]'" if not usable[m.peer] else f"{dataset}.peers is '{peers}'"
               for k, m in registry.items() if m.peer}  # fmt: skip
    table = compare(pd.read_csv(summary_csv), ours, missing=missing)
    for note in table.loc[table["note"] != "", "note"].unique():
        logging.getLogger("compare").warning("%s", note)
    table.to_csv(out, index=False, float_format="%.6g")


run(
    lambda: main(snakemake.wildcards.dataset, snakemake.input.summary, snakemake.params.peers, snakemake.output[0]),
    snakemake.log[0],
    "compare",
)
