"""The job of workflow/rules/attack.smk: the table and figure of an analysis's score attack (docs/methods.md, "Score
attacks"), from the statistics each estimate job scored on its first releases (:mod:`dpcost.jobs.estimate`)."""

from __future__ import annotations

import pandas as pd

from ..analysis import datasets
from ..analysis.attack import summarise_attack
from ..analysis.targeted import exposure_note
from ..estimators.registry import methods_of
from . import Job


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
    summary = pd.concat(
        [
            summarise_attack(pd.read_parquet(t), privacy=privacy, private=private, alpha=job.args["alpha"])
            for t in job.input["tables"]
        ],
        ignore_index=True,
    )
    summary.to_csv(job.output["csv"], index=False, float_format="%.6g")
    shown = headline(pd.read_csv(job.input["summary"]))
    targeted = job.input.get("targeted")  # what the targeted attack sees, said in the caption (regression only)
    note = exposure_note(pd.read_csv(targeted)) if targeted else None
    attack_figure(
        summary[summary.method.isin(shown)],
        [job.output["png"], job.output["pdf"]],
        title=analysis.title.split(":")[0] + ": score attack on the released estimates",
        xlabel=analysis.xlabel,
        epsilon=privacy.epsilon,
        delta=privacy.delta,
        calibration=privacy.calibration,
        tuning=job.args["tuning_mode"],
        targeted=note,
    )
