"""The jobs of workflow/rules/estimate.smk: one method of one analysis over its m grid and repetitions, with the
constants its tune job chose; beside the table, the privacy plans it used (the ledger is built from them) and the
score attack on its first releases, scored in the same pass."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from ..analysis import datasets
from ..analysis import tuning as tuning_mod
from ..analysis.attack import ScoreAttack
from ..analysis.engine import run_grid
from ..errors import DPCostError
from ..estimators.method import Method
from ..estimators.registry import methods_of
from . import Job, read_json, write_json_atomic, write_table_atomic

log = logging.getLogger("estimate")


class Tuned(NamedTuple):
    """A method of an analysis with its constants at every m (:func:`tuned`)."""

    analysis: Any  # the analysis descriptor (dpcost.analysis.datasets)
    method: Method  # the registry's entry
    record: dict  # the tuning record (the tune job's, or made here)
    runner: Any  # how the engine runs it (dpcost.analysis.tuning.runner)
    tuning: dict | None  # the base tuning
    by_m: dict | None  # the constants at each m; None under tuning_mode private (chosen inside every release)


def tuned(job: Job, m_grid) -> Tuned:
    """The job's method with its tuning record and constants. The record is the tune job's (``input.tuning``) where
    the method's tuning looks at data; otherwise made here from the config's constants (``args["tuning_spec"]``,
    without reading data), as that tune job would have: a job fewer per method."""
    analysis = datasets.get(job.dataset)
    method = methods_of(analysis.family)[job.method]
    if "tuning" in job.input:
        record = read_json(job.input["tuning"])
    else:
        made = tuning_mod.tune(
            analysis,
            method,
            {},
            tuning_mod.TuningSpec(**job.args["tuning_spec"]),
            params=dict(job.args["params"]),
            m_grid=m_grid,
            seed=job.args["seed"],
            privacy=job.privacy(),
        )
        made.pop("table")
        record = json.loads(json.dumps(made))  # as a tune job's file reads back
    return Tuned(analysis, method, record, *tuning_mod.runner(method, record, m_grid))


def estimate(job: Job) -> None:
    """Every m and repetition: the tidy table to ``output.table``, the plans it used (one per m) to ``output.plans``,
    and the score attack's statistics on repetitions 0 … attack.reps − 1 to ``output.attack``
    (:class:`~dpcost.analysis.attack.ScoreAttack`, scored as the releases are made). Arguments
    (:func:`dpcost.run.args.estimate`): params (the analysis parameters, e.g. ``{"s": 20}``), m, reps,
    seed, privacy, and attack ({reps, cap}: :func:`dpcost.run.args.attack`). With ``input.parts`` (the
    tables of :func:`estimate_part` over consecutive parts of the m grid, with their plans and attack statistics in
    ``input.part_plans`` and ``input.part_attacks``) it joins them instead — each (m, rep) has its own streams, so every
    file is the same bit for bit."""
    a = job.args
    t = tuned(job, a["m"])
    analysis, method, record, runner, tuning, by_m = t.analysis, t.method, t.record, t.runner, t.tuning, t.by_m
    params = dict(a["params"])
    t0 = time.perf_counter()
    parts = job.input.get("parts", [])
    if parts:
        table = pd.concat([pd.read_parquet(path) for path in parts], ignore_index=True)
        plans = [p for path in job.input["part_plans"] for p in json.loads(Path(path).read_text())]
        held = [int(m) for m in dict.fromkeys(table.m)]
        if held != list(a["m"]):
            raise DPCostError(
                f"estimate {job.dataset}/{job.method}: its parts hold m = {held}, not the m grid {list(a['m'])}"
            )
        attacked = pd.concat([pd.read_parquet(path) for path in job.input["part_attacks"]], ignore_index=True)
    else:
        table, plans, attacked = _scored(job, analysis, runner, tuning, by_m, a["m"])
    log.info(
        "%s: %d rows and %d attack statistics in %.2f s",
        job.method,
        len(table),
        len(attacked),
        time.perf_counter() - t0,
    )
    table.to_parquet(job.output["table"], index=False)
    attacked.to_parquet(job.output["attack"], index=False)
    write_json_atomic(
        job.output["plans"],
        {
            "dataset": job.dataset,
            "method": job.method,
            "label": method.label,
            "private": method.private,
            "privacy": job.privacy().to_dict(),
            "tuning": {k: v for k, v in record.items() if k != "candidates"},
            "params": params,
            "plans": plans,
        },
    )


def _scored(job: Job, analysis, runner, tuning, by_m, m_grid) -> tuple[pd.DataFrame, list[dict], pd.DataFrame]:
    """(table, plans, attack statistics) of the m of ``m_grid``: :func:`run_grid` with the score attack scored on the
    releases as they are made (:class:`~dpcost.analysis.attack.ScoreAttack`)."""
    a = job.args
    design = analysis.load(job.data(), dict(a["params"]))
    attack = ScoreAttack(design, runner, **a["attack"], seed=a["seed"], dataset=job.dataset)
    table, plans = run_grid(
        design,
        runner,
        tuning=tuning,
        tuning_by_m=by_m,
        params=dict(a["params"]),
        m_grid=list(m_grid),
        reps=a["reps"],
        seed=a["seed"],
        privacy=job.privacy(),
        dataset=job.dataset,
        on_release=attack,
    )
    return table, plans, attack.table()


def estimate_part(job: Job) -> None:
    """One part of a split estimate job: the rows of the m of ``args["part"]`` (of the m grid, whose tuning record
    it reads) to ``output.table``, their plans to ``output.plans`` and the score attack's statistics of its m, scored
    as in :func:`estimate`, to ``output.attack``, for :func:`estimate` to join."""
    t = tuned(job, job.args["m"])
    table, plans, attacked = _scored(job, t.analysis, t.runner, t.tuning, t.by_m, job.args["part"])
    write_table_atomic(job.output["table"], table)
    write_json_atomic(job.output["plans"], plans)
    write_table_atomic(job.output["attack"], attacked)
