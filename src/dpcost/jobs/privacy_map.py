"""The jobs of workflow/rules/privacy_map.smk: every map method over a grid of (m, ε), each ε with its own tuning,
then the map's summaries, the ε needed per m and the figure (:mod:`dpcost.analysis.privacy_map`)."""

from __future__ import annotations

import pandas as pd

from ..analysis import datasets
from ..analysis import privacy_map as pmap
from ..analysis.tuning import TuningSpec
from ..errors import DPCostError
from ..estimators.registry import methods_of
from . import Job, read_json, write_json_atomic


def map_method(job: Job) -> None:
    """One (dataset, method): the tidy rows to ``output.table``, the tuning and plans per ε to ``output.record``.
    Arguments: spec (the method's tuning with the map's decoys), grid (the map block: ε, m, reps), params, seed,
    privacy."""
    a = job.args
    analysis = datasets.get(job.dataset)
    grid = a["grid"]
    table, record = pmap.run_map(
        analysis,
        methods_of(analysis.family)[job.method],
        job.data(),
        TuningSpec(**a["spec"]),
        epsilons=grid["epsilon"],
        m_grid=grid["m"],
        reps=grid["reps"],
        params=dict(a["params"]),
        seed=a["seed"],
        privacy=job.privacy(),
    )
    table.to_parquet(job.output["table"], index=False)
    write_json_atomic(job.output["record"], record)


def privacy_map(job: Job) -> None:
    """The map's summary (per method, ε, m), ratios (per ε, m), the ε needed (per m) and the figure. Arguments:
    privacy (the analysis's, as every job of it reads it), tuning_mode."""
    from ..analysis.plotting import privacy_map_figure, repetitions

    analysis = datasets.get(job.dataset)
    errors = pd.concat([pd.read_parquet(t) for t in job.input["tables"]], ignore_index=True)
    private = {k: m.private for k, m in methods_of(analysis.family).items()}
    meta = read_json(job.input["meta"])
    variance = meta.get("truth_sampling_variance")
    summary, ratios = pmap.summarize_map(errors, private, variance)
    if ratios.empty:
        raise DPCostError(f"{job.dataset}.map: needs at least one private and one non-private method")
    out = job.output
    summary.to_csv(out["summary"], index=False, float_format="%.6g")
    ratios.to_csv(out["ratios"], index=False, float_format="%.6g")
    pmap.needed_table(pmap.epsilon_needed(ratios)).to_csv(out["needed"], index=False)
    privacy_map_figure(
        ratios,
        [out["png"], out["pdf"]],
        title=analysis.title.split(":")[0],
        delta=job.args["privacy"]["delta"],
        calibration=job.args["privacy"]["calibration"],
        tuning=job.args["tuning_mode"],
        reps=repetitions(summary["n_reps"]),
        d=len(meta.get("covariates") or []) or None,
    )
