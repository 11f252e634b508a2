"""The jobs of workflow/rules/simulation.smk: the simulation study (Cai, Wang & Zhang 2021, §5) — one job per
(experiment, n, run of repetitions), one collecting job, one job per figure."""

from __future__ import annotations

import logging

import pandas as pd

from ..dp.delta import resolve_delta
from ..dp.privacy import Privacy
from ..estimators.registry import METHODS
from ..simulation import rates as rates_mod
from ..simulation.experiments import SimulationStudy
from ..simulation.run import run_job
from . import Job, read_json, write_json_atomic, write_table_atomic

log = logging.getLogger("simulation")


def simulate(job: Job) -> None:
    """Repetitions first … last (wildcards) of one (experiment, n): its tidy table and plans (the plans only if first
    is 0: :func:`~dpcost.simulation.run.run_job`). Arguments: block (the simulation block), calibration,
    on_invalid, sampler, seed."""
    a, w = job.args, job.wildcards
    study = SimulationStudy.from_config(a["block"])
    experiment, n, first, last = w["experiment"], int(w["n"]), int(w["first"]), int(w["last"])
    exp = study.experiments[experiment]
    privacy = Privacy(
        a["block"]["privacy"]["epsilon"],
        a["block"]["privacy"]["delta"],
        a["calibration"],
        a["on_invalid"],
        sampler=a["sampler"],
    )
    log.info(
        "%s n=%d: problem %s, d=%s, %d curves, repetitions %d-%d of %d",
        experiment,
        n,
        exp.problem,
        exp.dims(n)[0],
        len(exp.curves),
        first,
        last,
        exp.reps,
    )
    table, plans = run_job(
        exp,
        n,
        design=study.design,
        tuning=study.tuning,
        privacy=privacy,
        theory_R=study.theory_R,
        quantile_share=study.quantile_share,
        quantile_grid=study.quantile_grid,
        seed=a["seed"],
        s_tuning=study.s_tuning,
        reps=range(first, last + 1),
    )
    write_table_atomic(job.output["table"], table)
    write_json_atomic(job.output["plans"], {"experiment": experiment, "n": n, "reps": [first, last], "plans": plans})


def simulation_aggregate(job: Job) -> None:
    """errors.parquet, summary.csv, rates.csv and the privacy ledger of the study. Arguments: block."""
    from ..simulation import report  # imported here: matplotlib (~0.45 s) is not for the simulate jobs

    block = job.args["block"]
    study = SimulationStudy.from_config(block)
    errors = pd.concat([pd.read_parquet(t) for t in job.input["tables"]], ignore_index=True)
    summary = report.summarize(errors)
    p = block["privacy"]
    table = rates_mod.rates_table(
        summary,
        sigma=study.design.sigma,
        epsilon=float(p["epsilon"]),
        delta_at=lambda n: resolve_delta(p["delta"], int(n)),
    )
    records = []
    for path in job.input["plans"]:
        run = read_json(path)
        records += [{"experiment": run["experiment"], "n": run["n"], **r} for r in run["plans"]]
    out = job.output
    write_table_atomic(out["errors"], errors)
    write_table_atomic(out["summary"], summary)
    write_table_atomic(out["rates"], table)
    write_json_atomic(out["ledger"], report.ledger(records, quantile_share=study.quantile_share))
    log.info("%d rows, %d curves; rates fitted", len(errors), len(table.groupby(["experiment", "method", "variant"])))


def simulation_plot(job: Job) -> None:
    """One figure (wildcard number), PNG and PDF; its caption carries ε, δ, the calibration, the tuning (fixed:
    simulation.tuning) and the repetitions. Arguments: privacy, calibration, deltas (the δ of every experiment that
    has its own, named in its panel's title)."""
    from ..analysis.plotting import caption, repetitions
    from ..simulation import report

    number = int(job.wildcards["number"])
    table = pd.read_csv(job.input["summary"], keep_default_na=True, dtype={"variant": "string"})
    table = table.fillna({"variant": ""})
    eps = sorted(table.loc[table.figure == number, "epsilon"].dropna().unique())
    eps_text = f"{eps[0]:g}" if len(eps) == 1 else "{" + ", ".join(f"{e:g}" for e in eps) + "} (as labelled)"
    privacy = job.args["privacy"]
    how = caption(
        epsilon=eps_text if eps else privacy["epsilon"],
        delta=privacy["delta"],
        calibration=job.args["calibration"],
        tuning="fixed",
        reps=repetitions(table.loc[table.figure == number, "n_reps"]),
    )
    title = f"Simulation, Figure {number}: {report.FIGURE_TEXT.get(number, 'error against n')}"
    labels = {k: m.label for k, m in METHODS.items()}
    report.figure(
        table,
        pd.read_csv(job.input["rates"]).fillna({"variant": ""}),
        number,
        [job.output["png"], job.output["pdf"]],
        title=title,
        labels=labels,
        deltas=dict(job.args["deltas"]),
        caption=[how + " Mean over repetitions, bands 5–95 %; constants: simulation.tuning."],
    )
