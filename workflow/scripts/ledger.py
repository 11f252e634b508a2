"""Write the privacy ledger of one dataset's results: what every method claims, and what is not private."""

import json

from dpcost.experiment import MEAN_METHODS, REGRESSION_METHODS
from dpcost.ledger import build_ledger
from dpcost.scripting import run


def main():
    p = snakemake.params
    dataset = snakemake.wildcards.dataset
    registry = REGRESSION_METHODS if dataset == "housing" else MEAN_METHODS
    meta = json.loads(open(snakemake.input.meta).read())
    ledger = build_ledger(
        dataset=dataset,
        methods={name: registry[name] for name in p.methods},
        tuning=dict(p.tuning),
        m_grid=list(p.m),
        epsilon=p.privacy["epsilon"],
        delta=p.privacy["delta"],
        calibration=p.calibration,
        on_invalid=p.on_invalid,
        not_private=[meta["privacy_note"], *p.data_derived],
        extra_params=dict(p.extra),
    )
    with open(snakemake.output[0], "w") as fh:
        json.dump(ledger, fh, indent=1)


run(main, snakemake.log[0], "ledger")
