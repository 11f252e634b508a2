"""The jobs of workflow/rules/libsvm.smk: private sparse learning by knowledge transfer on LIBSVM data (Wang & Gu
2020, Tables 2–3) — download, one fixed split, one job per (data set, method), and the collecting job."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from ..analysis import transfer
from ..analysis.streams import rng_for
from ..data import download, libsvm
from ..estimators.registry import METHODS
from . import Job, read_json, write_json_atomic, write_table_atomic


def download_libsvm(job: Job) -> None:
    """The train and test files of one data set (:func:`dpcost.data.libsvm.fetch`); the record of what was received
    (url, size, sha256) to ``output.manifest``. Arguments: sources, manual_dir, options."""
    a = job.args
    named = {
        split: [{"filename": e["url"].rsplit("/", 1)[-1], **e} for e in entries]
        for split, entries in a["sources"].items()
    }
    out = Path(job.output["manifest"])
    record = libsvm.fetch(
        job.dataset, out.parent, sources=named, manual_dir=a["manual_dir"], **download.options(dict(a["options"]))
    )
    write_json_atomic(out, record)


def prepare_libsvm(job: Job) -> None:
    """The fixed split of one data set from the public seed (:func:`dpcost.data.libsvm.prepare`): the arrays to
    ``output.data``, what was drawn and what is not private to ``output.meta``. Arguments: block, seed."""
    a = job.args
    record = read_json(job.input["manifest"])
    files = {split: Path(job.input["manifest"]).parent / rec["filename"] for split, rec in record["files"].items()}
    base = libsvm.DATASETS[job.dataset]
    sizes = {"name": base["name"], "task": base["task"], **a["block"]["files"], **a["block"]["split"]}
    meta = libsvm.prepare(
        files["train"],
        files["test"],
        job.output["data"],
        rng=rng_for(a["seed"], job.dataset, "split"),
        sizes=sizes,
        seed=a["seed"],
        provenance=record,
    )
    write_json_atomic(job.output["meta"], meta)


def estimate_libsvm(job: Job) -> None:
    """One (data set, method): every ε and trial on the fixed split (:func:`dpcost.analysis.transfer.run_method`);
    the tidy rows to ``output.table``, the plans, the job's time and peak memory to ``output.plans``. Arguments:
    block, seed, calibration, on_invalid, sampler."""
    a = job.args
    block = a["block"]
    t0 = time.perf_counter()
    split = transfer.Split.of(job.dataset, libsvm.load_prepared(job.input["data"]))
    load_seconds = time.perf_counter() - t0
    table, plans = transfer.run_method(
        split,
        job.method,
        s=block["s"],
        epsilons=block["privacy"]["epsilon"],
        delta=block["privacy"]["delta"],
        trials=block["trials"],
        tuning=block.get("tuning", {}).get(job.method),
        calibration=a["calibration"],
        on_invalid=a["on_invalid"],
        sampler=a["sampler"],
        seed=a["seed"],
    )
    write_table_atomic(job.output["table"], table)
    n, d = split.X.shape
    write_json_atomic(
        job.output["plans"],
        {
            "dataset": job.dataset,
            "method": job.method,
            "n": n,
            "d": d,
            "m_public": split.X_public.shape[0],
            "nnz_private": int(split.X.nnz),
            "shift": split.shift,
            "plans": plans,
            "load_seconds": load_seconds,
            "seconds": time.perf_counter() - t0,
            "peak_memory_mb": transfer.peak_memory_mb(),
        },
    )


def libsvm_table(job: Job) -> None:
    """One data set's jobs collected: the tidy errors, the table beside Wang & Gu's, the ledger, time and peak memory
    per job, and the figure. Arguments: block, calibration, sampler."""
    from ..analysis import plotting

    a = job.args
    errors = pd.concat([pd.read_parquet(t) for t in job.input["tables"]], ignore_index=True)
    records = [read_json(path) for path in job.input["plans"]]
    prepared = read_json(job.input["meta"])
    labels = {k: m.label for k, m in METHODS.items()}
    table = transfer.table(errors, job.dataset, labels)
    shift = records[0]["shift"] if records else 0.0
    ledger = transfer.ledger(job.dataset, [p for r in records for p in r["plans"]], errors, prepared, shift=shift)
    ledger |= {"calibration": a["calibration"], "sampler": a["sampler"], "delta": a["block"]["privacy"]["delta"]}
    keys = ("dataset", "method", "n", "d", "m_public", "nnz_private", "load_seconds", "seconds", "peak_memory_mb")
    resources = pd.DataFrame([{k: r[k] for k in keys} for r in records])
    out = job.output
    write_table_atomic(out["errors"], errors)
    write_table_atomic(out["table"], table)
    write_table_atomic(out["resources"], resources)
    write_json_atomic(out["ledger"], ledger)
    name = prepared.get("name", job.dataset)
    metric = transfer.METRIC[prepared["task"]]
    d = prepared.get("n_features") or prepared["n_features_total"]  # every column when no subset was drawn
    plotting.transfer_figure(
        table,
        [out["png"], out["pdf"]],
        title=f"{name}: {metric} against the privacy budget",
        ylabel=metric,
        delta=a["block"]["privacy"]["delta"],
        calibration=a["calibration"],
        note=f"Data: n = {prepared['n']['private']:,} private rows, d = {d:,} features.",
    )
