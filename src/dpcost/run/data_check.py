"""The preparation of every downloaded table a run's targets read, checked at start-up against the table itself.

Why here and not only in the job: Snakemake deletes a job's outputs before it reruns the job. An edit that makes a
table's preparation fail (``m`` above its rows, a column it lacks, a level it does not hold, ``log`` of a column with
zeros) would otherwise be found by ``preprocess_table`` after its finished outputs were gone, and with the old config
restored every job of the analysis would run again. Here the same function the job runs
(:func:`dpcost.data.prepare.prepare_file`, with the same arguments) runs first, on the downloaded
table, and its one-line error stops the run before any job: nothing is deleted.

Cost: one read of the used columns and one preparation per downloaded table the targets read, at every start that
runs jobs or plans them (a dry run): 1.3 s for a 337k-row, 20-column table (2 cores, Intel Xeon), well under a
second for the tables the defaults read. A table not yet downloaded is left to its jobs (nothing of it can be lost).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..analysis.streams import rng_for
from ..config import RunConfig
from ..data.prepare import prepare_file
from ..errors import ConfigError, DPCostError


def raw_table(run: RunConfig, name: str) -> Path:
    """Where the download of table ``name`` puts its raw table (workflow/rules/download.smk)."""
    return Path("resources") / run.data_of(name) / "raw.parquet"


def check_preparations(run: RunConfig, targets: Sequence[str]) -> list[str]:
    """Prepare every ``kind: table`` analysis the ``targets`` read whose table is downloaded, as its
    ``preprocess_table`` job would (:func:`dpcost.jobs.preprocess.preprocess_table`); the first that fails raises a
    :class:`~dpcost.errors.ConfigError` whose one line is prepare's (it names the key) and says that nothing ran.
    Returns the tables checked."""
    checked = []
    for name in run.analyses_of(targets):
        path = raw_table(run, name)
        if name not in run.tables or not path.is_file():
            continue
        try:
            prepare_file(str(path), run.preparation(name), name=name, max_m=max(run.config[name]["m"]),
                         rng=rng_for(run.config["seed"], name, "test split"))  # fmt: skip
        except DPCostError as exc:
            raise ConfigError(f"{exc} (checked at start-up against {path}, before any job ran: nothing was deleted)"
                              ) from None  # fmt: skip
        checked.append(name)
    return checked
