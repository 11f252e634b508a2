"""The jobs of workflow/rules/targeted.smk: one method's targeted attacks on a regression analysis — informed
reconstruction and the LiRA-style membership test per m and target row — then the analysis's targeted.csv and
figure (:mod:`dpcost.analysis.targeted`; docs/methods.md, "Targeted attacks")."""

from __future__ import annotations

import logging
import time

import pandas as pd

from ..analysis import targeted as tg
from . import Job, write_table_atomic
from .estimate import tuned

log = logging.getLogger("targeted")


def targeted_method(job: Job) -> None:
    """One method's rows (``output.table``, :data:`~dpcost.analysis.targeted.COLUMNS`). Arguments: those of the
    estimate job and the ``targeted`` block's (:func:`~dpcost.analysis.targeted.options`). The constants are the
    tune job's at each m; under tuning_mode private there are none to attack with, and the table is empty."""
    a = job.args
    t = tuned(job, a["m"])
    analysis, method, by_m = t.analysis, t.method, t.by_m
    if by_m is None:
        log.warning("%s: tuning_mode private chooses constants inside every release: not attacked", job.method)
        write_table_atomic(job.output["table"], pd.DataFrame(columns=tg.COLUMNS))
        return
    if a.get("left_out"):
        log.info("%s: %s", job.method, a["left_out"])
    design = analysis.load(job.data(), dict(a["params"]))
    # the attack reads (1, x): the design is dropped once that is made, so a big table is in memory once, not twice
    Xi, y = tg.with_intercept(design.X), design.y
    del design
    t0 = time.perf_counter()
    keys = ("seed", "targeted_m", "k_top", "k_random", "shadows", "test_releases", "reconstruction_nfev", "alpha")
    table = tg.run_targeted(
        Xi,
        y,
        method,
        tuning_by_m=by_m,
        params=dict(a["params"]),
        privacy=job.privacy(),
        dataset=job.dataset,
        **{k: a[k] for k in keys},
    )
    log.info("%s: %d targets x m in %.2f s", job.method, len(table), time.perf_counter() - t0)
    write_table_atomic(job.output["table"], table)


def targeted(job: Job) -> None:
    """targeted.csv (every method's rows) and the figure of the top-leverage rows. Arguments: privacy."""
    from ..analysis import datasets
    from ..analysis.plotting import targeted_figure  # matplotlib: here, not in the compute jobs

    tables = [pd.read_parquet(p) for p in job.input["tables"]]
    table = pd.concat([t for t in tables if len(t)], ignore_index=True) if any(len(t) for t in tables) else tables[0]
    table.to_csv(job.output["csv"], index=False, float_format="%.6g")
    p = job.privacy()
    title = datasets.get(job.dataset).title.split(":")[0] + ": can an attacker tell whether one row was used?"
    targeted_figure(table, [job.output["png"], job.output["pdf"]], title=title, epsilon=p.epsilon, delta=str(p.delta))
