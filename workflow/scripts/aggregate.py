"""Concatenate the per-method error tables and summarize them per (method, m), each row with its privacy setting."""

import json

import pandas as pd

from dpcost.analysis import datasets
from dpcost.analysis.ledger import method_entry
from dpcost.analysis.summaries import annotate, summarize
from dpcost.dp.spec import Privacy
from dpcost.estimators.registry import methods_of
from dpcost.scripting import run


def main(dataset, tables, plans, meta_file, privacy, tuning_mode, out_errors, out_summary):
    errors = pd.concat([pd.read_parquet(p) for p in tables], ignore_index=True)
    errors = errors.sort_values(["method", "m", "rep"], kind="stable").reset_index(drop=True)
    errors.to_parquet(out_errors, index=False)
    private = {k: m.private for k, m in methods_of(datasets.get(dataset).family).items()}
    # the ledger's verdict, from the same plans files: unproven calibrations and floating-point noise are not proven
    proven, modes = {}, {}
    for path in plans:
        with open(path) as fh:
            record = json.load(fh)
        proven[record["method"]] = method_entry(record)["private"]
        # the mode each method ran under: a tuning-free one runs as "none" whatever the analysis's mode
        modes[record["method"]] = record.get("tuning", {}).get("mode", tuning_mode)
    with open(meta_file) as fh:  # a table whose categorical levels were read from it has a d that is not public
        d_public = (json.load(fh).get("schema") or {}).get("d_public", True)
    summary = annotate(summarize(errors), privacy=privacy, private=private, proven=proven, tuning_mode=modes,
                       d_public=d_public)  # fmt: skip
    summary.to_csv(out_summary, index=False, float_format="%.6g")


run(
    lambda: main(
        snakemake.wildcards.dataset,
        list(snakemake.input.tables),
        list(snakemake.input.plans),
        snakemake.input.meta,
        Privacy(**snakemake.params.privacy),
        snakemake.params.tuning_mode,
        snakemake.output.errors,
        snakemake.output.summary,
    ),
    snakemake.log[0],
    "aggregate",
)
