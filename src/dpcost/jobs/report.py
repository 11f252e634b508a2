"""The jobs of workflow/rules/report.smk: the pages of ``snakemake --report`` (:mod:`dpcost.analysis.report`). Per
analysis, its headline (error curves and the table of the largest m, shown on the report's first page) and every
table and record as HTML beside its raw file; the benchmark's likewise."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..analysis import datasets
from ..analysis import report as pages
from . import Job, read_json, write_text_atomic


def _csv(path: str) -> pd.DataFrame:
    # empty cells stay missing; a text column such as epsilon_needed's "not reached" stays text
    return pd.read_csv(path)


def _view(job: Job, name: str, title: str, body: str) -> None:
    write_text_atomic(job.output[name], pages.page(title, body))


def report_analysis(job: Job) -> None:
    """The headline fragment of one analysis (``output.headline``) and its summary, score-attack, ledger and
    provenance pages."""
    from ..analysis.plotting import HEADLINE_NOTE, headline, method_label

    analysis, ds = datasets.get(job.dataset), job.dataset
    summary = _csv(job.input["summary"])
    shown = headline(summary)
    labels = {k: method_label(k) for k in shown}
    note = (
        f"{HEADLINE_NOTE} Every method at every m: the summary table under {ds} in the menu, beside "
        "the raw files (summary.csv, …)."
    )
    fragment = pages.headline(
        analysis.title, summary, Path(job.input["figure"]).read_bytes(), methods=shown, labels=labels, note=note
    )
    write_text_atomic(job.output["headline"], fragment)
    _view(job, "summary", f"{ds}: summary per method and m (summary.csv)", pages.table(summary))
    _view(job, "attack", f"{ds}: score attack (attack.csv)", pages.table(_csv(job.input["attack"])))
    _view(job, "ledger", f"{ds}: privacy ledger (privacy_ledger.json)", pages.ledger(read_json(job.input["ledger"])))
    _view(
        job,
        "provenance",
        f"{ds}: provenance and preprocessing (preprocessing.json)",
        pages.provenance(read_json(job.input["meta"])),
    )


def report_comparison(job: Job) -> None:
    """The comparison with the best DP method and the peers, as a page."""
    _view(job, "table", f"{job.dataset}: comparison (comparison.csv)", pages.table(_csv(job.input["table"])))


def report_map(job: Job) -> None:
    """The ε needed and the privacy-utility map's grid, as a page."""
    body = pages.privacy_map(_csv(job.input["needed"]), _csv(job.input["ratios"]))
    _view(job, "map", f"{job.dataset}: the ε needed and the privacy-utility map", body)


def report_inference(job: Job) -> None:
    """The private confidence intervals of one analysis as a page: the figure, the table per method and m (pooled over
    the coefficients), then inference.csv as it is."""
    from ..analysis.intervals import pooled, verdict

    summary = _csv(job.input["csv"])
    text = (
        verdict(summary) + " Per method and m: the coverage of the full-data OLS coefficient (mean over the "
        "coefficients; min_coverage the lowest), the median width over the superpopulation OLS (HC3) interval's "
        "(width_ratio_super, the figure's) and over the one with the finite-population correction "
        "(width_ratio), and the share of repetitions whose interval excludes 0 (power) beside OLS's (ols_power). "
        "Methods without a procedure: the rows of the last table that say why."
    )
    body = pages.figure_and_table(
        "Private confidence intervals", Path(job.input["figure"]).read_bytes(), pooled(summary), text
    )
    body += "<h2>Every coefficient (inference.csv)</h2>\n" + pages.table(summary)
    _view(job, "page", f"{job.dataset}: private confidence intervals (inference.csv)", body)


def report_targeted(job: Job) -> None:
    """The targeted attacks of one analysis as a page: the figure, then targeted.csv as it is."""
    text = (
        "Per method, m and target row (the rows of highest leverage, then random rows): the LiRA-style test's AUC "
        "± s.e., TPR at FPR 0.1 % and 1 %, the ε lower bound, the (ε, δ)-DP ceilings and whether the private "
        "release stays within them, and the informed adversary's relative error in reconstructing the row "
        "(OLS: closed form; private: the matching attack). Every method is fitted with an intercept "
        "column. Above 65,536 rows a shadow subsample is 128 blocks of one random partition of the rows "
        "(cluster sampling; the jobs' logs say where), below a uniform subsample."
    )
    body = pages.figure_and_table(
        "Targeted attacks", Path(job.input["figure"]).read_bytes(), _csv(job.input["csv"]), text
    )
    _view(job, "page", f"{job.dataset}: targeted attacks (targeted.csv)", body)


def report_benchmark_inference(job: Job) -> None:
    """The benchmark's private confidence intervals (inference.csv) as a page."""
    text = (
        "Per data set, method, ε and m: the coverage of the training rows' OLS coefficient (mean over the "
        "coefficients; min_coverage the lowest), the median width over the superpopulation OLS (HC3) interval's "
        "(width_ratio_super) and over the one with the finite-population correction (width_ratio), and the "
        "share of repetitions excluding 0 beside OLS's."
    )
    body = f"<p>{text}</p>\n" + pages.table(_csv(job.input["csv"]))
    _view(job, "page", "benchmark: private confidence intervals (inference.csv)", body)


def report_benchmark(job: Job) -> None:
    """The benchmark's headline fragment (its figure and wins) and its summary and wins pages."""
    summary, wins = _csv(job.input["summary"]), _csv(job.input["wins"])
    text = (
        "Per private method and ε, at each data set's largest m: on how many data sets it is the best private "
        "method, within 2× of OLS, and has held-out R² > 0 (wins.csv; every cell: the benchmark's "
        "summary)."
    )
    fragment = pages.figure_and_table("The real-data benchmark", Path(job.input["figure"]).read_bytes(), wins, text)
    write_text_atomic(job.output["headline"], fragment)
    _view(job, "summary", "benchmark: summary per data set, method, ε and m (summary.csv)", pages.table(summary))
    _view(job, "wins", "benchmark: wins per method and ε (wins.csv)", pages.table(wins))
