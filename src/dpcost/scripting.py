"""Glue for the workflow's thin scripts: logging to the rule's log file, one clear line on failure, atomic writes,
and the bodies the scripts share. The scripts unpack ``snakemake`` into the plain arguments of these functions."""

from __future__ import annotations

import json
import logging
import os
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from .analysis import datasets, privacy_map
from .analysis import tuning as tuning_mod
from .analysis.engine import run_grid
from .dp.spec import Privacy
from .errors import DPCostError
from .estimators.registry import methods_of


def run(main: Callable[[], None], log_path: str | None, rule: str) -> None:
    """Run ``main`` with logging sent to ``log_path``; on failure print one line to stderr and exit 1.

    A :class:`DPCostError` is the user's to fix: its message is the whole story. Anything else is a bug: the
    traceback goes to the log and the line on stderr points there.
    """
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_path:
        handlers.append(logging.FileHandler(log_path, mode="w"))
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", handlers=handlers, force=True
    )
    logging.captureWarnings(True)
    try:
        main()
    except DPCostError as exc:
        logging.getLogger(rule).error("%s", exc)
        print(f"ERROR [{rule}]: {exc}", file=sys.stderr)
        sys.exit(1)
    except Exception as exc:  # noqa: BLE001 — the traceback is kept in the log, not lost
        logging.getLogger(rule).error("unexpected error\n%s", traceback.format_exc())
        print(f"ERROR [{rule}]: unexpected {type(exc).__name__}: {exc} (traceback in {log_path})", file=sys.stderr)
        sys.exit(1)


def write_json_atomic(path: str | Path, record: dict) -> None:
    """Write strict JSON so that the file either holds the whole record or does not exist (a manifest is trusted)."""
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(record, indent=1, allow_nan=False) + "\n")
    os.replace(tmp, path)


def write_table_atomic(path: str | Path, table) -> None:
    """Write a DataFrame as parquet or CSV (by the suffix), atomically: the file holds the whole table or does not
    change."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    if path.suffix == ".parquet":
        table.to_parquet(tmp, index=False)
    else:
        table.to_csv(tmp, index=False)
    os.replace(tmp, path)


def privacy_spec(privacy: Mapping, calibration: str, on_invalid: str, sampler: str = "exact") -> Privacy:
    """The :class:`Privacy` of a dataset's config block (``privacy: {epsilon, delta}``) and the run's options."""
    return Privacy(privacy["epsilon"], privacy["delta"], calibration, on_invalid, sampler=sampler)


def tune_job(
    *,
    dataset: str,
    method: str,
    inputs: Mapping[str, str],
    spec: tuning_mod.TuningSpec,
    params: Mapping,
    m_grid: Sequence[int],
    seed: int,
    privacy: Privacy,
    out_json: str,
    out_table: str,
    parts: Sequence[str] = (),
) -> None:
    """One (dataset, method) tuning job: the constants of every m (:mod:`dpcost.analysis.tuning`) to ``out_json``,
    and every candidate's decoy score (decoy mode; an empty table otherwise) to ``out_table``. ``parts``: the files
    of :func:`tune_part_job` over consecutive parts of ``m_grid`` (a split job), chosen from instead of searching."""
    analysis = datasets.get(dataset)
    errors = [read_part(path) for path in parts]
    held = [m for ms, _ in errors for m in ms]
    if parts and held != list(m_grid):
        raise DPCostError(f"tune {dataset}/{method}: its parts hold m = {held}, not the m grid {list(m_grid)}")
    record = tuning_mod.tune(analysis, methods_of(analysis.family)[method], inputs, spec, params=dict(params),
                             m_grid=m_grid, seed=seed, privacy=privacy, parts=[e for _, e in errors])  # fmt: skip
    record.pop("table").to_csv(out_table, index=False)
    write_json_atomic(out_json, record)


def tune_part_job(*, dataset: str, method: str, inputs: Mapping[str, str], spec: tuning_mod.TuningSpec,
                  params: Mapping, m_grid: Sequence[int], part: Sequence[int], seed: int, privacy: Privacy,
                  out: str) -> None:  # fmt: skip
    """One part of a split tune job: every candidate's decoy errors at the m of ``part`` to ``out`` (.npz; none
    when the method's tuning makes no decoy search), for :func:`tune_job` to merge."""
    import numpy as np

    analysis = datasets.get(dataset)
    errors = tuning_mod.decoy_part(analysis, methods_of(analysis.family)[method], inputs, spec, params=dict(params),
                                   m_grid=m_grid, part=part, seed=seed, privacy=privacy)  # fmt: skip
    tmp = Path(out).with_name(Path(out).name + ".tmp.npz")
    np.savez(tmp, m=np.asarray(part, dtype=np.int64), **{f"candidate{c}": e for c, e in errors.items()})
    os.replace(tmp, out)


