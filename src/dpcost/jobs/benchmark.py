"""The jobs of workflow/rules/benchmark.smk: the real-data benchmark of private regression — one job per (data set,
method) over the benchmark's ε at each data set's largest m, then its tables and figure
(:mod:`dpcost.analysis.benchmark`)."""

from __future__ import annotations

import pandas as pd

from ..analysis import benchmark, datasets
from ..analysis.tuning import TuningSpec
from ..estimators.registry import methods_of
from . import Job, read_json, write_json_atomic, write_table_atomic


def _cell(job: Job) -> tuple[tuple, dict]:
    """The arguments of one (data set, method) cell of the benchmark, shared by its estimates and its intervals."""
    a = job.args
    block = a["block"]
    analysis = datasets.get(job.dataset)
    args = (analysis, methods_of(analysis.family)[job.method], job.data(), TuningSpec(**a["spec"]))
    kw = dict(
        epsilons=block["epsilon"],
        grid=a["grid"],
        small_m=block.get("small_m"),
        reps=block["reps"],
        test_fraction=block["test_fraction"],
        params=dict(a["params"]),
        seed=a["seed"],
        privacy=job.privacy(),
    )
    return args, kw


def benchmark_method(job: Job) -> None:
    """One (data set, method): the tidy rows to ``output.table``, the tuning, plans and split to ``output.record``.
    Arguments: spec, block (the benchmark block), grid (the data set's m), params, seed, privacy."""
    args, kw = _cell(job)
    table, record = benchmark.run_benchmark(*args, **kw)
    write_table_atomic(job.output["table"], table)
    write_json_atomic(job.output["record"], record)


def benchmark_summary(job: Job) -> None:
    """summary.csv (per data set, method, ε, m), wins.csv (per method and ε, counted across data sets), the figures
    (the ranked chart, benchmark.png, and the heat map of every cell, benchmark_heatmap.png) and errors.parquet
    (every repetition). Arguments: delta, calibration, tuning_mode."""
    from ..analysis.plotting import benchmark_figure, benchmark_heatmap, repetitions, tuning_text

    a, out = job.args, job.output
    errors = pd.concat([pd.read_parquet(t) for t in job.input["tables"]], ignore_index=True)
    summary = benchmark.summarize(errors, [read_json(p) for p in job.input["records"]], methods_of("regression"))
    write_table_atomic(out["errors"], errors)
    summary.to_csv(out["summary"], index=False, float_format="%.6g")
    benchmark.wins(summary).to_csv(out["wins"], index=False, float_format="%.6g")
    tuning = tuning_text(a["tuning_mode"], summary[summary.private].groupby("method").tuning_mode.first())
    kw = dict(delta=a["delta"], calibration=a["calibration"], tuning=tuning, reps=repetitions(summary.n_reps))
    benchmark_figure(summary, [out["png"], out["pdf"]], **kw)
    benchmark_heatmap(summary, [out["heatmap_png"], out["heatmap_pdf"]], **kw)


def benchmark_inference(job: Job) -> None:
    """One (data set, method)'s private intervals at every ε and m of the benchmark, with the OLS reference on the
    same subsamples (``output.table``), and the plans and refusals per ε (``output.record``). Arguments: those of
    :func:`benchmark_method`, level, route, share."""
    a = job.args
    args, kw = _cell(job)
    table, record = benchmark.run_benchmark_intervals(*args, **kw, level=a["level"], route=a["route"], share=a["share"])
    write_table_atomic(job.output["table"], table)
    write_json_atomic(job.output["record"], record)


def benchmark_inference_summary(job: Job) -> None:
    """results/benchmark/inference.csv: coverage and width ratio per data set × method × ε × m
    (:func:`~dpcost.analysis.benchmark.summarize_intervals`; the benchmark's methods without a procedure in a row
    saying why), and every interval (inference.parquet). Arguments: methods."""
    per_rep = pd.concat([pd.read_parquet(t) for t in job.input["tables"]], ignore_index=True)
    records = [read_json(p) for p in job.input["records"]]
    summary = benchmark.summarize_intervals(per_rep, records, job.args["methods"])
    write_table_atomic(job.output["table"], per_rep)
    summary.to_csv(job.output["csv"], index=False, float_format="%.6g")


def benchmark_targeted_method(job: Job) -> None:
    """One (data set, method)'s targeted attacks at the data set's largest benchmark m and every ε
    (:func:`~dpcost.analysis.benchmark.run_benchmark_targeted`) to ``output.table``. Arguments: those of
    :func:`benchmark_method` and ``targeted``, the data set's ``targeted`` block (k_top, k_random, shadows,
    test_releases, reconstruction_nfev, alpha)."""
    (analysis, method, data, spec), kw = _cell(job)
    table = benchmark.run_benchmark_targeted(
        analysis,
        method,
        data,
        spec,
        epsilons=kw["epsilons"],
        grid=kw["grid"],
        test_fraction=kw["test_fraction"],
        params=kw["params"],
        seed=kw["seed"],
        privacy=kw["privacy"],
        options=job.args["targeted"],
    )
    write_table_atomic(job.output["table"], table)


def benchmark_targeted(job: Job) -> None:
    """results/benchmark/targeted.csv (per data set × method × ε, the top-leverage row:
    :func:`~dpcost.analysis.benchmark.summarize_targeted`), every target's rows (targeted.parquet) and the figure
    (AUC on each data set's top row against its leverage). Arguments: delta."""
    from ..analysis.plotting import benchmark_targeted_figure

    tables = [t for t in (pd.read_parquet(p) for p in job.input["tables"]) if len(t)]
    table = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
    write_table_atomic(job.output["table"], table)
    summary = benchmark.summarize_targeted(table)
    summary.to_csv(job.output["csv"], index=False, float_format="%.6g")
    benchmark_targeted_figure(summary, [job.output["png"], job.output["pdf"]], delta=job.args["delta"])
