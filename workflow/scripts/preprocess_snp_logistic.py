"""The logistic analysis's record: centring, response and truth (the full-sample sparse logistic fit)."""

import json

import pandas as pd

from dpcost.analysis.datasets import snp_logistic_record
from dpcost.scripting import run, write_json_atomic


def main(genotypes, snp_meta, s, fit, out_meta):
    record = snp_logistic_record(pd.read_parquet(genotypes), json.loads(open(snp_meta).read()), s=s, fit=fit)
    write_json_atomic(out_meta, record)


p = snakemake.params
run(
    lambda: main(snakemake.input.genotypes, snakemake.input.meta, p.s, dict(p.fit), snakemake.output.meta),
    snakemake.log[0],
    "preprocess_snp_logistic",
)