def read_part(path: str) -> tuple[list[int], dict]:
    """(the m of a tune part, {candidate: its decoy errors}) from a :func:`tune_part_job` file."""
    import numpy as np

    with np.load(path) as f:
        errors = {int(k.removeprefix("candidate")): f[k] for k in f.files if k.startswith("candidate")}
        return [int(m) for m in f["m"]], dict(sorted(errors.items()))


def _tuned(analysis, method: str, tuning_file: str, m_grid: Sequence[int]):
    """(the registry's method, the tuning job's record, its runner, base tuning and tuning by m)."""
    spec = methods_of(analysis.family)[method]
    with open(tuning_file) as fh:
        tuned = json.load(fh)
    return (spec, tuned, *tuning_mod.runner(spec, tuned, m_grid))


def estimate_job(
    *,
    dataset: str,
    method: str,
    inputs: Mapping[str, str],
    tuning_file: str,
    params: Mapping,
    m_grid: Sequence[int],
    reps: int,
    seed: int,
    privacy: Privacy,
    out_table: str,
    out_plans: str,
    parts: Sequence[str] = (),
) -> None:
    """One (dataset, method) job: every m and repetition; the tidy table to ``out_table`` and the plans it used,
    one per m, to ``out_plans`` (the ledger is built from them). ``tuning_file`` is the tuning job's record (the
    constants of every m, or the candidates of a private selection); ``params`` the analysis parameters (e.g.
    ``{"s": 20}``). ``parts``: the tables of :func:`estimate_part_job` over consecutive parts of ``m_grid`` (a split
    job), joined instead of run: each (m, rep) has its own streams, so the table is the same bit for bit."""
    import pandas as pd

    analysis = datasets.get(dataset)
    spec, tuned, runner, tuning, by_m = _tuned(analysis, method, tuning_file, m_grid)
    params = dict(params)
    t0 = time.perf_counter()
    if parts:
        table = pd.concat([pd.read_parquet(path) for path in parts], ignore_index=True)
        plans = [p for path in parts for p in json.loads(Path(path + ".plans.json").read_text())]
        held = [int(m) for m in dict.fromkeys(table.m)]
        if held != list(m_grid):
            raise DPCostError(f"estimate {dataset}/{method}: its parts hold m = {held}, not the m grid {list(m_grid)}")
    else:
        table, plans = run_grid(analysis.load(inputs, params), runner, tuning=tuning, tuning_by_m=by_m, params=params,
                                m_grid=m_grid, reps=reps, seed=seed, privacy=privacy, dataset=dataset)  # fmt: skip
    logging.getLogger("estimate").info("%s: %d rows in %.2f s", method, len(table), time.perf_counter() - t0)
    table.to_parquet(out_table, index=False)
    record = {
        "dataset": dataset,
        "method": method,
        "label": spec.label,
        "private": spec.private,
        "privacy": privacy.to_dict(),
        "tuning": {k: v for k, v in tuned.items() if k != "candidates"},
        "params": params,
        "plans": plans,
    }
    write_json_atomic(out_plans, record)


def estimate_part_job(*, dataset: str, method: str, inputs: Mapping[str, str], tuning_file: str, params: Mapping,
                      m_grid: Sequence[int], part: Sequence[int], reps: int, seed: int, privacy: Privacy,
                      out: str) -> None:  # fmt: skip
    """One part of a split estimate job: the rows of the m of ``part`` (of ``m_grid``, whose tuning record it reads)
    to ``out`` (parquet) and their plans beside it (``out`` + .plans.json), for :func:`estimate_job` to join."""
    analysis = datasets.get(dataset)
    _, _, runner, tuning, by_m = _tuned(analysis, method, tuning_file, m_grid)
    table, plans = run_grid(analysis.load(inputs, dict(params)), runner, tuning=tuning, tuning_by_m=by_m,
                            params=dict(params), m_grid=part, reps=reps, seed=seed, privacy=privacy,
                            dataset=dataset)  # fmt: skip
    write_table_atomic(out, table)
    write_json_atomic(out + ".plans.json", plans)


def attack_job(
    *,
    dataset: str,
    method: str,
    inputs: Mapping[str, str],
    tuning_file: str,
    params: Mapping,
    m_grid: Sequence[int],
    reps: int,
    cap: int,
    seed: int,
    privacy: Privacy,
    out_table: str,
) -> None:
    """One (dataset, method) score-attack job (:func:`dpcost.analysis.attack.run_attack`): repetitions 0 … reps − 1
    of the estimate job's releases, every candidate's statistic to ``out_table``. Arguments as :func:`estimate_job`;
    ``cap`` bounds the members (and non-members) per repetition."""
    from .analysis.attack import run_attack

    analysis = datasets.get(dataset)
    *_, runner, tuning, by_m = _tuned(analysis, method, tuning_file, m_grid)
    t0 = time.perf_counter()
    table = run_attack(analysis.load(inputs, dict(params)), runner, tuning=tuning, tuning_by_m=by_m,
                       params=dict(params), m_grid=m_grid, reps=reps, seed=seed, privacy=privacy, dataset=dataset,
                       cap=cap)  # fmt: skip
    logging.getLogger("attack").info("%s: %d statistics in %.2f s", method, len(table), time.perf_counter() - t0)
    table.to_parquet(out_table, index=False)


