"""The jobs of workflow/rules/inference.smk: one method's private confidence intervals at every m and repetition of a
regression analysis (the error curves' subsamples, a stream of their own), the non-private OLS reference on the same
subsamples, then the analysis's inference.csv, its per-repetition table and its figure
(:mod:`dpcost.analysis.intervals`; docs/methods.md, "Private confidence intervals")."""

from __future__ import annotations

import logging
import time

import pandas as pd

from ..analysis import datasets
from ..analysis import intervals as iv
from ..estimators.registry import methods_of
from . import Job, read_json, write_json_atomic, write_table_atomic
from .estimate import tuned

log = logging.getLogger("inference")


def _reps(a) -> int:
    """The repetitions with intervals: the first ``inference_reps`` of the error curve's (all when not set)."""
    return min(a["reps"], a.get("inference_reps") or a["reps"])


def inference_method(job: Job) -> None:
    """One method's intervals (``output.table``, :data:`~dpcost.analysis.intervals.TIDY`) and the plans of its
    releases, one per m, with its route, level and budget share (``output.plans``). Arguments: those of the estimate
    job, level, route, share, inference_reps. The constants are the tune job's choice at each m; under tuning_mode
    private there are none to use, and the record says so."""
    a = job.args
    t = tuned(job, a["m"])
    analysis, record, by_m = t.analysis, t.record, t.by_m
    meta = read_json(job.input["meta"])
    head = {
        "dataset": job.dataset,
        "method": job.method,
        "label": t.method.label,
        "private": True,
        "privacy": job.privacy().to_dict(),
        "tuning": {k: v for k, v in record.items() if k != "candidates"},
        "params": dict(a["params"]),
        "route": a["route"],
        "level": a["level"],
        "share": a["share"],
    }
    if by_m is None:
        write_table_atomic(job.output["table"], pd.DataFrame(columns=iv.TIDY))
        write_json_atomic(job.output["plans"], {**head, "plans": [], "refused": {}, "why": iv.PRIVATE_TUNING})
        return
    t0 = time.perf_counter()
    table, plans, refused = iv.run_intervals(
        analysis.load(job.data(), dict(a["params"])),
        job.method,
        tuning_by_m=by_m,
        m_grid=a["m"],
        reps=_reps(a),
        seed=a["seed"],
        privacy=job.privacy(),
        dataset=job.dataset,
        level=a["level"],
        route=a["route"],
        share=a["share"],
        names=meta["covariates"],
    )
    for m, why in refused.items():
        log.warning("%s, m=%s: no interval: %s", job.method, m, why)
    log.info("%s (%s): %d rows in %.2f s", job.method, a["route"], len(table), time.perf_counter() - t0)
    write_table_atomic(job.output["table"], table)
    write_json_atomic(job.output["plans"], {**head, "plans": plans, "refused": refused, "why": None})


def inference_reference(job: Job) -> None:
    """The OLS intervals (classical and HC3, finite-population correction) on every subsample with intervals.
    Arguments: those of the estimate job, level, inference_reps."""
    a = job.args
    analysis = datasets.get(job.dataset)
    meta = read_json(job.input["meta"])
    table = iv.run_reference(
        analysis.load(job.data(), dict(a["params"])),
        m_grid=a["m"],
        reps=_reps(a),
        seed=a["seed"],
        dataset=job.dataset,
        level=a["level"],
        names=meta["covariates"],
    )
    write_table_atomic(job.output["table"], table)


def inference(job: Job) -> None:
    """inference.csv (:func:`~dpcost.analysis.intervals.summarize`: every method of the analysis, those without an
    interval in a row saying why), inference.parquet (every interval, the reference's too) and the figure.
    Arguments: methods (the analysis's), privacy, tuning_mode."""
    from ..analysis.plotting import inference_figure  # matplotlib: here, not in the compute jobs

    analysis = datasets.get(job.dataset)
    records = [read_json(p) for p in job.input["plans"]]
    reference = pd.read_parquet(job.input["reference"])
    tables = [pd.read_parquet(t) for t in job.input["tables"]]
    # an analysis none of whose methods has a procedure still gets the reference and a row per method saying why
    per_rep = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=iv.TIDY)
    registry = methods_of(analysis.family)
    why = iv.why_not(job.args["methods"], {k: m.private for k, m in registry.items()}, [r["method"] for r in records])
    for r in records:
        if not r["plans"]:
            why[r["method"]] = r["why"] or "every m refused: " + iv.refused_text(r)
        elif r["refused"]:
            why[r["method"]] = "no interval at " + iv.refused_text(r)
    privacy = {(r["method"], p["m"]): (p["epsilon"], p["delta"]) for r in records for p in r["plans"]}
    summary = iv.summarize(per_rep, reference, why=why, privacy=privacy)
    write_table_atomic(job.output["table"], pd.concat([reference, per_rep], ignore_index=True))
    summary.to_csv(job.output["csv"], index=False, float_format="%.6g")
    p = job.privacy()
    inference_figure(
        summary,
        [job.output["png"], job.output["pdf"]],
        title=analysis.title.split(":")[0] + ": private confidence intervals",
        xlabel=analysis.xlabel,
        epsilon=p.epsilon,
        delta=p.delta,
        calibration=p.calibration,
        tuning=job.args["tuning_mode"],
    )
