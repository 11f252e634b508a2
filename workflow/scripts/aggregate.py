"""Concatenate the per-method error tables and summarize them per (method, m)."""

import pandas as pd

from dpcost.experiment import summarize
from dpcost.scripting import run


def main():
    errors = pd.concat([pd.read_parquet(p) for p in snakemake.input], ignore_index=True)
    errors = errors.sort_values(["method", "m", "rep"], kind="stable").reset_index(drop=True)
    errors.to_parquet(snakemake.output.errors, index=False)
    summarize(errors).to_csv(snakemake.output.summary, index=False, float_format="%.6g")


run(main, snakemake.log[0], "aggregate")