def attack_summary_job(
    *,
    dataset: str,
    tables: Sequence[str],
    errors_summary: str,
    privacy: Privacy,
    alpha: float,
    tuning_mode: str,
    outputs: Mapping,
) -> None:
    """attack.csv (one row per method and m, :func:`dpcost.analysis.attack.summarise_attack`) and the figure of
    the headline methods of the error curves (``errors_summary``: the summary.csv they are chosen from);
    ``outputs`` holds csv and figure (PNG and PDF paths); ``tuning_mode`` is named in the figure's caption."""
    import pandas as pd

    from .analysis.attack import summarise_attack
    from .analysis.plotting import attack_figure, headline

    analysis = datasets.get(dataset)
    private = {k: m.private for k, m in methods_of(analysis.family).items()}
    # one method's statistics at a time: all of housing's at once (6 million rows) took 1 GB
    summary = pd.concat([summarise_attack(pd.read_parquet(t), privacy=privacy, private=private, alpha=alpha)
                         for t in tables], ignore_index=True)  # fmt: skip
    summary.to_csv(outputs["csv"], index=False, float_format="%.6g")
    shown = headline(pd.read_csv(errors_summary))
    attack_figure(summary[summary.method.isin(shown)], outputs["figure"], title=analysis.title.split(":")[0]
                  + ": score attack on the released estimates", xlabel=analysis.xlabel, epsilon=privacy.epsilon,
                  delta=privacy.delta, calibration=privacy.calibration, tuning=tuning_mode)  # fmt: skip


def map_job(
    *,
    dataset: str,
    method: str,
    inputs: Mapping[str, str],
    spec: tuning_mod.TuningSpec,
    grid: Mapping,
    params: Mapping,
    seed: int,
    privacy: Privacy,
    out_table: str,
    out_record: str,
) -> None:
    """One (dataset, method) job of the privacy–utility map (:func:`dpcost.analysis.privacy_map.run_map`): ``grid``
    is the map block (ε grid, m grid, repetitions), ``spec`` the method's tuning with the map's decoys."""
    analysis = datasets.get(dataset)
    table, record = privacy_map.run_map(
        analysis, methods_of(analysis.family)[method], inputs, spec, epsilons=grid["epsilon"], m_grid=grid["m"],
        reps=grid["reps"], params=dict(params), seed=seed, privacy=privacy,
    )  # fmt: skip
    table.to_parquet(out_table, index=False)
    write_json_atomic(out_record, record)


def map_summary_job(
    *, dataset: str, tables: Sequence[str], privacy: Mapping, calibration: str, tuning_mode: str, outputs: Mapping
) -> None:
    """The map's summaries and figure: ``outputs`` holds summary (CSV per method, ε, m), ratios (CSV per ε, m),
    needed (CSV per m) and figure (PNG and PDF paths)."""
    import pandas as pd

    from .analysis.plotting import privacy_map_figure, repetitions

    analysis = datasets.get(dataset)
    errors = pd.concat([pd.read_parquet(t) for t in tables], ignore_index=True)
    private = {k: m.private for k, m in methods_of(analysis.family).items()}
    summary, ratios = privacy_map.summarize_map(errors, private)
    if ratios.empty:
        raise DPCostError(f"{dataset}.map: needs at least one private and one non-private method")
    summary.to_csv(outputs["summary"], index=False, float_format="%.6g")
    ratios.to_csv(outputs["ratios"], index=False, float_format="%.6g")
    privacy_map.needed_table(privacy_map.epsilon_needed(ratios)).to_csv(outputs["needed"], index=False)
    privacy_map_figure(ratios, outputs["figure"], title=analysis.title.split(":")[0], delta=privacy["delta"],
                       calibration=calibration, tuning=tuning_mode, reps=repetitions(summary["n_reps"]))  # fmt: skip


# ------------------------------------------------------------------------ knowledge transfer on LIBSVM data (opt-in)


