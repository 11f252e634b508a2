"""The benchmark's tables and figure: summary.csv (per data set, method, epsilon, m), wins.csv (per method and
epsilon, counted across data sets), the figure, and errors.parquet (every repetition)."""

import collections
import json

import pandas as pd

from dpcost.analysis import benchmark
from dpcost.analysis.plotting import benchmark_figure, repetitions
from dpcost.estimators.registry import methods_of
from dpcost.scripting import run, write_table_atomic


def main(tables, records, delta, calibration, tuning_mode, outputs):
    errors = pd.concat([pd.read_parquet(t) for t in tables], ignore_index=True)
    loaded = []
    for path in records:
        with open(path) as fh:
            loaded.append(json.load(fh))
    summary = benchmark.summarize(errors, loaded, methods_of("regression"))
    write_table_atomic(outputs["errors"], errors)
    summary.to_csv(outputs["summary"], index=False, float_format="%.6g")
    benchmark.wins(summary).to_csv(outputs["wins"], index=False, float_format="%.6g")
    counts = collections.Counter(summary[summary.private & (summary.tuning_mode != tuning_mode)].groupby("method")
                                 .tuning_mode.first())  # fmt: skip
    tuning_mode = ", ".join([tuning_mode, *(f"{n} methods {mode}" for mode, n in sorted(counts.items()))])
    benchmark_figure(summary, [outputs["png"], outputs["pdf"]], delta=delta, calibration=calibration,
                     tuning=tuning_mode, reps=repetitions(summary.n_reps))  # fmt: skip


p = snakemake.params
run(
    lambda: main(
        list(snakemake.input.tables),
        list(snakemake.input.records),
        p.delta,
        p.calibration,
        p.tuning_mode,
        dict(snakemake.output.items()),
    ),  # fmt: skip
    snakemake.log[0],
    "benchmark_summary",
)
