"""Bodies of the simulation rules' thin scripts (plain arguments in, files out, written whole or not at all)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence

import pandas as pd

from ..dp.delta import resolve_delta
from ..estimators.registry import METHODS
from ..scripting import privacy_spec, write_json_atomic, write_table_atomic
from . import rates as rates_mod
from .experiments import SimulationSpec
from .run import run_job

log = logging.getLogger(__name__)


def simulate_job(block: Mapping, *, experiment: str, n: int, calibration: str, on_invalid: str, sampler: str,
                 seed: int, out_table: str, out_plans: str, first: int = 0,
                 last: int | None = None) -> None:  # fmt: skip
    """Repetitions ``first`` … ``last`` (inclusive; default all) of one (experiment, n): one job of
    :meth:`SimulationSpec.jobs`. Its plans file lists plans only if ``first`` is 0 (:func:`run_job`)."""
    spec = SimulationSpec.from_config(block)
    exp = spec.experiments[experiment]
    last = exp.reps - 1 if last is None else last
    privacy = privacy_spec(block["privacy"], calibration, on_invalid, sampler)
    log.info("%s n=%d: problem %s, d=%s, %d curves, repetitions %d-%d of %d", experiment, n, exp.problem,
             exp.dims(n)[0], len(exp.curves), first, last, exp.reps)  # fmt: skip
    table, plans = run_job(exp, n, design=spec.design, tuning=spec.tuning, privacy=privacy, theory_R=spec.theory_R,
                           quantile_share=spec.quantile_share, quantile_grid=spec.quantile_grid, seed=seed,
                           s_tuning=spec.s_tuning, reps=range(first, last + 1))  # fmt: skip
    write_table_atomic(out_table, table)
    write_json_atomic(out_plans, {"experiment": experiment, "n": n, "reps": [first, last], "plans": plans})


def aggregate_job(block: Mapping, *, tables: Sequence[str], plans: Sequence[str], out_errors: str, out_summary: str,
                  out_rates: str, out_ledger: str) -> None:  # fmt: skip
    from . import report  # imported here: matplotlib (~0.45 s) is not for the simulate jobs

    spec = SimulationSpec.from_config(block)
    errors = pd.concat([pd.read_parquet(t) for t in tables], ignore_index=True)
    summary = report.summarize(errors)
    p = block["privacy"]
    table = rates_mod.rates_table(summary, sigma=spec.design.sigma, epsilon=float(p["epsilon"]),
                                  delta_at=lambda n: resolve_delta(p["delta"], int(n)))  # fmt: skip
    records = []
    for path in plans:
        with open(path) as fh:
            job = json.load(fh)
        records += [{"experiment": job["experiment"], "n": job["n"], **r} for r in job["plans"]]
    write_table_atomic(out_errors, errors)
    write_table_atomic(out_summary, summary)
    write_table_atomic(out_rates, table)
    write_json_atomic(out_ledger, report.ledger(records, quantile_share=spec.quantile_share))
    log.info("%d rows, %d curves; rates fitted", len(errors), len(table.groupby(["experiment", "method", "variant"])))


def plot_job(*, summary: str, rates: str, number: int, paths: Sequence[str], privacy: Mapping, calibration: str,
             deltas: Mapping | None = None) -> None:  # fmt: skip
    """Figure ``number``; its title carries ε, δ, the calibration, the tuning (fixed: ``simulation.tuning``) and the
    repetitions; ``deltas``: the δ of every experiment that has its own (named in its panel's title)."""
    from ..analysis.plotting import caption, repetitions
    from . import report

    table = pd.read_csv(summary, keep_default_na=True, dtype={"variant": "string"}).fillna({"variant": ""})
    eps = sorted(table.loc[table.figure == number, "epsilon"].dropna().unique())
    eps_text = f"{eps[0]:g}" if len(eps) == 1 else "{" + ", ".join(f"{e:g}" for e in eps) + "} (as labelled)"
    how = caption(epsilon=eps_text if eps else privacy["epsilon"], delta=privacy["delta"], calibration=calibration,
                  tuning="fixed", reps=repetitions(table.loc[table.figure == number, "n_reps"]))  # fmt: skip
    title = f"Simulation, Figure {number}: {how} (mean over repetitions; constants: simulation.tuning)"
    labels = {k: m.label for k, m in METHODS.items()}
    report.figure(table, pd.read_csv(rates).fillna({"variant": ""}), number, paths, title=title, labels=labels,
                  deltas=deltas)  # fmt: skip
