"""Write the privacy ledger of one dataset's results from the plans its estimate jobs used."""

import json
import logging

from dpcost.analysis import datasets
from dpcost.analysis.checks import delta_notes
from dpcost.analysis.ledger import build_ledger
from dpcost.data.prepare import preprocessing_notes
from dpcost.dp.spec import Privacy
from dpcost.scripting import run, write_json_atomic


def main(dataset, plan_files, meta_file, privacy, m_grid, out):
    records = [json.loads(open(p).read()) for p in plan_files]
    meta = json.loads(open(meta_file).read())
    notes = delta_notes(Privacy(**privacy), m_grid)
    for note in notes:  # once per run, here, rather than at every parse of the workflow
        logging.getLogger("ledger").warning("%s: %s", dataset, note)
    ledger = build_ledger(
        dataset=dataset,
        records=records,
        privacy=privacy,
        not_private=[*preprocessing_notes(meta), *datasets.get(dataset).not_private],
        notes=notes,
        d_public=(meta.get("schema") or {}).get("d_public", True),
    )
    write_json_atomic(out, ledger)


p = snakemake.params
run(
    lambda: main(
        snakemake.wildcards.dataset,
        list(snakemake.input.plans),
        snakemake.input.meta,
        dict(p.privacy),
        list(p.m),
        snakemake.output[0],
    ),
    snakemake.log[0],
    "ledger",
)
