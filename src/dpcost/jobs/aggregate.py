"""The jobs of workflow/rules/aggregate.smk, per analysis: the tidy errors and their summary, the error-curve
figures, the privacy ledger, the comparison table, and the run's configuration snapshot."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from ..analysis import datasets
from ..analysis.checks import delta_notes
from ..analysis.intervals import ledger_entry
from ..analysis.ledger import build_ledger, method_entry
from ..analysis.summaries import annotate, summarize
from ..analysis.summaries import compare as compare_table
from ..data.prepare import preprocessing_notes
from ..estimators.peers import available
from ..estimators.registry import methods_of
from . import Job, read_json, write_json_atomic


def _d_public(meta: dict) -> bool:
    """Whether the analysis's dimension is public (False for a table whose categorical levels were read from it)."""
    return (meta.get("schema") or {}).get("d_public", True)


def aggregate(job: Job) -> None:
    """The per-method tables concatenated (``output.errors``) and summarized per (method, m), each row with its
    privacy setting and, from the preprocessing record's ``truth_sampling_variance``, the superpopulation RMSE that
    every cost is a ratio of (``output.summary``). Arguments: privacy, tuning_mode."""
    errors = pd.concat([pd.read_parquet(p) for p in job.input["tables"]], ignore_index=True)
    errors = errors.sort_values(["method", "m", "rep"], kind="stable").reset_index(drop=True)
    errors.to_parquet(job.output["errors"], index=False)
    private = {k: m.private for k, m in methods_of(datasets.get(job.dataset).family).items()}
    # the ledger's verdict, from the same plans files: unproven calibrations and floating-point noise are not proven
    proven, modes = {}, {}
    for path in job.input["plans"]:
        record = read_json(path)
        proven[record["method"]] = method_entry(record)["private"]
        # the mode each method ran under: a tuning-free one runs as "none" whatever the analysis's mode
        modes[record["method"]] = record.get("tuning", {}).get("mode", job.args["tuning_mode"])
    meta = read_json(job.input["meta"])
    summary = annotate(
        summarize(errors, meta.get("truth_sampling_variance")),
        privacy=job.privacy(),
        private=private,
        proven=proven,
        tuning_mode=modes,
        d_public=_d_public(meta),
    )
    summary.to_csv(job.output["summary"], index=False, float_format="%.6g")


def plot(job: Job) -> None:
    """Log-log error curves, one per method with its 5–95 % band, and the error of the trivial estimate 0: the
    headline methods (at most 8 curves, the caption says why these) in one figure, the full field in a second as
    small multiples; a curve whose mean is pulled up by a few repetitions is named in the caption. With held-out R² in
    the summary (``r2_mean``) an R² panel draws it; a method that abstained in at least half of the repetitions at
    some m (``abstain_rate``) is marked. Arguments: privacy (the analysis's, as each of its jobs reads it),
    tuning_mode."""
    from ..analysis.plotting import HEADLINE_NOTE, error_curves, headline, heavy_tails, tuning_text

    analysis = datasets.get(job.dataset)
    truth = read_json(job.input["meta"])["truth"]
    summary = pd.read_csv(job.input["summary"])
    # a method that ran under another mode than the analysis's (a tuning-free one runs as "none") is counted
    modes = summary[summary.private].groupby("method").tuning_mode.first() if "tuning_mode" in summary else {}
    tuning = tuning_text(job.args["tuning_mode"], modes)
    privacy = job.args["privacy"]
    kw = dict(
        xlabel=analysis.xlabel,
        ylabel=analysis.ylabel,
        epsilon=privacy["epsilon"],
        delta=privacy["delta"],
        calibration=privacy["calibration"],
        tuning=tuning,
        reference=(float(np.linalg.norm(list(truth.values()))), analysis.reference_label),
    )
    shown = summary[summary.method.isin(headline(summary))]
    notes = [HEADLINE_NOTE, heavy_tails(shown)]
    out = job.output
    error_curves(shown, [out["png"], out["pdf"]], title=analysis.title, note="; ".join(n for n in notes if n), **kw)
    error_curves(
        summary,
        [out["png_all"], out["pdf_all"]],
        title=analysis.title + " — every method",
        note=heavy_tails(summary),
        **kw,
    )


def ledger(job: Job) -> None:
    """The privacy ledger of one analysis's results (:func:`~dpcost.analysis.ledger.build_ledger`) from the plans its
    estimate jobs used and its preprocessing record. Arguments: privacy, m. The δ ≥ 1/m warnings are logged here,
    once per run, rather than at every parse of the workflow."""
    privacy = job.privacy()
    meta = read_json(job.input["meta"])
    notes = delta_notes(privacy, job.args["m"])
    for note in notes:
        logging.getLogger("ledger").warning("%s: %s", job.dataset, note)
    record = build_ledger(
        dataset=job.dataset,
        records=[read_json(p) for p in job.input["plans"]],
        privacy=privacy.to_dict(),
        notes=notes,
        d_public=_d_public(meta),
        not_private=[*preprocessing_notes(meta), *datasets.get(job.dataset).not_private],
    )
    if job.input.get("intervals"):  # the private intervals' own releases, and the table's composition with them
        record["intervals"] = ledger_entry(
            [read_json(p) for p in job.input["plans"]], [read_json(p) for p in job.input["intervals"]]
        )
    write_json_atomic(job.output["ledger"], record)


def compare(job: Job) -> None:
    """Every method's superpopulation RMSE relative to the best DP method of ours (peers excluded, abstaining methods
    excluded) and to the references, per m. Arguments: peers (the analysis's peers mode, named where a peer's column
    is empty)."""
    registry = methods_of(datasets.get(job.dataset).family)
    ours = [k for k, m in registry.items() if m.private and not m.peer]
    usable = available()
    # why a peer's column can be empty: said in the table's note column and in this job's log, never silently
    missing = {
        k: "not installed: pip install -e '.[peers]'"
        if not usable[m.peer]
        else f"{job.dataset}.peers is '{job.args['peers']}'"
        for k, m in registry.items()
        if m.peer
    }
    table = compare_table(pd.read_csv(job.input["summary"]), ours, missing=missing)
    for note in table.loc[table["note"] != "", "note"].unique():
        logging.getLogger("compare").warning("%s", note)
    table.to_csv(job.output["table"], index=False, float_format="%.6g")


def config_snapshot(job: Job) -> None:
    """The merged, validated configuration of this run (the job's ``config``; its params hold only its sha256,
    ``args["config_sha256"]``), next to its results."""
    import yaml

    with open(job.output["config"], "w") as fh:
        yaml.safe_dump(dict(job.config), fh, sort_keys=False, allow_unicode=True)
