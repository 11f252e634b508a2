"""Concatenate the per-method error tables and summarize them per (method, m)."""

import pandas as pd

from dpcost.analysis.summaries import summarize
from dpcost.scripting import run


def main(tables, out_errors, out_summary):
    errors = pd.concat([pd.read_parquet(p) for p in tables], ignore_index=True)
    errors = errors.sort_values(["method", "m", "rep"], kind="stable").reset_index(drop=True)
    errors.to_parquet(out_errors, index=False)
    summarize(errors).to_csv(out_summary, index=False, float_format="%.6g")


run(
    lambda: main(list(snakemake.input), snakemake.output.errors, snakemake.output.summary),
    snakemake.log[0],
    "aggregate",
)