def libsvm_download_job(*, dataset: str, sources: Mapping, manual_dir: str, options: Mapping, out: str) -> None:
    """Download the train and test files of a LIBSVM data set (:func:`dpcost.data.libsvm.fetch`); the record of
    what was received (url, size, sha256) to ``out``."""
    from .data import download, libsvm

    named = {split: [{"filename": e["url"].rsplit("/", 1)[-1], **e} for e in entries]
             for split, entries in sources.items()}  # fmt: skip
    record = libsvm.fetch(dataset, Path(out).parent, sources=named, manual_dir=manual_dir,
                          **download.options(dict(options)))  # fmt: skip
    write_json_atomic(out, record)


def libsvm_prepare_job(*, dataset: str, block: Mapping, manifest: str, seed: int, out_data: str, out_meta: str) -> None:
    """The fixed split of one data set (:func:`dpcost.data.libsvm.prepare`) from the public seed: the arrays to
    ``out_data``, what was drawn and what is not private to ``out_meta``."""
    from .analysis.streams import rng_for
    from .data import libsvm

    with open(manifest) as fh:
        record = json.load(fh)
    files = {split: Path(manifest).parent / rec["filename"] for split, rec in record["files"].items()}
    base = libsvm.DATASETS[dataset]
    spec = {"name": base["name"], "task": base["task"], **block["files"], **block["split"]}
    meta = libsvm.prepare(files["train"], files["test"], out_data, rng=rng_for(seed, dataset, "split"), spec=spec,
                          seed=seed, provenance=record)  # fmt: skip
    write_json_atomic(out_meta, meta)


def libsvm_estimate_job(*, dataset: str, block: Mapping, method: str, data: str, seed: int, calibration: str,
                        on_invalid: str, sampler: str, out_table: str, out_plans: str) -> None:  # fmt: skip
    """One (data set, method) job of the knowledge-transfer study: every ε and trial on the fixed split
    (:func:`dpcost.analysis.transfer.run_method`); the tidy rows to ``out_table``, the plans, the job's time and
    peak memory to ``out_plans``."""
    from .analysis import transfer
    from .data import libsvm

    t0 = time.perf_counter()
    split = transfer.Split.of(dataset, libsvm.load_prepared(data))
    load_seconds = time.perf_counter() - t0
    table, plans = transfer.run_method(
        split, method, s=block["s"], epsilons=block["privacy"]["epsilon"], delta=block["privacy"]["delta"],
        trials=block["trials"], tuning=block.get("tuning", {}).get(method), calibration=calibration,
        on_invalid=on_invalid, sampler=sampler, seed=seed,
    )  # fmt: skip
    write_table_atomic(out_table, table)
    n, d = split.X.shape
    write_json_atomic(out_plans, {
        "dataset": dataset, "method": method, "n": n, "d": d, "m_public": split.X_public.shape[0],
        "nnz_private": int(split.X.nnz), "shift": split.shift, "plans": plans,
        "load_seconds": load_seconds, "seconds": time.perf_counter() - t0,
        "peak_memory_mb": transfer.peak_memory_mb(),
    })  # fmt: skip


def libsvm_table_job(*, dataset: str, block: Mapping, tables: Sequence[str], plans: Sequence[str], meta: str,
                     calibration: str, sampler: str, out_errors: str, out_table: str, out_ledger: str,
                     out_resources: str, figures: Sequence[str]) -> None:  # fmt: skip
    """Collect one data set's jobs: the tidy errors, the table beside Wang & Gu's, the ledger, time and peak memory
    per job, and the figure."""
    import pandas as pd

    from .analysis import plotting, transfer
    from .estimators.registry import METHODS

    errors = pd.concat([pd.read_parquet(t) for t in tables], ignore_index=True)
    records = []
    for path in plans:
        with open(path) as fh:
            records.append(json.load(fh))
    with open(meta) as fh:
        prepared = json.load(fh)
    labels = {k: m.label for k, m in METHODS.items()}
    table = transfer.table(errors, dataset, labels)
    shift = records[0]["shift"] if records else 0.0
    ledger = transfer.ledger(dataset, [p for r in records for p in r["plans"]], errors, prepared, shift=shift)
    ledger |= {"calibration": calibration, "sampler": sampler, "delta": block["privacy"]["delta"]}
    keys = ("dataset", "method", "n", "d", "m_public", "nnz_private", "load_seconds", "seconds", "peak_memory_mb")
    resources = pd.DataFrame([{k: r[k] for k in keys} for r in records])
    write_table_atomic(out_errors, errors)
    write_table_atomic(out_table, table)
    write_table_atomic(out_resources, resources)
    write_json_atomic(out_ledger, ledger)
    name = prepared.get("name", dataset)
    plotting.transfer_figure(table, figures, title=f"{name}: {transfer.METRIC[prepared['task']]} against ε "
                             f"(n = {prepared['n']['private']} private rows, d = {prepared['n_features']})",
                             ylabel=transfer.METRIC[prepared["task"]], delta=block["privacy"]["delta"],
                             calibration=calibration)  # fmt: skip
