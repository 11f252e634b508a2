"""The jobs of workflow/rules/attack.smk: the score attack on one method's releases (repetitions 0 … attack.reps − 1
of its error curve, re-created exactly), then the table and figure of the analysis (docs/methods.md, "Score
attacks")."""

from __future__ import annotations

import logging
import time

import pandas as pd

from ..analysis import datasets
from ..analysis.attack import run_attack, summarise_attack
from ..analysis.targeted import exposure_note
from ..estimators.registry import methods_of
from . import Job
from .estimate import tuned


def attack_method(job: Job) -> None:
    """Every candidate's statistic to ``output.table``. Arguments: those of the estimate job, the attack's
    repetitions (reps) and its cap on members and non-members per repetition (cap)."""
    a = job.args
    analysis, _, _, runner, tuning, by_m = tuned(job, a["m"])
    t0 = time.perf_counter()
    table = run_attack(analysis.load(job.data(), dict(a["params"])), runner, tuning=tuning, tuning_by_m=by_m,
                       params=dict(a["params"]), m_grid=a["m"], reps=a["reps"], seed=a["seed"], privacy=job.privacy(),
                       dataset=job.dataset, cap=a["cap"])  # fmt: skip
    logging.getLogger("attack").info("%s: %d statistics in %.2f s", job.method, len(table), time.perf_counter() - t0)
    table.to_parquet(job.output["table"], index=False)


def attack(job: Job) -> None:
    """attack.csv (one row per method and m, :func:`~dpcost.analysis.attack.summarise_attack`) and the figure of the
    headline methods of the error curves (``input.summary``: the summary.csv they are chosen from). Arguments:
    privacy, alpha, tuning_mode (named in the caption); ``input.targeted``, when the analysis has targeted
    attacks, tells the caption what they see."""
    from ..analysis.plotting import attack_figure, headline  # matplotlib: here, not in the compute jobs

    analysis = datasets.get(job.dataset)
    privacy = job.privacy()
    private = {k: m.private for k, m in methods_of(analysis.family).items()}
    # one method's statistics at a time: all of housing's at once (6 million rows) took 1 GB
    summary = pd.concat([summarise_attack(pd.read_parquet(t), privacy=privacy, private=private, alpha=job.args["alpha"])
                         for t in job.input["tables"]], ignore_index=True)  # fmt: skip
    summary.to_csv(job.output["csv"], index=False, float_format="%.6g")
    shown = headline(pd.read_csv(job.input["summary"]))
    targeted = job.input.get("targeted")  # what the targeted attack sees, said in the caption (regression only)
    note = exposure_note(pd.read_csv(targeted)) if targeted else None
    attack_figure(summary[summary.method.isin(shown)], [job.output["png"], job.output["pdf"]],
                  title=analysis.title.split(":")[0] + ": score attack on the released estimates",
                  xlabel=analysis.xlabel, epsilon=privacy.epsilon, delta=privacy.delta,
                  calibration=privacy.calibration, tuning=job.args["tuning_mode"], targeted=note)  # fmt: skip
