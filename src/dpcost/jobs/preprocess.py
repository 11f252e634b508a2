"""The jobs of workflow/rules/preprocess.smk: from the raw data to the analysis's table and its record, every step
named (none of it private: the record says what each step looked at)."""

from __future__ import annotations

import pandas as pd

from ..analysis.datasets import snp_logistic_record
from ..analysis.streams import rng_for
from ..data import snp
from ..data.prepare import prepare_file
from . import Job, read_json, write_json_atomic, write_table_atomic


def preprocess_table(job: Job) -> None:
    """A ``kind: table`` analysis (:func:`dpcost.data.prepare.prepare`): the table (``output.table``) and its record
    with the download's (``output.meta``). Arguments: preparation (the block's keys that prepare reads), max_m, seed."""
    a = job.args
    out, meta = prepare_file(
        job.input["table"],
        a["preparation"],
        name=job.dataset,
        max_m=a["max_m"],
        rng=rng_for(a["seed"], job.dataset, "test split"),
    )
    meta["source"] = read_json(job.input["manifest"])
    write_table_atomic(job.output["table"], out)
    write_json_atomic(job.output["meta"], meta)


def preprocess_snp(job: Job) -> None:
    """The series matrix parsed, the samples labelled, the top SNPs by MAF kept as minor-allele counts: genotypes,
    the SNPs' table and the record. Arguments: accession, label_pattern, groups, n_snps, max_missing_rate,
    tie_break."""
    a = job.args
    keys = ("accession", "label_pattern", "groups", "n_snps", "max_missing_rate", "tie_break")
    table, snps, meta = snp.prepare(read_json(job.input["manifest"]), **{k: a[k] for k in keys})
    table.to_parquet(job.output["genotypes"], index=False)
    snps.to_csv(job.output["snps"], index=False, float_format="%.6g")
    write_json_atomic(job.output["meta"], meta)


def preprocess_snp_logistic(job: Job) -> None:
    """The logistic analysis's record: its centring, response and truth (the full-sample sparse logistic fit).
    Arguments: s, fit."""
    record = snp_logistic_record(
        pd.read_parquet(job.input["genotypes"]),
        read_json(job.input["meta"]),
        s=job.args["s"],
        fit=dict(job.args["fit"]),
    )
    write_json_atomic(job.output["meta"], record)
