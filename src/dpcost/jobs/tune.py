"""The jobs of workflow/rules/tune.smk: the constants each method runs with at every m (tuning mode fixed, decoy or
private; :mod:`dpcost.analysis.tuning`), and the parts of a split decoy search."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..analysis import datasets
from ..analysis import tuning as tuning_mod
from ..errors import DPCostError
from ..estimators.registry import methods_of
from . import Job, write_json_atomic


def _setup(job: Job):
    """(analysis, method, tuning spec) of a job whose arguments are spec, params, m, seed, privacy
    (:func:`dpcost.run.args.tune`)."""
    analysis = datasets.get(job.dataset)
    return analysis, methods_of(analysis.family)[job.method], tuning_mod.TuningSpec(**job.args["spec"])


def tune(job: Job) -> None:
    """One (dataset, method): the constants of every m to ``output.record`` and every candidate's decoy score (decoy
    mode; an empty table otherwise) to ``output.table``. With ``input.parts`` (a split job: the files of
    :func:`tune_part` over consecutive parts of the m grid) it chooses from theirs instead of searching."""
    analysis, method, spec = _setup(job)
    a = job.args
    errors = [read_part(path) for path in job.input.get("parts", [])]
    held = [m for ms, _ in errors for m in ms]
    if errors and held != list(a["m"]):
        raise DPCostError(f"tune {job.dataset}/{job.method}: its parts hold m = {held}, not the m grid {list(a['m'])}")
    record = tuning_mod.tune(
        analysis,
        method,
        job.data(),
        spec,
        params=dict(a["params"]),
        m_grid=a["m"],
        seed=a["seed"],
        privacy=job.privacy(),
        parts=[e for _, e in errors],
    )
    record.pop("table").to_csv(job.output["table"], index=False)
    write_json_atomic(job.output["record"], record)


def tune_part(job: Job) -> None:
    """One part of a split tune job: every candidate's decoy errors at the m of ``args["part"]`` to ``output.errors``
    (.npz; none when the method's tuning makes no decoy search), for :func:`tune` to merge."""
    analysis, method, spec = _setup(job)
    a, part = job.args, list(job.args["part"])
    errors = tuning_mod.decoy_part(
        analysis,
        method,
        job.data(),
        spec,
        params=dict(a["params"]),
        m_grid=a["m"],
        part=part,
        seed=a["seed"],
        privacy=job.privacy(),
    )
    out = Path(job.output["errors"])
    tmp = out.with_name(out.name + ".tmp.npz")
    np.savez(tmp, m=np.asarray(part, dtype=np.int64), **{f"candidate{c}": e for c, e in errors.items()})
    os.replace(tmp, out)


def read_part(path: str) -> tuple[list[int], dict]:
    """(the m of a tune part, {candidate: its decoy errors}) from a :func:`tune_part` file."""
    with np.load(path) as f:
        errors = {int(k.removeprefix("candidate")): f[k] for k in f.files if k.startswith("candidate")}
        return [int(m) for m in f["m"]], dict(sorted(errors.items()))
